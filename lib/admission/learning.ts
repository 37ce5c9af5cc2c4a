// What the cluster teaches a plugin, as pure functions beside the plugin contract: which webhook
// rules feed each kind of learned state (`needs`) to the learning endpoint, and what one
// request tells about a namespace, a pod's placement or a ResourceQuota. lib/state persists these
// observations; the emitter reads the rules without loading the store (or the AWS SDK).
import type { PluginMetadata, WebhookRule } from './plugin.js';
import type { LearnedNamespace, LearnedObjectKind, LearnedQuota } from './ports.js';
import type { AdmissionRequest } from './request.js';
import type { KubeObject } from './types.js';
import { isObjectOfKind } from './types.js';

export type NamespacePhase = LearnedNamespace['phase'] | 'Gone';

export interface NamespaceRecord {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  phase: NamespacePhase;
}

/**
 * The webhook rules that feed learned state to a plugin: every Namespace (ResourceQuota, pod, Node,
 * class) write it needs to learn from. With what its phases observe, they make its learning
 * webhook's rules (learningEndpointRules).
 */
export function learningRules(metadata: Pick<PluginMetadata, 'needs'>): WebhookRule[] {
  const rules: WebhookRule[] = [];
  if (metadata.needs.includes('namespaces')) {
    rules.push({
      operations: ['CREATE', 'UPDATE', 'DELETE'],
      apiGroups: [''],
      apiVersions: ['v1'],
      resources: ['namespaces', 'namespaces/status'],
      scope: 'Cluster',
    });
  }
  if (metadata.needs.includes('resourcequotas')) {
    rules.push({
      operations: ['CREATE', 'UPDATE', 'DELETE'],
      apiGroups: [''],
      apiVersions: ['v1'],
      resources: ['resourcequotas'],
      scope: 'Namespaced',
    });
  }
  rules.push(...placementRules(metadata));
  rules.push(...learnedObjectRules(metadata));
  return rules;
}

/**
 * Everything a plugin's learning endpoint (`/<plugin>/learn`) is sent: the writes of what it
 * learns (`needs`) and the requests its phases only observe (ResourceQuota's releases). The
 * emitted learning webhook subscribes to exactly these, and the endpoint learns nothing else.
 * When the deployment reads the cluster (`readsCluster`), no request teaches and none is observed:
 * the watcher confirms and releases quota charges from what the cluster stored (a DELETE another
 * webhook or storage refuses would otherwise free a charge the object still holds).
 */
export function learningEndpointRules(
  metadata: Pick<PluginMetadata, 'needs' | 'mutating' | 'validating'>,
  readsCluster = false,
): WebhookRule[] {
  if (readsCluster) return [];
  const observed = [...(metadata.validating?.observes ?? []), ...(metadata.mutating?.observes ?? [])];
  return [...learningRules(metadata), ...observed];
}

export function isNamespaceRequest(request: AdmissionRequest): boolean {
  return (
    request.resource.group === '' &&
    request.resource.resource === 'namespaces' &&
    (request.subResource === '' || request.subResource === 'status' || request.subResource === 'finalize')
  );
}

