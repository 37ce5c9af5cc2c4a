// The plugins the apiserver bench sends through a real kube-apiserver: every plugin `emit --native`
// compiles (infra/native/registry.ts), each with its AdmissionConfiguration entry (the e2e native
// files' configurations), the built-in plugin of the same name where kube-apiserver has one, and
// one request of the kind the plugin judges (a server-side dry run, so the rounds write nothing;
// the certificate plugins' made as a user granted what they check, on objects the set-up stores
// on every path's apiserver). A plugin refused by design
// (AlwaysDeny) is measured on its refusal. Each plugin says what its answer must be on every path
// that runs it (admitted, with the change a mutating plugin makes; or refused, with its words) and
// `answerProblem` holds every answer to it: a round whose answers differ fails the bench.
import { base64, certificatePem, certificateRequestPem } from '../e2e/support/certificates.js';
import type { ControlPlane } from '../e2e/support/control-plane.js';
import { create } from '../e2e/support/kube.js';
import { OPENSHIFT_RESERVATION } from '../support/cases/namespace-reservation.js';
import { FLOOR_LABEL } from './native-floor.js';

export interface BenchRequest {
  /** POST (a create, 201 when admitted) unless PUT (an update, 200). */
  readonly method?: 'POST' | 'PUT';
  readonly path: string;
  readonly body: unknown;
  /** The user the admin impersonates (a user the authorizer grants what the plugin checks). */
  readonly as?: string;
}

/** The apiserver's answer to one request of the bench. */
export interface BenchAnswer {
  readonly status: number;
  readonly body: string;
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
  /** The status every request gets where the plugin runs (201 for a dry-run create). */
  readonly status?: number;
  /** Part of the message of the plugin's refusal, where `status` is one. */
  readonly refusal?: string;
  /** What an admitted object must show where the plugin runs (a mutating plugin's change). */
  readonly admitted?: (object: KubeObject) => string | undefined;
  readonly request: (name: string) => BenchRequest;
  /** Objects and grants the request needs, made on every path's apiserver before the rounds. */
  readonly setup?: (cluster: ControlPlane) => Promise<void>;
  /** kube-apiserver flags every path needs (an API behind a feature gate). */
  readonly apiserverArgs?: readonly string[];
}

interface KubeObject {
  readonly metadata?: { readonly finalizers?: readonly string[]; readonly labels?: Record<string, string> };
  readonly spec?: Record<string, unknown>;
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

/** Creates `object` as admin; anything but 201 stops the set-up. */
async function seed(cluster: ControlPlane, object: Parameters<typeof create>[1]): Promise<void> {
  const answer = await create(cluster, object);
  if (answer.status !== 201) throw new Error(`set-up: ${object.kind} ${object.metadata.name}: ${answer.message}`);
}

/** A ClusterRole with `rules` bound to `user`, both named after the user. */
async function grant(cluster: ControlPlane, user: string, rules: Record<string, unknown>[]): Promise<void> {
  await seed(cluster, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: user },
    rules,
  });
  await seed(cluster, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: user },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
}

const SIGNER = 'bench.example/signer';
const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const APPROVED = { type: 'Approved', status: 'True', reason: 'Bench', message: 'approved by the bench' };
/** Made once, on first use: an RSA key pair each. */
const material = {
  request: undefined as string | undefined,
  certificate: undefined as string | undefined,
  get csr() {
    this.request ??= base64(certificateRequestPem('bench'));
    return this.request;
  },
  get cert() {
    this.certificate ??= base64(certificatePem('bench'));
    return this.certificate;
  },
};
const csr = (status?: Record<string, unknown>) => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: 'bench' },
  spec: { signerName: SIGNER, request: material.csr, usages: ['client auth'] },
  ...(status && { status }),
});
/** The signer permission `verb` (approve, sign, attest) on SIGNER. */
const onSigner = (verb: string) => ({
  apiGroups: ['certificates.k8s.io'],
  resources: ['signers'],
  resourceNames: [SIGNER],
  verbs: [verb],
});

interface Toleration {
  readonly key?: string;
  readonly operator?: string;
  readonly effect?: string;
  readonly tolerationSeconds?: number;
}
const tolerationsOf = (object: KubeObject) => (object.spec?.tolerations ?? []) as Toleration[];
/** The toleration a mutating plugin adds, or a sentence saying it is missing. */
const hasToleration =
  (wanted: Toleration) =>
  (object: KubeObject): string | undefined =>
    tolerationsOf(object).some((t) => Object.entries(wanted).every(([k, v]) => t[k as keyof Toleration] === v))
      ? undefined
      : `no toleration ${json(wanted)} in ${json(tolerationsOf(object))}`;
const hasNodeSelector =
  (wanted: Record<string, string>) =>
  (object: KubeObject): string | undefined => {
    const selector = (object.spec?.nodeSelector ?? {}) as Record<string, string>;
    return Object.entries(wanted).every(([k, v]) => selector[k] === v)
      ? undefined
      : `nodeSelector ${json(selector)}, not ${json(wanted)}`;
  };

