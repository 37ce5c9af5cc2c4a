// The server-side-apply merge schema of the built-in objects MutatingAdmissionPolicies mutate most:
// Pods and the workload objects that embed a pod template (Deployment, ReplicaSet, StatefulSet,
// DaemonSet, Job, CronJob, ReplicationController, PodTemplate), Services, ConfigMaps, Secrets,
// Namespaces and ServiceAccounts.
//
// Source: Kubernetes' structured-merge-diff schema of the built-in types as client-go ships it,
// staging/src/k8s.io/client-go/applyconfigurations/internal/internal.go at kubernetes/kubernetes
// commit 005336e04478bf7324370500677cd3aa2c31e168 (a 1.30-era API), itself generated from the types'
// OpenAPI (x-kubernetes-list-type, x-kubernetes-list-map-keys, x-kubernetes-map-type). Only what
// changes a merge is kept: list-map lists with their keys, set lists, atomic maps and atomic
// structs, and the struct fields that lead to them. Every other field merges as structured-merge-
// diff's deduced type would (objects field by field, lists replaced), which is what the schema says
// of the fields left out here (scalars, granular maps, atomic lists). Transcribed, not generated:
// no npm package ships Kubernetes' OpenAPI with these extensions (see the README).
import type { FieldType, MergeSchema, NamedType } from './structured-merge.js';

const CORE = 'io.k8s.api.core.v1.';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const APPS = 'io.k8s.api.apps.v1.';
const BATCH = 'io.k8s.api.batch.v1.';

const SCALAR: FieldType = { scalar: true };
const named = (name: string): FieldType => ({ named: name });
const core = (name: string): FieldType => named(CORE + name);
const listMap = (elem: string, ...keys: string[]): FieldType => ({
  list: { elem: named(elem), relationship: 'associative', keys },
});
const set: FieldType = { list: { elem: SCALAR, relationship: 'set' } };
const atomicMap: FieldType = { map: { elem: SCALAR, atomic: true } };
const atomicList = (elem: string): FieldType => ({ list: { elem: named(elem), relationship: 'atomic' } });
const struct = (fields: Record<string, FieldType>): NamedType => ({ fields });
const atomicStruct: NamedType = { fields: {}, atomic: true };

const object = (spec: string, status?: string) =>
  struct({ metadata: named(`${META}ObjectMeta`), spec: named(spec), ...(status && { status: named(status) }) });

const container = struct({
  env: listMap(`${CORE}EnvVar`, 'name'),
  envFrom: atomicList(`${CORE}EnvFromSource`),
  lifecycle: core('Lifecycle'),
  livenessProbe: core('Probe'),
  ports: listMap(`${CORE}ContainerPort`, 'containerPort', 'protocol'),
  readinessProbe: core('Probe'),
  resources: core('ResourceRequirements'),
  securityContext: core('SecurityContext'),
  startupProbe: core('Probe'),
  volumeDevices: listMap(`${CORE}VolumeDevice`, 'devicePath'),
  volumeMounts: listMap(`${CORE}VolumeMount`, 'mountPath'),
});

