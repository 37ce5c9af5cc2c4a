// The partition keys of the state table, declared once. Every store builds its keys from these
// prefixes (table.ts lists the records), and every function's IAM role may touch only the
// partitions of the state its plugin reads or writes: `partitionPatterns` is the role's
// `dynamodb:LeadingKeys` condition (infra/serverless/functions.ts), so one compromised function
// cannot rewrite another plugin's ledger or forge state it does not itself learn. A new kind of
// record, or a new writer of learned state (a cluster reader), extends this file and nothing else.
import type { ClusterStateNeed, PluginMetadata, SideEffectLedger } from '../admission/plugin.js';
import { clusterKeyPrefix } from './cluster-partition.js';

export const PARTITION = {
  /** `ns#<name>`: a learned namespace; `ns#` alone: a complete listing was loaded. */
  namespace: 'ns#',
  /** `pod#<namespace>/<name>`: a learned pod's uid and node. */
  pod: 'pod#',
  /** `node#<name>`: a learned Node's uid. */
  node: 'node#',
  /** `obj#<kind>`: every learned object of one kind. */
  learnedObject: 'obj#',
  /** `rq#<namespace>[#queue]`: a namespace's ResourceQuotas, charges and reservation queue. */
  quota: 'rq#',
  /** `crq#<quota>[#queue]`: a ClusterResourceQuota's charges and reservation queue. */
  clusterQuota: 'crq#',
  /** `erl#<bucket key>`: an EventRateLimit token bucket. */
  tokenBucket: 'erl#',
  /** `req#<plugin>#<uid>`: a request's idempotency record. */
  request: 'req#',
  /** `cache#<plugin>#<key>`: a plugin's cached backend decision. */
  decisionCache: 'cache#',
} as const;

/** The plugin segment of EventRateLimit's idempotency records (`req#erl#<uid>`). */
export const TOKEN_BUCKET_REQUESTS = `${PARTITION.request}erl#`;

/**
 * The partitions (IAM StringLike patterns) a reader or writer of one kind of cluster state
 * touches: the learning webhook of a plugin that needs it, and any reader that keeps it in step.
 */
export function needPartitions(need: ClusterStateNeed): string[] {
  switch (need) {
    case 'namespaces':
      return [`${PARTITION.namespace}*`];
    case 'placements':
      return [`${PARTITION.pod}*`, `${PARTITION.node}*`];
    case 'resourcequotas':
      return [`${PARTITION.quota}*`];
    default:
      return [`${PARTITION.learnedObject}${need}`];
  }
}

/** The partitions of one side-effect ledger, as the plugin named `plugin` keeps it. */
export function ledgerPartitions(ledger: SideEffectLedger, plugin: string): string[] {
  switch (ledger) {
    case 'quotaLedger':
      return [`${PARTITION.quota}*`];
    case 'clusterQuotaLedger':
      return [`${PARTITION.clusterQuota}*`];
    case 'tokenBuckets':
      return [`${PARTITION.tokenBucket}*`, `${TOKEN_BUCKET_REQUESTS}*`];
    case 'decisionCache':
      return [`${PARTITION.decisionCache}${plugin}#*`];
  }
}

/** Every partition one plugin's function may read or write, sorted, without repeats. */
export function partitionPatterns(metadata: Pick<PluginMetadata, 'name' | 'needs' | 'ledgers'>): string[] {
  const patterns = [
    ...metadata.needs.flatMap(needPartitions),
    ...(metadata.ledgers ?? []).flatMap((ledger) => ledgerPartitions(ledger, metadata.name)),
  ];
  return [...new Set(patterns)].sort();
}

/**
 * A fleet: every partition one plugin's function may touch for the clusters it serves, each under
 * its cluster's prefix (`cluster#<name>#ns#*`), never a single cluster's bare keys.
 */
export function clusterPartitionPatterns(
  metadata: Pick<PluginMetadata, 'name' | 'needs' | 'ledgers'>,
  clusters: readonly string[],
): string[] {
  const patterns = partitionPatterns(metadata);
  return clusters.flatMap((cluster) => patterns.map((p) => `${clusterKeyPrefix(cluster)}${p}`)).sort();
}