export const BENCH_PLUGINS: readonly BenchPlugin[] = [
  { name: 'always-admit', entry: '- name: AlwaysAdmit', builtIn: 'AlwaysAdmit', request: (n) => podAt(n) },
  // kube-apiserver v1.36 still has AlwaysDeny, but with it on the apiserver refuses its own
  // system PriorityClasses and exits (docs/design/e2e-exceptions.md): no built-in path. A
  // ConfigMap: the refusal is AlwaysDeny's, not the ServiceAccount plugin's (the webhook refuses
  // the set-up's ServiceAccount too).
  {
    name: 'always-deny',
    entry: '- name: AlwaysDeny',
    status: 403,
    refusal: 'admission control is denying all modifications',
    request: (n) => ({
      path: `/api/v1/namespaces/bench/configmaps${DRY_RUN}`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: 'bench' }, data: { k: 'v' } },
    }),
  },
  {
    name: 'always-pull-images',
    entry: '- name: AlwaysPullImages',
    builtIn: 'AlwaysPullImages',
    admitted: (object) => {
      const policies = ((object.spec?.containers ?? []) as { imagePullPolicy?: string }[]).map(
        (c) => c.imagePullPolicy,
      );
      return policies.every((p) => p === 'Always') ? undefined : `imagePullPolicy ${json(policies)}, not Always`;
    },
    request: (n) => podAt(n),
  },
  {
    name: 'default-toleration-seconds',
    entry: '- name: DefaultTolerationSeconds',
    builtIn: 'DefaultTolerationSeconds',
    admitted: hasToleration({ key: 'node.kubernetes.io/not-ready', tolerationSeconds: 300 }),
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
    admitted: hasToleration({ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }),
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
    admitted: hasNodeSelector({ infra: 'false' }),
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
    admitted: hasNodeSelector({ env: 'bench' }),
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
    admitted: (object) =>
      object.spec?.activeDeadlineSeconds === 3600
        ? undefined
        : `activeDeadlineSeconds ${json(object.spec?.activeDeadlineSeconds)}, not 3600`,
    request: (n) => podAt(n, { restartPolicy: 'Never' }),
  },
  {
    name: 'storage-object-in-use-protection',
    entry: '- name: StorageObjectInUseProtection',
    builtIn: 'StorageObjectInUseProtection',
    admitted: (object) =>
      object.metadata?.finalizers?.includes('kubernetes.io/pvc-protection')
        ? undefined
        : `finalizers ${json(object.metadata?.finalizers ?? [])}, no kubernetes.io/pvc-protection`,
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
    admitted: (object) => {
      const taints = (object.spec?.taints ?? []) as { key?: string; effect?: string }[];
      return taints.some((t) => t.key === 'node.kubernetes.io/not-ready' && t.effect === 'NoSchedule')
        ? undefined
        : `taints ${json(taints)}, no node.kubernetes.io/not-ready:NoSchedule`;
    },
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
  // The certificate plugins ask the authorizer whether the requesting user may approve, sign or
  // attest for the signer: the requests are made as a user granted exactly that, on a
  // CertificateSigningRequest stored (and, for signing, approved) in the set-up.
  {
    name: 'certificate-approval',
    entry: '- name: CertificateApproval',
    builtIn: 'CertificateApproval',
    nativeOnly: true,
    setup: async (cluster) => {
      await seed(cluster, csr());
      await grant(cluster, 'bench-approver', [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
        onSigner('approve'),
      ]);
    },
    admitted: (object) => {
      const conditions = (object as { status?: { conditions?: { type?: string }[] } }).status?.conditions ?? [];
      return conditions.some((c) => c.type === 'Approved') ? undefined : `conditions ${json(conditions)}, not Approved`;
    },
    request: () => ({
      method: 'PUT',
      path: `${CSR_PATH}/bench/approval${DRY_RUN}`,
      body: csr({ conditions: [APPROVED] }),
      as: 'bench-approver',
    }),
  },
  {
    name: 'certificate-signing',
    entry: '- name: CertificateSigning',
    builtIn: 'CertificateSigning',
    nativeOnly: true,
    setup: async (cluster) => {
      await seed(cluster, csr());
      const approved = await cluster.request('PUT', `${CSR_PATH}/bench/approval`, csr({ conditions: [APPROVED] }));
      if (approved.status !== 200) throw new Error(`set-up: approving the CSR: ${approved.status} ${approved.body}`);
      await grant(cluster, 'bench-signer', [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/status'], verbs: ['update'] },
        onSigner('sign'),
      ]);
    },
    admitted: (object) =>
      (object as { status?: { certificate?: string } }).status?.certificate === material.cert
        ? undefined
        : 'no certificate in the status',
    request: () => ({
      method: 'PUT',
      path: `${CSR_PATH}/bench/status${DRY_RUN}`,
      body: csr({ conditions: [APPROVED], certificate: material.cert }),
      as: 'bench-signer',
    }),
  },
  {
    name: 'cluster-trust-bundle-attest',
    entry: '- name: ClusterTrustBundleAttest',
    builtIn: 'ClusterTrustBundleAttest',
    nativeOnly: true,
    apiserverArgs: [
      '--feature-gates=ClusterTrustBundle=true',
      '--runtime-config=certificates.k8s.io/v1beta1/clustertrustbundles=true',
    ],
    setup: (cluster) =>
      grant(cluster, 'bench-attester', [
        { apiGroups: ['certificates.k8s.io'], resources: ['clustertrustbundles'], verbs: ['create'] },
        onSigner('attest'),
      ]),
    request: (n) => ({
      path: `/apis/certificates.k8s.io/v1beta1/clustertrustbundles${DRY_RUN}`,
      body: {
        apiVersion: 'certificates.k8s.io/v1beta1',
        kind: 'ClusterTrustBundle',
        // A signer's bundle is named after it, ':' for '/'.
        metadata: { name: `${SIGNER.replace('/', ':')}:${n}` },
        spec: { signerName: SIGNER, trustBundle: Buffer.from(material.cert, 'base64').toString() },
      },
      as: 'bench-attester',
    }),
  },
];