function stringMap(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

function finalizersOf(object: KubeObject | null): string[] {
  const spec = object?.spec as { finalizers?: unknown } | undefined;
  const fromSpec = Array.isArray(spec?.finalizers) ? spec.finalizers : [];
  const fromMeta = Array.isArray(object?.metadata?.finalizers) ? object.metadata.finalizers : [];
  return [...fromSpec, ...fromMeta].filter((f): f is string => typeof f === 'string');
}

/** What a Namespace write tells us, or undefined when it tells nothing (a CONNECT). */
export function namespaceObservation(request: AdmissionRequest): { name: string; record: NamespaceRecord } | undefined {
  const object = request.operation === 'DELETE' ? request.oldObject : request.object;
  const name = request.name || object?.metadata?.name || '';
  if (name === '' || request.operation === 'CONNECT') return undefined;
  const labels = stringMap(object?.metadata?.labels);
  const annotations = stringMap(object?.metadata?.annotations);
  if (request.operation === 'DELETE') {
    // The first DELETE starts termination; the namespace controller's final DELETE (the namespace
    // already terminating, no finalizer left) removes it.
    const old = request.oldObject;
    const final =
      old?.metadata?.deletionTimestamp !== undefined &&
      old?.metadata?.deletionTimestamp !== null &&
      finalizersOf(old).length === 0;
    return { name, record: { labels, annotations, phase: final ? 'Gone' : 'Terminating' } };
  }
  const status = object?.status as { phase?: unknown } | undefined;
  const terminating =
    status?.phase === 'Terminating' ||
    (object?.metadata?.deletionTimestamp !== undefined && object?.metadata?.deletionTimestamp !== null);
  return { name, record: { labels, annotations, phase: terminating ? 'Terminating' : 'Active' } };
}

/** A ResourceQuota write (not its status): it states the quota that the ledger enforces. */
export function isQuotaRequest(request: AdmissionRequest): boolean {
  return request.resource.group === '' && request.resource.resource === 'resourcequotas' && request.subResource === '';
}

/** The quota a ResourceQuota object states: spec.hard, scopes, scopeSelector (lib/quota's quotaOf). */
export function learnedQuotaOf(object: KubeObject, namespace: string, name: string): LearnedQuota {
  const spec = (object.spec ?? {}) as { hard?: Record<string, unknown>; scopes?: unknown; scopeSelector?: unknown };
  const hard = Object.fromEntries(Object.entries(spec.hard ?? {}).map(([k, v]) => [k, String(v)]));
  return {
    namespace,
    name,
    hard,
    scopes: Array.isArray(spec.scopes) ? spec.scopes.map(String) : [],
    ...(spec.scopeSelector !== undefined && { scopeSelector: spec.scopeSelector }),
  };
}

/** What one ResourceQuota write tells: the quota it states, or that it is gone. */
export type QuotaObservation =
  | { kind: 'stated'; quota: LearnedQuota }
  | { kind: 'deleted'; namespace: string; name: string };

/** undefined when the request tells nothing about a quota (another resource, a CONNECT). */
export function quotaObservation(request: AdmissionRequest): QuotaObservation | undefined {
  if (!isQuotaRequest(request)) return undefined;
  if (request.operation === 'DELETE') return { kind: 'deleted', namespace: request.namespace, name: request.name };
  const object = request.object;
  if (object === null || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return undefined;
  const name = request.name || object.metadata?.name || '';
  return { kind: 'stated', quota: learnedQuotaOf(object, request.namespace, name) };
}

/** The rules that feed placements: every write of pods (binding and status included) and Nodes. */
export function placementRules(metadata: Pick<PluginMetadata, 'needs'>): WebhookRule[] {
  if (!metadata.needs.includes('placements')) return [];
  return [
    {
      operations: ['CREATE', 'UPDATE', 'DELETE'],
      apiGroups: [''],
      apiVersions: ['v1'],
      resources: ['pods', 'pods/status', 'pods/binding', 'nodes', 'nodes/status'],
      scope: '*',
    },
  ];
}

export function isPlacementRequest(request: AdmissionRequest): boolean {
  const { group, resource } = request.resource;
  return group === '' && (resource === 'pods' || resource === 'nodes');
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const nameOf = (request: AdmissionRequest, object: KubeObject | null) => request.name || text(object?.metadata?.name);
const nodeNameOf = (pod: KubeObject) => text((pod.spec as { nodeName?: unknown } | undefined)?.nodeName);

export type PlacementTarget = { kind: 'pod'; namespace: string; name: string } | { kind: 'node'; name: string };
type Target = PlacementTarget;

/** What one pod or Node write tells, or undefined when it tells nothing. */
export type PlacementObservation =
  | { kind: 'stored' | 'created'; target: Target; uid: string; nodeName: string }
  | { kind: 'deleted'; target: Target; uid: string }
  | { kind: 'bound'; namespace: string; name: string; uid: string; nodeName: string };

/** nodeidentifier's first test: a node's credentials. */
const isNodeUser = (request: AdmissionRequest) => (request.userInfo.username ?? '').startsWith('system:node:');

/**
 * A pod or Node from a `kubectl get -o json` listing: a stored object, as an UPDATE's oldObject.
 * The kind is the listing's (typed lists may leave it out of their items).
 */
export function listedObservation(kind: 'Pod' | 'Node', object: KubeObject): PlacementObservation {
  const name = text(object.metadata?.name);
  const uid = text(object.metadata?.uid);
  if (kind === 'Node') return { kind: 'stored', target: { kind: 'node', name }, uid, nodeName: '' };
  return {
    kind: 'stored',
    target: { kind: 'pod', namespace: text(object.metadata?.namespace), name },
    uid,
    nodeName: nodeNameOf(object),
  };
}

export function placementObservation(request: AdmissionRequest, admitted: boolean): PlacementObservation | undefined {
  if (!isPlacementRequest(request) || request.operation === 'CONNECT') return undefined;
  const isPod = request.resource.resource === 'pods';
  const kind = isPod ? 'Pod' : 'Node';
  const target = (object: KubeObject | null): Target | undefined => {
    const name = nameOf(request, object);
    if (name === '') return undefined;
    if (!isPod) return { kind: 'node', name };
    const namespace = request.namespace || text(object?.metadata?.namespace);
    return namespace === '' ? undefined : { kind: 'pod', namespace, name };
  };
  const facts = (object: KubeObject) => ({
    uid: text(object.metadata?.uid),
    nodeName: isPod ? nodeNameOf(object) : '',
  });

  if (isPod && request.subResource === 'binding') {
    const binding = request.object;
    if (!admitted || request.operation !== 'CREATE' || !isObjectOfKind(binding, 'Binding')) return undefined;
    const nodeName = text((binding as { target?: { name?: unknown } }).target?.name);
    const name = nameOf(request, binding);
    if (nodeName === '' || name === '' || request.namespace === '') return undefined;
    return { kind: 'bound', namespace: request.namespace, name, uid: text(binding.metadata?.uid), nodeName };
  }
  // Other subresources (eviction, ephemeralcontainers, resize...) teach through their oldObject.
  const old = request.oldObject;
  if (request.operation === 'DELETE' && request.subResource === '' && admitted) {
    const at = target(old);
    return at && { kind: 'deleted', target: at, uid: text(old?.metadata?.uid) };
  }
  if ((request.operation === 'UPDATE' || request.operation === 'DELETE') && isObjectOfKind(old, kind)) {
    const at = target(old);
    return at && { kind: 'stored', target: at, ...facts(old) };
  }
  if (
    request.operation === 'CREATE' &&
    request.subResource === '' &&
    admitted &&
    isObjectOfKind(request.object, kind) &&
    !(isPod && isNodeUser(request))
  ) {
    const at = target(request.object);
    return at && { kind: 'created', target: at, ...facts(request.object) };
  }
  return undefined;
}

/**
 * Where each learned kind is written: its API group, the Kind its objects carry, and its scope.
 * `labelsOnly`: plugins read nothing but the labels, so nothing else is kept (a Node's spec and
 * annotations change far more often than its labels, and none of them is read).
 */
export const LEARNED_OBJECT_KINDS: Readonly<
  Record<LearnedObjectKind, { group: string; kind: string; scope: 'Cluster' | 'Namespaced'; labelsOnly?: true }>
> = {
  storageclasses: { group: 'storage.k8s.io', kind: 'StorageClass', scope: 'Cluster' },
  ingressclasses: { group: 'networking.k8s.io', kind: 'IngressClass', scope: 'Cluster' },
  priorityclasses: { group: 'scheduling.k8s.io', kind: 'PriorityClass', scope: 'Cluster' },
  runtimeclasses: { group: 'node.k8s.io', kind: 'RuntimeClass', scope: 'Cluster' },
  clusterresourcequotas: { group: 'quota.openshift.io', kind: 'ClusterResourceQuota', scope: 'Cluster' },
  limitranges: { group: '', kind: 'LimitRange', scope: 'Namespaced' },
  nodes: { group: '', kind: 'Node', scope: 'Cluster', labelsOnly: true },
};

const isLearnedObjectKind = (need: string): need is LearnedObjectKind => Object.hasOwn(LEARNED_OBJECT_KINDS, need);

export const isNamespacedKind = (kind: LearnedObjectKind): boolean => LEARNED_OBJECT_KINDS[kind].scope === 'Namespaced';

/** The learned kinds a plugin needs, in the order it names them. */
export function learnedObjectKinds(metadata: Pick<PluginMetadata, 'needs'>): LearnedObjectKind[] {
  return metadata.needs.filter(isLearnedObjectKind);
}

/** The rules that feed learned objects: every write of each kind named in `needs`. */
export function learnedObjectRules(metadata: Pick<PluginMetadata, 'needs'>): WebhookRule[] {
  return learnedObjectKinds(metadata).map((kind) => ({
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    apiGroups: [LEARNED_OBJECT_KINDS[kind].group],
    apiVersions: ['v1'],
    resources: [kind],
    scope: LEARNED_OBJECT_KINDS[kind].scope,
  }));
}

/** The learned kind a request writes (the object itself, not a subresource), if any. */
export function learnedObjectKindOf(request: AdmissionRequest): LearnedObjectKind | undefined {
  const { group, resource } = request.resource;
  if (request.subResource !== '' || !isLearnedObjectKind(resource)) return undefined;
  return LEARNED_OBJECT_KINDS[resource].group === group ? resource : undefined;
}

/** Metadata a plugin may read from a learned object; the rest (managedFields above all) is dropped. */
const KEPT_METADATA = ['name', 'namespace', 'uid', 'labels', 'annotations', 'creationTimestamp'] as const;

/** Metadata kept of a kind whose labels are all that is read. */
const LABELS_ONLY_METADATA = ['name', 'uid', 'labels'] as const;

/**
 * The object as it is stored: kept metadata, every other top-level field but status; for a
 * `labelsOnly` kind, its name, uid and labels alone.
 */
export function trimLearnedObject(object: KubeObject, of?: LearnedObjectKind): KubeObject {
  const { metadata, status: _status, ...rest } = object;
  const labelsOnly = of !== undefined && LEARNED_OBJECT_KINDS[of].labelsOnly === true;
  const fields = labelsOnly ? LABELS_ONLY_METADATA : KEPT_METADATA;
  const kept = Object.fromEntries(
    fields.flatMap((field) => (metadata?.[field] === undefined ? [] : [[field, metadata[field]]])),
  );
  return labelsOnly ? { kind: LEARNED_OBJECT_KINDS[of].kind, metadata: kept } : { ...rest, metadata: kept };
}

/**
 * What one write of a learned kind teaches: the object as it now is, or that it is gone. `namespace`
 * is set for a namespaced kind (LimitRanges) and only then.
 */
export type LearnedObjectObservation =
  | { kind: 'stored'; of: LearnedObjectKind; name: string; namespace?: string; object: KubeObject }
  | { kind: 'deleted'; of: LearnedObjectKind; name: string; namespace?: string };

/** Only admitted writes teach (the handler asks); undefined when the request is not one. */
export function learnedObjectObservation(request: AdmissionRequest): LearnedObjectObservation | undefined {
  const of = learnedObjectKindOf(request);
  if (!of || request.operation === 'CONNECT') return undefined;
  const object = request.operation === 'DELETE' ? request.oldObject : request.object;
  const name = nameOf(request, object);
  if (name === '') return undefined;
  let where = {};
  if (isNamespacedKind(of)) {
    const namespace = request.namespace || text(object?.metadata?.namespace);
    if (namespace === '') return undefined;
    where = { namespace };
  }
  if (request.operation === 'DELETE') return { kind: 'deleted', of, name, ...where };
  if (!isObjectOfKind(object, LEARNED_OBJECT_KINDS[of].kind)) return undefined;
  return { kind: 'stored', of, name, ...where, object: trimLearnedObject(object, of) };
}

/** An object of a `kubectl get <kind> -o json` listing, as its learning webhook would record it. */
export function listedObjectObservation(
  of: LearnedObjectKind,
  object: KubeObject,
): Extract<LearnedObjectObservation, { kind: 'stored' }> {
  const namespace = isNamespacedKind(of) ? { namespace: text(object.metadata?.namespace) } : {};
  return { kind: 'stored', of, name: text(object.metadata?.name), ...namespace, object: trimLearnedObject(object, of) };
}