const TYPES: Record<string, NamedType> = {
  [`${META}ObjectMeta`]: struct({
    finalizers: set,
    managedFields: atomicList(`${META}ManagedFieldsEntry`),
    ownerReferences: listMap(`${META}OwnerReference`, 'uid'),
  }),
  [`${META}OwnerReference`]: atomicStruct,
  [`${META}LabelSelector`]: atomicStruct,
  [`${META}Condition`]: struct({}),

  [`${CORE}Pod`]: object(`${CORE}PodSpec`, `${CORE}PodStatus`),
  [`${CORE}PodTemplate`]: struct({ metadata: named(`${META}ObjectMeta`), template: core('PodTemplateSpec') }),
  [`${CORE}PodTemplateSpec`]: object(`${CORE}PodSpec`),
  [`${CORE}PodSpec`]: struct({
    affinity: core('Affinity'),
    containers: listMap(`${CORE}Container`, 'name'),
    dnsConfig: core('PodDNSConfig'),
    ephemeralContainers: listMap(`${CORE}EphemeralContainer`, 'name'),
    hostAliases: listMap(`${CORE}HostAlias`, 'ip'),
    imagePullSecrets: listMap(`${CORE}LocalObjectReference`, 'name'),
    initContainers: listMap(`${CORE}Container`, 'name'),
    nodeSelector: atomicMap,
    readinessGates: atomicList(`${CORE}PodReadinessGate`),
    resourceClaims: listMap(`${CORE}PodResourceClaim`, 'name'),
    schedulingGates: listMap(`${CORE}PodSchedulingGate`, 'name'),
    securityContext: core('PodSecurityContext'),
    tolerations: atomicList(`${CORE}Toleration`),
    topologySpreadConstraints: listMap(`${CORE}TopologySpreadConstraint`, 'topologyKey', 'whenUnsatisfiable'),
    volumes: listMap(`${CORE}Volume`, 'name'),
  }),
  [`${CORE}PodStatus`]: struct({
    conditions: listMap(`${CORE}PodCondition`, 'type'),
    podIPs: listMap(`${CORE}PodIP`, 'ip'),
    resourceClaimStatuses: listMap(`${CORE}PodResourceClaimStatus`, 'name'),
  }),
  [`${CORE}Container`]: container,
  [`${CORE}EphemeralContainer`]: container,
  [`${CORE}EnvVar`]: struct({ valueFrom: core('EnvVarSource') }),
  [`${CORE}EnvVarSource`]: struct({
    configMapKeyRef: core('ConfigMapKeySelector'),
    fieldRef: core('ObjectFieldSelector'),
    resourceFieldRef: core('ResourceFieldSelector'),
    secretKeyRef: core('SecretKeySelector'),
  }),
  [`${CORE}ConfigMapKeySelector`]: atomicStruct,
  [`${CORE}SecretKeySelector`]: atomicStruct,
  [`${CORE}ObjectFieldSelector`]: atomicStruct,
  [`${CORE}ResourceFieldSelector`]: atomicStruct,
  [`${CORE}ObjectReference`]: atomicStruct,
  [`${CORE}LocalObjectReference`]: atomicStruct,
  [`${CORE}SecretReference`]: atomicStruct,
  [`${CORE}TypedLocalObjectReference`]: atomicStruct,
  [`${CORE}NodeSelector`]: atomicStruct,
  [`${CORE}NodeSelectorTerm`]: atomicStruct,
  [`${CORE}ScopeSelector`]: atomicStruct,
  [`${CORE}TopologySelectorTerm`]: atomicStruct,
  [`${CORE}ResourceRequirements`]: struct({ claims: listMap(`${CORE}ResourceClaim`, 'name') }),
  [`${CORE}Affinity`]: struct({
    nodeAffinity: core('NodeAffinity'),
    podAffinity: core('PodAffinity'),
    podAntiAffinity: core('PodAntiAffinity'),
  }),
  [`${CORE}NodeAffinity`]: struct({
    preferredDuringSchedulingIgnoredDuringExecution: atomicList(`${CORE}PreferredSchedulingTerm`),
    requiredDuringSchedulingIgnoredDuringExecution: core('NodeSelector'),
  }),
  [`${CORE}PodAffinity`]: struct({
    preferredDuringSchedulingIgnoredDuringExecution: atomicList(`${CORE}WeightedPodAffinityTerm`),
    requiredDuringSchedulingIgnoredDuringExecution: atomicList(`${CORE}PodAffinityTerm`),
  }),
  [`${CORE}PodAntiAffinity`]: struct({
    preferredDuringSchedulingIgnoredDuringExecution: atomicList(`${CORE}WeightedPodAffinityTerm`),
    requiredDuringSchedulingIgnoredDuringExecution: atomicList(`${CORE}PodAffinityTerm`),
  }),
  [`${CORE}TopologySpreadConstraint`]: struct({ labelSelector: named(`${META}LabelSelector`) }),
  [`${CORE}Volume`]: struct({
    cephfs: core('CephFSVolumeSource'),
    cinder: core('CinderVolumeSource'),
    csi: core('CSIVolumeSource'),
    ephemeral: core('EphemeralVolumeSource'),
    flexVolume: core('FlexVolumeSource'),
    iscsi: core('ISCSIVolumeSource'),
    rbd: core('RBDVolumeSource'),
    scaleIO: core('ScaleIOVolumeSource'),
    storageos: core('StorageOSVolumeSource'),
  }),
  [`${CORE}CephFSVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}CinderVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}CSIVolumeSource`]: struct({ nodePublishSecretRef: core('LocalObjectReference') }),
  [`${CORE}FlexVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}ISCSIVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}RBDVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}ScaleIOVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}StorageOSVolumeSource`]: struct({ secretRef: core('LocalObjectReference') }),
  [`${CORE}EphemeralVolumeSource`]: struct({ volumeClaimTemplate: core('PersistentVolumeClaimTemplate') }),
  [`${CORE}PersistentVolumeClaimTemplate`]: object(`${CORE}PersistentVolumeClaimSpec`),
  [`${CORE}PersistentVolumeClaim`]: object(`${CORE}PersistentVolumeClaimSpec`, `${CORE}PersistentVolumeClaimStatus`),
  [`${CORE}PersistentVolumeClaimSpec`]: struct({
    dataSource: core('TypedLocalObjectReference'),
    selector: named(`${META}LabelSelector`),
  }),
  [`${CORE}PersistentVolumeClaimStatus`]: struct({
    conditions: listMap(`${CORE}PersistentVolumeClaimCondition`, 'type'),
  }),

  [`${CORE}Service`]: object(`${CORE}ServiceSpec`, `${CORE}ServiceStatus`),
  [`${CORE}ServiceSpec`]: struct({
    ports: listMap(`${CORE}ServicePort`, 'port', 'protocol'),
    selector: atomicMap,
  }),
  [`${CORE}ServiceStatus`]: struct({ conditions: listMap(`${META}Condition`, 'type') }),
  [`${CORE}ConfigMap`]: struct({ metadata: named(`${META}ObjectMeta`) }),
  [`${CORE}Secret`]: struct({ metadata: named(`${META}ObjectMeta`) }),
  [`${CORE}Namespace`]: object(`${CORE}NamespaceSpec`, `${CORE}NamespaceStatus`),
  [`${CORE}NamespaceSpec`]: struct({}),
  [`${CORE}NamespaceStatus`]: struct({ conditions: listMap(`${CORE}NamespaceCondition`, 'type') }),
  [`${CORE}ServiceAccount`]: struct({
    metadata: named(`${META}ObjectMeta`),
    imagePullSecrets: atomicList(`${CORE}LocalObjectReference`),
    secrets: listMap(`${CORE}ObjectReference`, 'name'),
  }),
  [`${CORE}ReplicationController`]: object(`${CORE}ReplicationControllerSpec`),
  [`${CORE}ReplicationControllerSpec`]: struct({ selector: atomicMap, template: core('PodTemplateSpec') }),

  [`${APPS}Deployment`]: object(`${APPS}DeploymentSpec`),
  [`${APPS}DeploymentSpec`]: struct({ selector: named(`${META}LabelSelector`), template: core('PodTemplateSpec') }),
  [`${APPS}ReplicaSet`]: object(`${APPS}ReplicaSetSpec`),
  [`${APPS}ReplicaSetSpec`]: struct({ selector: named(`${META}LabelSelector`), template: core('PodTemplateSpec') }),
  [`${APPS}DaemonSet`]: object(`${APPS}DaemonSetSpec`),
  [`${APPS}DaemonSetSpec`]: struct({ selector: named(`${META}LabelSelector`), template: core('PodTemplateSpec') }),
  [`${APPS}StatefulSet`]: object(`${APPS}StatefulSetSpec`),
  [`${APPS}StatefulSetSpec`]: struct({
    selector: named(`${META}LabelSelector`),
    template: core('PodTemplateSpec'),
    volumeClaimTemplates: atomicList(`${CORE}PersistentVolumeClaim`),
  }),
  [`${BATCH}Job`]: object(`${BATCH}JobSpec`),
  [`${BATCH}JobSpec`]: struct({ selector: named(`${META}LabelSelector`), template: core('PodTemplateSpec') }),
  [`${BATCH}CronJob`]: object(`${BATCH}CronJobSpec`),
  [`${BATCH}CronJobSpec`]: struct({ jobTemplate: named(`${BATCH}JobTemplateSpec`) }),
  [`${BATCH}JobTemplateSpec`]: object(`${BATCH}JobSpec`),
};

