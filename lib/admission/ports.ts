// What plugins may know about the cluster beyond the request, and the only way they record side
// effects. Plugins see these interfaces; lib/state implements them over DynamoDB, and the dryRun
// gate lives behind them (a dry run reads but never writes).
import type { KubeObject } from './types.js';

/** A namespace as last seen by one of our Namespace webhooks or loaded by `npm run sync`. */
export interface LearnedNamespace {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** Terminating once a DELETE was seen or status.phase said so. */
  readonly phase: 'Active' | 'Terminating';
  /** ISO time of the observation. */
  readonly observedAt: string;
}

export interface LearnedNamespaces {
  /** undefined when the namespace was never seen: each plugin documents what it then does. */
  get(name: string): Promise<LearnedNamespace | undefined>;
  /**
   * True when the namespace is known not to exist: its final DELETE was seen, or it was absent from
   * a complete listing loaded by `npm run sync` and has not been seen since. Never-seen is not
   * known-absent unless such a listing exists.
   */
  knownAbsent(name: string): Promise<boolean>;
}

/**
 * Where a pod runs, as last seen: in the stored object the apiserver sends with every UPDATE and
 * DELETE (`oldObject`), in a pod's CREATE, in the scheduler's Binding, or in `npm run sync`.
 */
export interface LearnedPod {
  readonly namespace: string;
  readonly name: string;
  /** metadata.uid; '' when no observation carried it. */
  readonly uid: string;
  /** spec.nodeName; '' for a pod not yet bound. */
  readonly nodeName: string;
  /** ISO time of the observation. */
  readonly observedAt: string;
}

/** A Node's identity, as last seen in a stored Node (an UPDATE's or DELETE's oldObject) or sync. */
export interface LearnedNode {
  readonly name: string;
  readonly uid: string;
  readonly observedAt: string;
}

/** Pods' node bindings and Nodes' UIDs (NodeRestriction's informer lookups). */
export interface LearnedPlacements {
  /** undefined when the pod was never seen, or its DELETE was. */
  pod(namespace: string, name: string): Promise<LearnedPod | undefined>;
  /** undefined when the Node was never seen, or its DELETE was. */
  node(name: string): Promise<LearnedNode | undefined>;
}

/** Object identity a charge is keyed by: forged or repeated reviews of one object count once. */
export interface ChargedObject {
  readonly namespace: string;
  /** `pods`, `deployments.apps`: the group-qualified resource. */
  readonly resource: string;
  readonly name: string;
  /** metadata.uid when the request carries it (validating webhooks see it on CREATE). */
  readonly uid?: string;
}

/**
 * A ResourceQuota as learned from its writes (lib/state records them for every plugin that needs
 * `resourcequotas`; plugins only read): what quota evaluation (lib/quota) reads.
 */
export interface LearnedQuota {
  readonly namespace: string;
  readonly name: string;
  /** spec.hard, quantities as written. */
  readonly hard: Readonly<Record<string, string>>;
  readonly scopes: readonly string[];
  /** spec.scopeSelector as written (matchExpressions). */
  readonly scopeSelector?: unknown;
}

/** What one object consumes, and the facts quota scopes are matched against (lib/quota's Usage). */
export interface Charge {
  /** resource name (`pods`, `requests.cpu`, `count/deployments.apps`) → quantity as a string. */
  readonly usage: Readonly<Record<string, string>>;
  /** Scope facts (BestEffort, Terminating, PriorityClass...) of the charged object: lib/quota/usage.ts. */
  readonly facts: Readonly<Record<string, string | boolean>>;
}

/** A live charge of the namespace, as the quota check sees it. */
export interface LiveCharge extends Charge {
  readonly object: ChargedObject;
  readonly state: 'reserved' | 'confirmed';
}

export interface QuotaSnapshot {
  readonly quotas: readonly LearnedQuota[];
  /** Confirmed charges and unexpired reservations; expired ones never count. */
  readonly charges: readonly LiveCharge[];
}

/**
 * What a quota check would answer for a queued request known only by its charge: refused
 * (`exceeds`), admitted (`fits`), or `unknown` when that depends on the object itself.
 */
export type QueuedVerdict = 'fits' | 'exceeds' | 'unknown';

export type ReserveOutcome<Refusal> =
  | { readonly kind: 'reserved' }
  /** The same request (by uid) already reserved this object: a retry counts once. */
  | { readonly kind: 'already-counted' }
  /** Another request already holds the object's name: the apiserver will answer AlreadyExists. */
  | { readonly kind: 'name-taken' }
  | { readonly kind: 'refused'; readonly refusal: Refusal };

export interface QuotaLedger {
  /** The learned quotas of a namespace. */
  quotas(namespace: string): Promise<LearnedQuota[]>;
  /**
   * Atomically: reads the namespace's quotas and live charges, asks `check` whether the charge
   * fits, and reserves it when it does. Concurrent reservations in one namespace are serialised by
   * a conditional write, so quotas are never overshot. A dry run checks and writes nothing.
   * `judge`, when given, says what `check` would answer for another request queued ahead (known by
   * its charge alone), so a request that cannot fit behind them is refused without waiting for
   * their writes; without it, such a request waits until they have decided.
   */
  reserve<Refusal>(
    object: ChargedObject,
    charge: Charge,
    check: (snapshot: QuotaSnapshot) => Refusal | undefined,
    judge?: (snapshot: QuotaSnapshot, queued: LiveCharge) => QueuedVerdict,
  ): Promise<ReserveOutcome<Refusal>>;
  /** A later observation proves the object exists: its charge stops expiring (or is re-created). */
  confirm(object: ChargedObject, charge: Charge): Promise<void>;
  /** The object is being deleted: its charge stops counting. */
  release(object: ChargedObject): Promise<void>;
}

