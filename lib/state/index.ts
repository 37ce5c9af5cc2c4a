// lib/state: learned cluster state and the side-effect ledger over one DynamoDB table, behind the
// ports plugins see (ports.ts). Every write passes the dryRun gate in store.ts.
import type { AdmissionRequest } from '../admission/request.js';
import type { StoreCall } from '../metrics/index.js';
import { sharedDynamoDb, stateTableName } from './client.js';
import type { DynamoDb } from './dynamodb.js';
import { ClusterQuotaLedgerStore } from './cluster-quota-ledger.js';
import { DecisionCacheStore } from './decision-cache.js';
import type { ObjectReadThrough } from './learned-objects.js';
import type { NamespaceReadThrough } from './namespaces.js';
import { LearnedNamespaceStore } from './namespaces.js';
import { LearnedObjectStore } from './learned-objects.js';
import { LearnedPlacementStore } from './placements.js';
import type { PluginState } from '../admission/ports.js';
import { QuotaLedgerStore } from './quota-ledger.js';
import { StateStore } from './store.js';
import { TokenBucketStore } from './token-buckets.js';
import { clusterPartitioned } from './cluster-partition.js';

export { DEFAULT_STATE_TABLE, localDynamoDb, sharedDynamoDb, stateTableName } from './client.js';
export type { DynamoDb } from './dynamodb.js';
export { LearnedNamespaceStore } from './namespaces.js';
export type { NamespaceReadThrough } from './namespaces.js';
export type { ObjectReadThrough } from './learned-objects.js';
export { LearnedObjectStore } from './learned-objects.js';
export { LearnedPlacementStore } from './placements.js';
export { QuotaLedgerStore, reservationSecondsFromEnv } from './quota-ledger.js';
export { ClusterQuotaLedgerStore } from './cluster-quota-ledger.js';
export { TTL_ATTRIBUTE } from './table.js';
export { clusterKeyPrefix, clusterPartitioned } from './cluster-partition.js';
export { StateStore } from './store.js';
export * from '../admission/ports.js';

/**
 * What the stateful handler's learning step calls, whatever keeps the state: this store, or the
 * in-memory adapter of `npm run check` (infra/check). Each learner records one request's lesson
 * (lib/admission/learning says what a request teaches); a dry run records nothing.
 */
export interface LearningState extends PluginState {
  readonly namespaceLearner: { observe(request: AdmissionRequest): Promise<void> };
  readonly placementLearner: { observe(request: AdmissionRequest, admitted: boolean): Promise<void> };
  readonly quotaLearner: { observe(request: AdmissionRequest): Promise<void> };
  readonly objectLearner: { observe(request: AdmissionRequest): Promise<void> };
}

/** The request-scoped state of a plugin and the learning port the handler uses. */
export interface RequestState extends LearningState {
  /** Records a Namespace write (the handler calls it; dry runs write nothing). */
  readonly namespaceLearner: LearnedNamespaceStore;
  /** Records a pod or Node write (the handler calls it; dry runs write nothing). */
  readonly placementLearner: LearnedPlacementStore;
  /** Records a ResourceQuota write into the ledger (the handler calls it; dry runs write nothing). */
  readonly quotaLearner: QuotaLedgerStore;
  /** Records a write of a learned kind (StorageClass...; the handler calls it; dry runs write nothing). */
  readonly objectLearner: LearnedObjectStore;
}

export interface StateOptions {
  /**
   * The plugin whose state this is (its metadata.name): the decision cache keeps its entries under
   * it (`cache#<plugin>#<key>`), so two plugins never read each other's cached answers.
   */
  readonly plugin: string;
  readonly client: DynamoDb;
  readonly tableName: string;
  /** For tests of expiry: the clock the store compares TTLs with. */
  readonly now?: () => number;
  /** Told of every store call (lib/metrics' recordStoreCall). */
  readonly onStoreCall?: (call: StoreCall) => void;
  /** The cluster reader's live GETs of a namespace or an object the store does not hold. */
  readonly readThrough?: ReadThrough;
}

/** What a store miss reads from the apiserver when the cluster is read (lib/cluster's clusterReadThrough). */
export interface ReadThrough {
  readonly namespace: NamespaceReadThrough;
  readonly object: ObjectReadThrough;
}

let processReadThrough: ReadThrough | undefined;
const clusterReadThroughs = new Map<string, ReadThrough>();

/**
 * The process's cluster reader answers store misses from now on (npm start, the reader's wiring);
 * in a fleet, each cluster's reader answers its own cluster's.
 */
export function setReadThrough(readThrough: ReadThrough | undefined, cluster?: string): void {
  if (cluster === undefined) processReadThrough = readThrough;
  else if (readThrough === undefined) clusterReadThroughs.delete(cluster);
  else clusterReadThroughs.set(cluster, readThrough);
}

/** One plugin's state for one request over an explicit client and table (tests, benches). */
export function createRequestState(
  request: Pick<AdmissionRequest, 'uid' | 'dryRun'>,
  options: StateOptions,
): RequestState {
  const store = new StateStore(options.client, options.tableName, request.dryRun, options.now, options.onStoreCall);
  const namespaces = new LearnedNamespaceStore(store, options.readThrough?.namespace);
  const placements = new LearnedPlacementStore(store);
  const ledger = new QuotaLedgerStore(store, request.uid);
  const objects = new LearnedObjectStore(store, options.readThrough?.object);
  return {
    learnedObjects: objects,
    objectLearner: objects,
    learnedNamespaces: namespaces,
    namespaceLearner: namespaces,
    learnedPlacements: placements,
    placementLearner: placements,
    quotaLedger: ledger,
    quotaLearner: ledger,
    clusterQuotaLedger: new ClusterQuotaLedgerStore(store, request.uid),
    tokenBuckets: new TokenBucketStore(store, request.uid),
    decisionCache: new DecisionCacheStore(store, options.plugin),
  };
}

export function stateFor(options: StateOptions): (request: AdmissionRequest) => RequestState {
  return (request) => createRequestState(request, options);
}

/**
 * The deployed wiring of one plugin's state: the module-scope client (DYNAMODB_ENDPOINT locally,
 * the real service when deployed) and STATE_TABLE (default serverless-admission-state), read at
 * each request so a test or the local server may set them after import.
 */
export function stateFromEnv(
  plugin: string,
  onStoreCall?: (call: StoreCall) => void,
  cluster?: string,
): (request: AdmissionRequest) => RequestState {
  // A fleet's cluster sees its own partitions of the table only (cluster-partition.ts).
  return (request) =>
    createRequestState(request, {
      plugin,
      client: cluster === undefined ? sharedDynamoDb() : clusterPartitioned(sharedDynamoDb(), cluster),
      tableName: stateTableName(),
      onStoreCall,
      readThrough: cluster === undefined ? processReadThrough : clusterReadThroughs.get(cluster),
    });
}