const KINDS: Record<string, string> = {
  '/v1/Pod': `${CORE}Pod`,
  '/v1/PodTemplate': `${CORE}PodTemplate`,
  '/v1/Service': `${CORE}Service`,
  '/v1/ConfigMap': `${CORE}ConfigMap`,
  '/v1/Secret': `${CORE}Secret`,
  '/v1/Namespace': `${CORE}Namespace`,
  '/v1/ServiceAccount': `${CORE}ServiceAccount`,
  '/v1/PersistentVolumeClaim': `${CORE}PersistentVolumeClaim`,
  '/v1/ReplicationController': `${CORE}ReplicationController`,
  'apps/v1/Deployment': `${APPS}Deployment`,
  'apps/v1/ReplicaSet': `${APPS}ReplicaSet`,
  'apps/v1/DaemonSet': `${APPS}DaemonSet`,
  'apps/v1/StatefulSet': `${APPS}StatefulSet`,
  'batch/v1/Job': `${BATCH}Job`,
  'batch/v1/CronJob': `${BATCH}CronJob`,
};

export const MERGE_SCHEMA: MergeSchema = {
  types: TYPES,
  kinds: KINDS,
  // The schema's `default:` of list-map key fields: a port without a protocol is the TCP one.
  keyDefaults: { [`${CORE}ContainerPort.protocol`]: 'TCP', [`${CORE}ServicePort.protocol`]: 'TCP' },
};