/**
 * What each ClusterResourceQuota counts across the namespaces it selects: one ledger per quota
 * (not per namespace), with QuotaLedger's guarantees (queued, conditional, idempotent by request
 * uid, reservations that expire unless confirmed). The quota itself is a learned object
 * (`clusterresourcequotas`); `check` receives the quota's live charges, every namespace's. A dry
 * run checks and writes nothing.
 */
export interface ClusterQuotaLedger {
  reserve<Refusal>(
    quota: string,
    object: ChargedObject,
    charge: Charge,
    check: (charges: readonly LiveCharge[]) => Refusal | undefined,
  ): Promise<ReserveOutcome<Refusal>>;
  /** A later observation proves the object exists: its charge stops expiring (or is re-created). */
  confirm(quota: string, object: ChargedObject, charge: Charge): Promise<void>;
  /** The object is being deleted, or its request refused by another quota: its charge stops counting. */
  release(quota: string, object: ChargedObject): Promise<void>;
}

/** Token bucket parameters, as EventRateLimit's limits give them. */
export interface BucketSpec {
  readonly qps: number;
  readonly burst: number;
}

export interface TokenBuckets {
  /**
   * Takes one token from every named bucket (all or none), shared by every Lambda instance.
   * Returns the index of the first bucket without a token, or -1 when all had one. A retry of the
   * same request uid takes nothing twice. A dry run takes nothing.
   */
  take(buckets: readonly { readonly key: string; readonly spec: BucketSpec }[]): Promise<number>;
  /**
   * As `take`, but reports every bucket without a token (ascending indices; [] when the tokens were
   * taken), for messages that name each limit reached. Nothing is taken unless every bucket has one.
   */
  takeAll(buckets: readonly { readonly key: string; readonly spec: BucketSpec }[]): Promise<number[]>;
}

/** Cached answers of an external backend (ImagePolicyWebhook), shared across Lambda instances. */
export interface DecisionCache {
  get(key: string): Promise<{ allowed: boolean; reason: string; annotations: Record<string, string> } | undefined>;
  put(
    key: string,
    value: { allowed: boolean; reason: string; annotations: Record<string, string> },
    ttlSeconds: number,
  ): Promise<void>;
}

/**
 * Kinds learned whole (trimmed), by their resource name: the cluster-scoped classes and
 * ClusterResourceQuotas, LimitRanges (namespaced: learned and listed per namespace), and Nodes, of
 * which only the name, uid and labels are kept (OriginPodNodeEnvironment checks a pod's node
 * against its project's node selector).
 */
export type LearnedObjectKind =
  | 'storageclasses'
  | 'ingressclasses'
  | 'priorityclasses'
  | 'runtimeclasses'
  | 'clusterresourcequotas'
  | 'limitranges'
  | 'nodes';

/**
 * One object of a learned kind as last seen by the plugin's learning webhook or loaded by
 * `npm run sync`: metadata trimmed to name, uid, labels, annotations and creationTimestamp; the
 * rest of the object (spec fields, `value`, `handler`, `overhead`...) as written; no status. A
 * Node keeps only its name, uid and labels.
 */
export interface LearnedObject {
  readonly name: string;
  /** The object's namespace, for a namespaced kind (LimitRanges); undefined for cluster-scoped ones. */
  readonly namespace?: string;
  readonly object: KubeObject;
  /** ISO time of the observation. */
  readonly observedAt: string;
}

export interface LearnedObjects {
  /**
   * undefined when no object of that name was ever seen, or its DELETE was: each plugin says what
   * it then does. A namespaced kind names its namespace.
   */
  get(kind: LearnedObjectKind, name: string, namespace?: string): Promise<LearnedObject | undefined>;
  /**
   * Every live object of the kind, by name; for a namespaced kind given a namespace, those of that
   * namespace only (one Query either way).
   */
  list(kind: LearnedObjectKind, namespace?: string): Promise<LearnedObject[]>;
}

/** The state a plugin's phase functions receive, scoped to one request. */
export interface PluginState {
  readonly learnedNamespaces: LearnedNamespaces;
  readonly learnedObjects: LearnedObjects;
  readonly learnedPlacements: LearnedPlacements;
  readonly quotaLedger: QuotaLedger;
  readonly clusterQuotaLedger: ClusterQuotaLedger;
  readonly tokenBuckets: TokenBuckets;
  readonly decisionCache: DecisionCache;
}

/** Thrown when the store cannot be reached or refuses: answered as HTTP 5xx, never an allow. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

const unavailable = async (): Promise<never> => {
  throw new StoreUnavailableError('no store is configured for this plugin (DYNAMODB_ENDPOINT / STATE_TABLE)');
};

/** The state of a deployment without a store: every read fails loudly (HTTP 500). */
export const NO_STATE: PluginState = {
  learnedNamespaces: { get: unavailable, knownAbsent: unavailable },
  learnedObjects: { get: unavailable, list: unavailable },
  learnedPlacements: { pod: unavailable, node: unavailable },
  quotaLedger: {
    quotas: unavailable,
    reserve: unavailable,
    confirm: unavailable,
    release: unavailable,
  },
  clusterQuotaLedger: { reserve: unavailable, confirm: unavailable, release: unavailable },
  tokenBuckets: { take: unavailable, takeAll: unavailable },
  decisionCache: { get: unavailable, put: unavailable },
};
