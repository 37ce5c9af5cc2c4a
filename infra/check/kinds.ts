// What the apiserver's REST mapping would tell about a manifest's kind: its resource (the plural
// the webhook rules name) and whether it lives in a namespace. Offline there is no discovery, so
// the built-in kinds are listed and any other kind (a custom resource) is guessed as kubectl's
// meta.UnsafeGuessKindToResource does, namespaced when its manifest names a namespace.

const NAMESPACED: Readonly<Record<string, readonly string[]>> = {
  '': [
    'Pod',
    'Service',
    'ConfigMap',
    'Secret',
    'PersistentVolumeClaim',
    'ReplicationController',
    'ServiceAccount',
    'Endpoints',
    'Event',
    'LimitRange',
    'ResourceQuota',
    'PodTemplate',
    'Binding',
  ],
  apps: ['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ControllerRevision'],
  batch: ['Job', 'CronJob'],
  'networking.k8s.io': ['Ingress', 'NetworkPolicy'],
  policy: ['PodDisruptionBudget'],
  autoscaling: ['HorizontalPodAutoscaler'],
  'rbac.authorization.k8s.io': ['Role', 'RoleBinding'],
  'coordination.k8s.io': ['Lease'],
  'discovery.k8s.io': ['EndpointSlice'],
  'events.k8s.io': ['Event'],
};

const CLUSTER: Readonly<Record<string, readonly string[]>> = {
  '': ['Namespace', 'Node', 'PersistentVolume'],
  'networking.k8s.io': ['IngressClass'],
  'storage.k8s.io': ['StorageClass', 'CSIDriver', 'CSINode', 'VolumeAttachment'],
  'scheduling.k8s.io': ['PriorityClass'],
  'node.k8s.io': ['RuntimeClass'],
  'rbac.authorization.k8s.io': ['ClusterRole', 'ClusterRoleBinding'],
  'certificates.k8s.io': ['CertificateSigningRequest'],
  'admissionregistration.k8s.io': [
    'MutatingWebhookConfiguration',
    'ValidatingWebhookConfiguration',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ],
  'apiextensions.k8s.io': ['CustomResourceDefinition'],
};

/** kubectl's meta.UnsafeGuessKindToResource: `Ingress` → `ingresses`, `Policy` → `policies`. */
export function guessResource(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular === '') return '';
  if (singular.endsWith('endpoints')) return singular;
  if (singular.endsWith('s')) return `${singular}es`;
  if (singular.endsWith('y')) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

export interface KindMapping {
  readonly resource: string;
  readonly namespaced: boolean;
  /** False for a kind this table does not list (its resource and scope are guessed). */
  readonly known: boolean;
}

/** The resource and scope of `kind` in `group`; `hasNamespace` decides for unknown kinds. */
export function kindMapping(group: string, kind: string, hasNamespace: boolean): KindMapping {
  const resource = guessResource(kind);
  if (NAMESPACED[group]?.includes(kind)) return { resource, namespaced: true, known: true };
  if (CLUSTER[group]?.includes(kind)) return { resource, namespaced: false, known: true };
  return { resource, namespaced: hasNamespace, known: false };
}

/** `apps/v1` → {group: apps, version: v1}; `v1` → {group: '', version: v1}. */
export function groupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
