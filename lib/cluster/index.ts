// lib/cluster: the cluster reader. It reads the kinds the active plugins need from the
// kube-apiserver (lib/kube's client) into the store's learned-state records (lib/state), so the
// plugins judge the cluster's committed state (docs/seed-state.md).
import type { PluginMetadata } from '../admission/plugin.js';
import { ApiClient } from '../kube/api-client.js';
import type { ClusterCredentials } from '../kube/cluster-credentials.js';
import type { ReaderMetrics, StoreCall } from '../metrics/index.js';
import type { DynamoDb } from '../state/dynamodb.js';
import { StateStore } from '../state/store.js';
import { listedObjectObservation } from '../admission/learning.js';
import type { KubeObject } from '../admission/types.js';
import type { ReadThrough } from '../state/index.js';
import type { ReadKind } from './kinds.js';
import { objectPath, readKinds } from './kinds.js';
import { namespaceRecordOf } from './sinks.js';
import { ClusterWatcher } from './watcher.js';

export { collectionPath, objectPath, readKinds } from './kinds.js';
export type { ReadKind } from './kinds.js';
export { ClusterWatcher } from './watcher.js';

export interface ClusterReaderOptions {
  readonly credentials: ClusterCredentials;
  readonly plugins: readonly Pick<PluginMetadata, 'needs'>[];
  readonly dynamoDb: DynamoDb;
  readonly tableName: string;
  readonly metrics?: ReaderMetrics;
  readonly onStoreCall?: (call: StoreCall) => void;
  readonly log?: (line: string) => void;
  readonly watchSeconds?: number;
  readonly maxBackoffMs?: number;
}

export interface ClusterReader {
  readonly client: ApiClient;
  /** Store misses read from the apiserver (setReadThrough). */
  readonly readThrough: ReadThrough;
  readonly watcher: ClusterWatcher;
  /** The kinds read, by kubectl name. */
  readonly kinds: readonly string[];
}

/** The reader of the kinds `plugins` need; start() its watcher. undefined when none reads anything. */
export function clusterReader(options: ClusterReaderOptions): ClusterReader | undefined {
  const kinds = readKinds(options.plugins);
  if (kinds.length === 0) return undefined;
  const client = new ApiClient(options.credentials);
  // The reader's writes are never a dry run: it records committed state.
  const store = new StateStore(options.dynamoDb, options.tableName, false, Date.now, options.onStoreCall);
  const watcher = new ClusterWatcher({
    client,
    kinds,
    store,
    metrics: options.metrics,
    log: options.log,
    watchSeconds: options.watchSeconds,
    maxBackoffMs: options.maxBackoffMs,
  });
  return { client, watcher, readThrough: clusterReadThrough(client, kinds), kinds: kinds.map((k) => k.name) };
}

/**
 * The read-through of store misses: a GET of one namespace or one object by name (the kinds the
 * reader reads, and nothing else: its RBAC grants exactly those), with a short timeout, its answer
 * kept `cacheMs` (a miss is asked once per burst of requests, not once per request). undefined
 * when the apiserver cannot answer in time: the plugin's documented never-seen answer then applies.
 */
export function clusterReadThrough(
  client: ApiClient,
  kinds: readonly ReadKind[],
  options: { timeoutMs?: number; cacheMs?: number } = {},
): ReadThrough {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const cacheMs = options.cacheMs ?? 2_000;
  const cache = new Map<string, { at: number; answer: Promise<KubeObject | 'absent' | undefined> }>();
  const read = (path: string) => {
    const now = Date.now();
    const cached = cache.get(path);
    if (cached && now - cached.at < cacheMs) return cached.answer;
    const answer = client
      .get(path, timeoutMs)
      .then((object) => object ?? ('absent' as const))
      .catch(() => undefined);
    cache.set(path, { at: now, answer });
    if (cache.size > 1_000) cache.delete(cache.keys().next().value as string);
    return answer;
  };
  const byResource = new Map(kinds.map((kind) => [kind.resource, kind]));
  const namespaces = byResource.get('namespaces');
  return {
    namespace: async (name) => {
      if (!namespaces?.uses.has('namespaces')) return undefined;
      const object = await read(objectPath(namespaces, name));
      return typeof object === 'object' ? namespaceRecordOf(object) : object;
    },
    object: async (of, name, namespace) => {
      const kind = byResource.get(of);
      if (!kind?.uses.has('learned')) return undefined;
      const object = await read(objectPath(kind, name, namespace));
      return typeof object === 'object' ? listedObjectObservation(of, { ...object, kind: kind.kind }).object : object;
    },
  };
}
