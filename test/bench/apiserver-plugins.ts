// The plugins the apiserver bench sends through a real kube-apiserver: every plugin `emit --native`
// compiles (infra/native/registry.ts) whose request can be made by an admin without further
// machinery, each with its AdmissionConfiguration entry (the e2e native files' configurations), the
// built-in plugin of the same name where kube-apiserver has one, and one request of the kind the
// plugin judges (a server-side dry run, so the rounds write nothing). A plugin refused by design
// (AlwaysDeny) is measured on its refusal.
import { OPENSHIFT_RESERVATION } from '../support/cases/namespace-reservation.js';

export interface BenchRequest {
  readonly path: string;
  readonly body: unknown;
}

export interface BenchPlugin {
  /** The registry's kebab-case name: the webhooks' prefix and the native policies' suffix. */
  readonly name: string;
  /** The AdmissionConfiguration entry, `- name: ...` and its configuration. */
  readonly entry: string;
  /** kube-apiserver's own plugin of that name, if it has one (switched off on the other paths). */
  readonly builtIn?: string;
  /** Served only as native policies: no webhook path. */
  readonly nativeOnly?: true;
  /** The status every request gets (201 for a dry-run create). */
  readonly status?: number;
  readonly request: (name: string) => BenchRequest;
}

const DRY_RUN = '?dryRun=All';
const podAt = (name: string, spec: Record<string, unknown> = {}): BenchRequest => ({
  path: `/api/v1/namespaces/bench/pods${DRY_RUN}`,
  body: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'bench' },
    spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }], ...spec },
  },
});
const service = (name: string): BenchRequest => ({
  path: `/api/v1/namespaces/bench/services${DRY_RUN}`,
  body: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'bench' },
    spec: { ports: [{ port: 80 }] },
  },
});
const json = (value: unknown) => JSON.stringify(value);

