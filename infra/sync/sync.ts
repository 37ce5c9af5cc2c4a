// What `npm run sync` loads into the store: objects that existed before the webhooks were
// installed (their writes were never seen), from `kubectl get ... -o json` listings.
//
//   kubectl get namespaces -o json        learned namespaces, and a complete listing: a namespace
//                                         absent from it is known not to exist (NamespaceLifecycle)
//   kubectl get resourcequotas -A -o json learned quotas (ResourceQuota)
//   kubectl get pods -A -o json           each pod's node and uid (NodeRestriction), and a recount
//                                         of the quota ledger (and the other counted kinds:
//                                         services, configmaps, deployments...)
//   kubectl get nodes -o json             each Node's uid (NodeRestriction) and labels
//                                         (OriginPodNodeEnvironment): a complete listing, so a
//                                         learned Node absent from it is removed
//   kubectl get storageclasses,ingressclasses,priorityclasses,runtimeclasses -o json
//                                         learned objects (DefaultStorageClass, Priority...): each a
//                                         complete listing of its kind, so a learned object absent
//                                         from it is removed
//   kubectl get clusterresourcequotas -o json
//                                         learned ClusterResourceQuotas (a complete listing, as the
//                                         classes); with the counted kinds' listings, each learned
//                                         ClusterResourceQuota's ledger is recounted from the
//                                         objects of the namespaces it selects
//   kubectl get limitranges -A -o json    learned LimitRanges (LimitRanger), complete as the classes
//                                         are: every namespace's, so list them with -A
//
// Records are written as the webhooks write them, through lib/state, never around it.
import type { KubeObject } from '../../lib/admission/types.js';
import { qualifiedResource } from '../../lib/admission/request.js';
import type { NamespaceRecord } from '../../lib/admission/learning.js';
import { LEARNED_OBJECT_KINDS, listedObjectObservation, listedObservation } from '../../lib/admission/learning.js';
import type { Charge, ChargedObject, LearnedObjectKind } from '../../lib/admission/ports.js';
import { clusterQuotaOf, selectsNamespace } from '../../lib/quota/cluster-quota.js';
import { quotaOf } from '../../lib/quota/quota.js';
import { COUNTED, usageOf } from '../../lib/quota/usage.js';
import { ClusterQuotaLedgerStore } from '../../lib/state/cluster-quota-ledger.js';
import { LearnedObjectStore } from '../../lib/state/learned-objects.js';
import { LearnedNamespaceStore } from '../../lib/state/namespaces.js';
import { LearnedPlacementStore } from '../../lib/state/placements.js';
import { QuotaLedgerStore } from '../../lib/state/quota-ledger.js';
import type { StateStore } from '../../lib/state/store.js';

/** A listing that cannot be loaded: exit 1 with this message. */
/** A listed object: the parser refuses an item without metadata.name. */
export type ListedObject = KubeObject & { metadata: { name: string } };
const isNamed = (object: KubeObject): object is ListedObject =>
  typeof object.metadata?.name === 'string' && object.metadata.name !== '';

export class SyncError extends Error {
  override readonly name = 'SyncError';
}

/** Kinds the ledger counts, by `<group>/<Kind>`, with their resource. */
const COUNTED_KINDS: ReadonlyMap<string, { group: string; resource: string }> = new Map(
  COUNTED.flatMap(({ group, kinds }) =>
    Object.entries(kinds).map(([resource, kind]) => [`${group}/${kind}`, { group, resource }] as const),
  ),
);

export interface Listing {
  readonly file: string;
  /** The items of one kind (`Namespace`, `ResourceQuota`, `apps/Deployment`...). */
  readonly byKind: ReadonlyMap<string, ListedObject[]>;
}

const groupOf = (apiVersion: unknown): string =>
  typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

/**
 * Reads a `kubectl get -o json` output: a `List` (or a typed `NamespaceList`, `PodList`...) whose
 * items name their kind. A single object is accepted as a list of one.
 */