/** Where no plugin runs (the floor path), every request is admitted: a create 201, an update 200. */
const admittedStatus = (plugin: BenchPlugin) => (plugin.request('status').method === 'PUT' ? 200 : 201);

/**
 * Why `answer` is not the one `plugin` gives on `path`, or undefined when it is: the status (the
 * plugin's, or an admission where no plugin runs), the refusal's words, the admitted object's
 * change. A 500, a timeout's 504 or another plugin's refusal is never measured as the plugin's.
 */
export function answerProblem(plugin: BenchPlugin, path: string, answer: BenchAnswer): string | undefined {
  const admitted = admittedStatus(plugin);
  const expected = path === 'none' ? admitted : (plugin.status ?? admitted);
  const what = `${plugin.name} ${path}`;
  const excerpt = answer.body.slice(0, 400);
  if (answer.status !== expected) return `${what}: ${answer.status}, expected ${expected}: ${excerpt}`;
  if (path === 'none') return undefined;
  if (answer.status >= 300) {
    let message = '';
    try {
      message = String((JSON.parse(answer.body) as { message?: unknown }).message ?? '');
    } catch {
      return `${what}: ${answer.status} with a body that is not a Status: ${excerpt}`;
    }
    return plugin.refusal && message.includes(plugin.refusal)
      ? undefined
      : `${what}: refused, but not with ${json(plugin.refusal ?? '')}: ${message}`;
  }
  if (!plugin.admitted) return undefined;
  let object: KubeObject;
  try {
    object = JSON.parse(answer.body) as KubeObject;
  } catch {
    return `${what}: admitted with a body that is not JSON: ${excerpt}`;
  }
  const problem = plugin.admitted(object);
  return problem === undefined ? undefined : `${what}: admitted without the plugin's change: ${problem}`;
}

/**
 * Why `answer` is not the native floor's (native-floor.ts): every request admitted, with the
 * floor's label where its policies mutate (a floor whose patch failed, or whose policy did not
 * match, would measure less than any policy costs).
 */
export function floorProblem(plugin: BenchPlugin, mutates: boolean, answer: BenchAnswer): string | undefined {
  const what = `${plugin.name} native floor`;
  const expected = admittedStatus(plugin);
  if (answer.status !== expected)
    return `${what}: ${answer.status}, expected ${expected}: ${answer.body.slice(0, 400)}`;
  if (!mutates) return undefined;
  let object: KubeObject;
  try {
    object = JSON.parse(answer.body) as KubeObject;
  } catch {
    return `${what}: admitted with a body that is not JSON: ${answer.body.slice(0, 400)}`;
  }
  return object.metadata?.labels?.[FLOOR_LABEL] === 'true'
    ? undefined
    : `${what}: admitted without the label ${FLOOR_LABEL}`;
}

/**
 * Why a round's webhook path is not measuring the webhooks, or undefined: each request must have
 * called them (a namespaceSelector or rule that misses the request would measure no plugin), and
 * none may have failed open (failurePolicy Ignore admits without the plugin's judgement).
 */
export function webhookProblem(
  plugin: string,
  path: string,
  requests: number,
  calls: number,
  failedOpen: number,
): string | undefined {
  if (!path.startsWith('webhook')) return undefined;
  if (failedOpen > 0)
    return `${plugin} ${path}: ${failedOpen} webhook calls failed open (failurePolicy Ignore): the apiserver admitted without the plugin`;
  if (calls < requests) return `${plugin} ${path}: ${calls} webhook calls for ${requests} requests`;
  return undefined;
}

export function admissionConfiguration(plugin: BenchPlugin): string {
  return `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  ${plugin.entry}\n`;
}