export const BENCH_PLUGINS: readonly BenchPlugin[] = [
  { name: 'always-admit', entry: '- name: AlwaysAdmit', builtIn: 'AlwaysAdmit', request: (n) => podAt(n) },
  { name: 'always-deny', entry: '- name: AlwaysDeny', builtIn: 'AlwaysDeny', status: 403, request: (n) => podAt(n) },
  {
    name: 'always-pull-images',
    entry: '- name: AlwaysPullImages',
    builtIn: 'AlwaysPullImages',
    request: (n) => podAt(n),
  },
  {
    name: 'default-toleration-seconds',
    entry: '- name: DefaultTolerationSeconds',
    builtIn: 'DefaultTolerationSeconds',
    request: (n) => podAt(n),
  },
  {
    name: 'deny-service-external-ips',
    entry: '- name: DenyServiceExternalIPs',
    builtIn: 'DenyServiceExternalIPs',
    request: service,
  },
  {
    name: 'extended-resource-toleration',
    entry: '- name: ExtendedResourceToleration',
    builtIn: 'ExtendedResourceToleration',
    request: (n) =>
      podAt(n, {
        containers: [
          {
            name: 'c',
            image: 'registry.example/app:1',
            resources: { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } },
          },
        ],
      }),
  },
  {
    name: 'external-ip-ranger',
    entry: `- name: network.openshift.io/ExternalIPRanger\n    configuration: ${json({
      apiVersion: 'network.openshift.io/v1',
      kind: 'ExternalIPRangerAdmissionConfig',
      externalIPNetworkCIDRs: ['192.0.2.0/24'],
      allowIngressIP: true,
    })}`,
    request: service,
  },
  {
    name: 'limit-pod-hard-anti-affinity-topology',
    entry: '- name: LimitPodHardAntiAffinityTopology',
    builtIn: 'LimitPodHardAntiAffinityTopology',
    request: (n) => podAt(n),
  },
  {
    name: 'namespace-reservation',
    entry: `- name: NamespaceReservation\n    configuration: ${json(OPENSHIFT_RESERVATION)}`,
    request: (n) => ({
      path: `/api/v1/namespaces${DRY_RUN}`,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${n}` } },
    }),
  },
  {
    name: 'origin-pod-node-environment',
    entry: `- name: scheduling.openshift.io/OriginPodNodeEnvironment\n    configuration:\n      defaultNodeSelector: ${json('infra = false')}`,
    request: (n) => podAt(n),
  },
  {
    name: 'pod-node-constraints',
    entry: `- name: scheduling.openshift.io/PodNodeConstraints\n    configuration: ${json({
      apiVersion: 'scheduling.openshift.io/v1',
      kind: 'PodNodeConstraintsConfig',
      nodeSelectorLabelBlacklist: ['kubernetes.io/hostname'],
    })}`,
    request: (n) => podAt(n),
  },
  {
    name: 'pod-node-selector',
    entry: `- name: PodNodeSelector\n    configuration:\n      podNodeSelectorPluginConfig: ${json({ clusterDefaultNodeSelector: 'env=bench' })}`,
    builtIn: 'PodNodeSelector',
    request: (n) => podAt(n),
  },
  {
    name: 'pod-security',
    entry: `- name: PodSecurity\n    configuration: ${json({
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'enforce-version': 'latest' },
    })}`,
    builtIn: 'PodSecurity',
    request: (n) => podAt(n),
  },
  {
    name: 'restricted-endpoints-admission',
    entry: `- name: network.openshift.io/RestrictedEndpointsAdmission\n    configuration: ${json({
      apiVersion: 'network.openshift.io/v1',
      kind: 'RestrictedEndpointsAdmissionConfig',
      restrictedCIDRs: ['10.128.0.0/14'],
    })}`,
    request: (n) => ({
      path: `/api/v1/namespaces/bench/endpoints${DRY_RUN}`,
      body: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: n, namespace: 'bench' },
        subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 80 }] }],
      },
    }),
  },
  {
    name: 'run-once-duration',
    entry: `- name: autoscaling.openshift.io/RunOnceDuration\n    configuration: ${json({
      apiVersion: 'autoscaling.openshift.io/v1',
      kind: 'RunOnceDurationConfig',
      activeDeadlineSecondsOverride: 3600,
    })}`,
    request: (n) => podAt(n, { restartPolicy: 'Never' }),
  },
  {
    name: 'storage-object-in-use-protection',
    entry: '- name: StorageObjectInUseProtection',
    builtIn: 'StorageObjectInUseProtection',
    request: (n) => ({
      path: `/api/v1/namespaces/bench/persistentvolumeclaims${DRY_RUN}`,
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: n, namespace: 'bench' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    }),
  },
  {
    name: 'taint-nodes-by-condition',
    entry: '- name: TaintNodesByCondition',
    builtIn: 'TaintNodesByCondition',
    request: (n) => ({
      path: `/api/v1/nodes${DRY_RUN}`,
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: n } },
    }),
  },
  {
    name: 'ingress-admission',
    entry: '- name: route.openshift.io/IngressAdmission',
    nativeOnly: true,
    request: (n) => ({
      path: `/apis/networking.k8s.io/v1/namespaces/bench/ingresses${DRY_RUN}`,
      body: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: n, namespace: 'bench' },
        spec: {
          rules: [
            {
              http: {
                paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 80 } } } }],
              },
            },
          ],
        },
      },
    }),
  },
];

/**
 * Compiled but not measured here: their requests need more than an admin's dry run (an existing
 * CertificateSigningRequest to approve or sign, as a user the authorizer names; ClusterTrustBundles
 * behind a feature gate). The e2e suite proves their answers; their cost is the policy dispatch the
 * rows above show.
 */
export const NOT_MEASURED = ['certificate-approval', 'certificate-signing', 'cluster-trust-bundle-attest'] as const;

export function admissionConfiguration(plugin: BenchPlugin): string {
  return `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  ${plugin.entry}\n`;
}