export function parseListing(text: string, file: string): Listing {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new SyncError(`${file}: not JSON (${(error as Error).message}); pass the output of kubectl get ... -o json`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new SyncError(`${file}: not a Kubernetes object or List`);
  const doc = document as { kind?: unknown; apiVersion?: unknown; items?: unknown };
  const listKind = typeof doc.kind === 'string' && doc.kind.endsWith('List') ? doc.kind : undefined;
  const items = listKind ? (doc.items ?? []) : [doc];
  if (!Array.isArray(items)) throw new SyncError(`${file}: items is not a list`);
  const byKind = new Map<string, ListedObject[]>();
  items.forEach((item: unknown, i) => {
    if (typeof item !== 'object' || item === null) throw new SyncError(`${file}: items[${i}] is not an object`);
    const object = item as KubeObject;
    // Typed lists (NamespaceList) may leave the kind out of their items.
    const kind =
      typeof object.kind === 'string' && object.kind !== ''
        ? object.kind
        : listKind && listKind !== 'List'
          ? listKind.slice(0, -'List'.length)
          : '';
    if (kind === '') throw new SyncError(`${file}: items[${i}] has no kind`);
    if (!isNamed(object)) throw new SyncError(`${file}: items[${i}] (${kind}) has no metadata.name`);
    const group = groupOf(object.apiVersion ?? doc.apiVersion);
    const key = kind === 'Namespace' || kind === 'ResourceQuota' ? kind : `${group}/${kind}`;
    byKind.set(key, [...(byKind.get(key) ?? []), object]);
  });
  return { file, byKind };
}

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

/** The namespace as its own webhook would have recorded a write of it. */
export function namespaceRecord(object: KubeObject): NamespaceRecord {
  const status = object.status as { phase?: unknown } | undefined;
  const terminating =
    status?.phase === 'Terminating' ||
    (object.metadata?.deletionTimestamp !== undefined && object.metadata?.deletionTimestamp !== null);
  return {
    labels: stringMap(object.metadata?.labels),
    annotations: stringMap(object.metadata?.annotations),
    phase: terminating ? 'Terminating' : 'Active',
  };
}

/**
 * Where listings are loaded: the store the webhooks use (`npm run sync`), or the in-memory state of
 * `npm run audit` (infra/check). The methods are lib/state's own, so both record alike.
 */
export interface ListingTarget {
  readonly namespaces: Pick<LearnedNamespaceStore, 'get' | 'record' | 'recordCompleteListing'>;
  readonly ledger: Pick<QuotaLedgerStore, 'recordQuota' | 'recount'>;
  readonly clusterQuotaLedger: Pick<ClusterQuotaLedgerStore, 'recount'>;
  readonly placements: Pick<LearnedPlacementStore, 'record'>;
  readonly learnedObjects: Pick<LearnedObjectStore, 'list' | 'replaceAll'>;
  now(): number;
}

/** The store the webhooks use, as a listing target. */
export function storeTarget(store: StateStore, runId: string): ListingTarget {
  return {
    namespaces: new LearnedNamespaceStore(store),
    ledger: new QuotaLedgerStore(store, runId),
    clusterQuotaLedger: new ClusterQuotaLedgerStore(store, runId),
    placements: new LearnedPlacementStore(store),
    learnedObjects: new LearnedObjectStore(store),
    now: () => store.now(),
  };
}

/**
 * Loads the listings into the store, namespaces first, then quotas, then recounts. A recount
 * covers every namespace that has objects of the kind in the listing, plus every namespace named
 * in a namespace or quota listing of the same run (where the kind has none left).
 */
export async function applyListings(
  listings: readonly Listing[],
  into: StateStore | ListingTarget,
  runId: string,
  progress: (line: string) => void,
): Promise<void> {
  const target = 'ledger' in into ? into : storeTarget(into, runId);
  const all = (key: string) => listings.flatMap((l) => l.byKind.get(key) ?? []);
  const knownNamespaces = new Set<string>();

  const namespaces = all('Namespace');
  if (namespaces.length > 0) {
    const learner = target.namespaces;
    for (const ns of namespaces) {
      await learner.record(ns.metadata.name, namespaceRecord(ns), runId);
      knownNamespaces.add(ns.metadata.name);
    }
    await learner.recordCompleteListing(target.now());
    progress(`namespaces: ${namespaces.length} recorded (complete listing)`);
  }

  const { ledger } = target;
  const quotas = all('ResourceQuota');
  if (quotas.length > 0) {
    for (const quota of quotas) {
      if (!quota.metadata?.namespace)
        throw new SyncError(`ResourceQuota ${quota.metadata?.name} has no metadata.namespace`);
      await ledger.recordQuota(quotaOf(quota, quota.metadata.namespace, quota.metadata.name));
      knownNamespaces.add(quota.metadata.namespace);
    }
    progress(`resourcequotas: ${quotas.length} recorded`);
  }

  // A listing shows stored objects, as an UPDATE's oldObject does (and revives no pod seen deleted).
  const { placements } = target;
  // Nodes are also a learned kind (their labels): the line below reports them once, for both.
  for (const node of all('/Node')) await placements.record(listedObservation('Node', node));
  const pods = all('/Pod');
  for (const pod of pods) {
    if (!pod.metadata?.namespace) throw new SyncError(`Pod ${pod.metadata?.name} has no metadata.namespace`);
    await placements.record(listedObservation('Pod', pod));
  }
  if (pods.length > 0) progress(`pods: ${pods.length} placements recorded`);

  // Classes, ClusterResourceQuotas, LimitRanges and Nodes: a listing of a kind is all of it
  // (kubectl get <kind> [-A] -o json).
  const { learnedObjects } = target;
  const learnedKeys = new Set<string>();
  for (const [resource, { group, kind, scope }] of Object.entries(LEARNED_OBJECT_KINDS) as [
    LearnedObjectKind,
    (typeof LEARNED_OBJECT_KINDS)[LearnedObjectKind],
  ][]) {
    const key = `${group}/${kind}`;
    learnedKeys.add(key);
    if (!listings.some((l) => l.byKind.has(key))) continue;
    const items = all(key);
    for (const item of items) {
      if (scope === 'Namespaced' && !item.metadata?.namespace)
        throw new SyncError(`${kind} ${item.metadata?.name} has no metadata.namespace`);
    }
    const removed = await learnedObjects.replaceAll(
      resource,
      items.map((item) => listedObjectObservation(resource, item)),
      runId,
    );
    progress(`${resource}: ${items.length} recorded (complete listing)${removed ? `, ${removed} removed` : ''}`);
  }

  const kinds = new Set(listings.flatMap((l) => [...l.byKind.keys()]));
  const clusterQuotas = await clusterQuotaRecounter(target);
  for (const key of [...kinds].sort()) {
    if (key === 'Namespace' || key === 'ResourceQuota' || key === '/Node' || learnedKeys.has(key)) continue;
    const counted = COUNTED_KINDS.get(key);
    const items = all(key);
    if (!counted) {
      progress(`${key.replace(/^\//, '')}: ${items.length} skipped (not a kind this project learns or counts)`);
      continue;
    }
    const resource = qualifiedResource(counted);
    const perNamespace = new Map<string, { object: ChargedObject; charge: Charge }[]>(
      [...knownNamespaces].map((ns) => [ns, []]),
    );
    for (const item of items) {
      const namespace = item.metadata?.namespace;
      if (!namespace) throw new SyncError(`${key.replace(/^\//, '')} ${item.metadata?.name} has no metadata.namespace`);
      const uid = item.metadata?.uid;
      const object: ChargedObject = {
        namespace,
        resource,
        name: item.metadata.name,
        ...(typeof uid === 'string' && uid !== '' && { uid }),
      };
      perNamespace.set(namespace, [...(perNamespace.get(namespace) ?? []), { object, charge: usageOf(counted, item) }]);
    }
    let written = 0;
    let removed = 0;
    for (const [namespace, objects] of perNamespace) {
      const result = await ledger.recount(namespace, new Set([resource]), objects);
      written += result.written;
      removed += result.removed;
    }
    progress(
      `${resource}: ${written} counted in ${perNamespace.size} namespace${perNamespace.size === 1 ? '' : 's'}${removed ? `, ${removed} stale charge${removed === 1 ? '' : 's'} removed` : ''}`,
    );
    await clusterQuotas?.(resource, perNamespace, progress);
  }
}

/**
 * Recounts each learned ClusterResourceQuota's ledger for one counted resource: the listed objects
 * of the namespaces it selects (learned namespaces, this run's listing included). undefined when
 * no ClusterResourceQuota is learned.
 */
async function clusterQuotaRecounter(target: ListingTarget) {
  const quotas = (await target.learnedObjects.list('clusterresourcequotas')).map(({ object }) =>
    clusterQuotaOf(object),
  );
  if (quotas.length === 0) return undefined;
  const { namespaces, clusterQuotaLedger: ledger } = target;
  const selected = new Map<string, Set<string>>(); // namespace -> the quotas selecting it
  const quotasOf = async (namespace: string) => {
    let names = selected.get(namespace);
    if (names === undefined) {
      const learned = await namespaces.get(namespace);
      names = new Set(learned ? quotas.filter((q) => selectsNamespace(q, learned)).map((q) => q.name) : []);
      selected.set(namespace, names);
    }
    return names;
  };
  return async (
    resource: string,
    perNamespace: ReadonlyMap<string, { object: ChargedObject; charge: Charge }[]>,
    progress: (line: string) => void,
  ) => {
    const listed = new Set(perNamespace.keys());
    for (const quota of quotas) {
      const own = [];
      for (const [namespace, objects] of perNamespace)
        if ((await quotasOf(namespace)).has(quota.name)) own.push(...objects);
      const { written, removed } = await ledger.recount(quota.name, new Set([resource]), own, listed);
      progress(
        `${resource}: ${written} counted for clusterresourcequota ${quota.name}${removed ? `, ${removed} stale charge${removed === 1 ? '' : 's'} removed` : ''}`,
      );
    }
  };
}
