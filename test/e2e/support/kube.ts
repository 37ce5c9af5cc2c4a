// Requests to a real apiserver as a client sends them: typed paths for the kinds the suite writes,
// dry runs, impersonation, the Warning headers, and the pieces of an answer a user sees.
import type { ControlPlane, HttpAnswer } from './control-plane.js';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** Plural resource names of the kinds the suite writes (what discovery would say). */
const RESOURCES: Record<string, string> = {
  Pod: 'pods',
  Namespace: 'namespaces',
  Node: 'nodes',
  Service: 'services',
  Event: 'events',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  ServiceAccount: 'serviceaccounts',
  ResourceQuota: 'resourcequotas',
  LimitRange: 'limitranges',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  PersistentVolume: 'persistentvolumes',
  Endpoints: 'endpoints',
  ReplicationController: 'replicationcontrollers',
  PodTemplate: 'podtemplates',
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
  Job: 'jobs',
  CronJob: 'cronjobs',
  Ingress: 'ingresses',
  IngressClass: 'ingressclasses',
  StorageClass: 'storageclasses',
  PriorityClass: 'priorityclasses',
  RuntimeClass: 'runtimeclasses',
  CertificateSigningRequest: 'certificatesigningrequests',
  EndpointSlice: 'endpointslices',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
  MutatingAdmissionPolicy: 'mutatingadmissionpolicies',
  MutatingAdmissionPolicyBinding: 'mutatingadmissionpolicybindings',
};

export function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
  const resource = RESOURCES[kind];
  if (!resource) throw new Error(`no resource known for kind ${kind}: add it to test/e2e/support/kube.ts`);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace ? `${base}/namespaces/${namespace}/${resource}` : `${base}/${resource}`;
}

export function objectPath(object: KubeObject): string {
  return `${collectionPath(object.apiVersion, object.kind, object.metadata.namespace)}/${object.metadata.name}`;
}

export interface WriteOptions {
  readonly dryRun?: boolean;
  /** Impersonate this user (the admin may); with `groups`, those groups. */
  readonly as?: string;
  readonly groups?: readonly string[];
}

export interface Answer {
  readonly status: number;
  /** The stored (or, for a dry run, would-be stored) object, when admitted. */
  readonly object?: KubeObject;
  /** A refusal's Status message, as kubectl prints it after `Error from server (...)`. */
  readonly message?: string;
  readonly reason?: string;
  /** The Warning headers' texts, in order. */
  readonly warnings: readonly string[];
  readonly raw: HttpAnswer;
}

/** `299 - "text"` headers into their texts (RFC 7234's warn-text, quoted). */
function warningsOf(answer: HttpAnswer): string[] {
  return (answer.headers.warning ?? []).map((header) => {
    const quoted = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(header);
    return quoted ? quoted[1].replace(/\\(.)/g, '$1') : header;
  });
}

function answerOf(raw: HttpAnswer): Answer {
  const body = raw.body ? (JSON.parse(raw.body) as Record<string, unknown>) : {};
  const warnings = warningsOf(raw);
  if (raw.status >= 200 && raw.status < 300 && body.kind !== 'Status')
    return { status: raw.status, object: body as KubeObject, warnings, raw };
  return {
    status: raw.status,
    message: body.message as string | undefined,
    reason: body.reason as string | undefined,
    warnings,
    raw,
  };
}

function headersOf(options: WriteOptions): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (options.as) headers['impersonate-user'] = options.as;
  // One Impersonate-Group header per group, as kubectl --as-group sends them.
  if (options.groups?.length) headers['impersonate-group'] = [...options.groups];
  return headers;
}

function query(options: WriteOptions): string {
  return options.dryRun ? '?dryRun=All' : '';
}

export async function create(cluster: ControlPlane, object: KubeObject, options: WriteOptions = {}): Promise<Answer> {
  const path = collectionPath(object.apiVersion, object.kind, object.metadata.namespace);
  return answerOf(await cluster.request('POST', `${path}${query(options)}`, object, headersOf(options)));
}

export async function update(cluster: ControlPlane, object: KubeObject, options: WriteOptions = {}): Promise<Answer> {
  return answerOf(await cluster.request('PUT', `${objectPath(object)}${query(options)}`, object, headersOf(options)));
}

export async function remove(cluster: ControlPlane, object: KubeObject, options: WriteOptions = {}): Promise<Answer> {
  return answerOf(
    await cluster.request('DELETE', `${objectPath(object)}${query(options)}`, undefined, headersOf(options)),
  );
}

export async function get(cluster: ControlPlane, object: KubeObject): Promise<KubeObject | undefined> {
  const answer = await cluster.request('GET', objectPath(object));
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) throw new Error(`GET ${objectPath(object)}: ${answer.status} ${answer.body}`);
  return answer.json<KubeObject>();
}

/** Polls `probe` until it returns a value other than undefined, or fails after `limitMs`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, limitMs = 30_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${limitMs / 1000} s${last ? `: ${last}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Creates a namespace and waits for its default ServiceAccount (pods need it). */
export async function createNamespace(
  cluster: ControlPlane,
  name: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<KubeObject> {
  const answer = await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...metadata } });
  if (answer.status !== 201) throw new Error(`namespace ${name}: ${answer.status} ${answer.message}`);
  await eventually(`namespace ${name} has its default ServiceAccount`, async () =>
    (await cluster.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200
      ? true
      : undefined,
  );
  return answer.object!;
}

export function pod(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }], ...spec },
  };
}

const WEBHOOK_DENIAL = /^admission webhook "([^"]+)" denied the request: /;

/** A webhook's refusal without the apiserver's prefix, and the webhook's name. */
export function webhookDenial(message: string | undefined): { webhook: string; message: string } | undefined {
  const match = message ? WEBHOOK_DENIAL.exec(message) : null;
  return match ? { webhook: match[1], message: message!.slice(match[0].length) } : undefined;
}

/** The parts of a stored object that the admission chain decides: no server-set metadata. */
export function admittedShape(object: KubeObject | undefined): unknown {
  if (!object) return undefined;
  const { uid, resourceVersion, creationTimestamp, managedFields, generation, ...metadata } = object.metadata as Record<
    string,
    unknown
  >;
  void uid;
  void resourceVersion;
  void creationTimestamp;
  void managedFields;
  void generation;
  const { status, ...rest } = object;
  void status;
  // A Service's cluster IPs are allocated at random from the service range.
  if (object.kind === 'Service' && rest.spec) {
    const { clusterIP, clusterIPs, ...spec } = rest.spec as Record<string, unknown>;
    void clusterIP;
    void clusterIPs;
    rest.spec = spec;
  }
  // The ServiceAccount admission plugin names the token volume with a random suffix.
  const text = JSON.stringify({ ...rest, metadata }).replace(/kube-api-access-[a-z0-9]{5}/g, 'kube-api-access-*');
  return JSON.parse(text);
}

/** A create at a collection path the suite's kinds do not name (a kind served by another group). */
export async function createAt(
  cluster: ControlPlane,
  collection: string,
  object: KubeObject,
  options: WriteOptions = {},
): Promise<Answer> {
  return answerOf(await cluster.request('POST', `${collection}${query(options)}`, object, headersOf(options)));
}

/** Any request, read as an answer (subresources, CONNECT). */
export async function requestAt(
  cluster: ControlPlane,
  method: string,
  path: string,
  body?: unknown,
  options: WriteOptions = {},
): Promise<Answer> {
  return answerOf(await cluster.request(method, `${path}${query(options)}`, body, headersOf(options)));
}

// Kinds the native policies' files write besides those above.
Object.assign(RESOURCES, {
  ClusterTrustBundle: 'clustertrustbundles',
  VolumeAttributesClass: 'volumeattributesclasses',
});
