// The deployed reader: a function a schedule (EventBridge, every minute) keeps running. Each run
// takes the lease (one watcher per cluster), watches from the stored resourceVersions for about
// 50 s, checkpoints and exits; the next run resumes where it stopped. A run that finds the lease
// taken exits at once. It reports, as one CloudWatch Embedded Metric Format line, how far behind
// the apiserver each kind ended (ReaderLagSeconds: 0 while its watch was open), how many relists
// and errors it saw: the alarm on a stopped watcher reads these and the function's errors.
import type { PluginMetadata } from '../admission/plugin.js';
import type { ClusterCredentials } from '../kube/cluster-credentials.js';
import type { ReaderMetrics } from '../metrics/index.js';
import type { DynamoDb } from '../state/dynamodb.js';
import { StateStore } from '../state/store.js';
import { clusterReader } from './index.js';
import { ReaderLease } from './lease.js';

export const READER_METRIC = {
  lag: 'ReaderLagSeconds',
  relists: 'ReaderRelists',
  errors: 'ReaderErrors',
  events: 'ReaderEvents',
} as const;

export interface ScheduledRunOptions {
  readonly credentials: ClusterCredentials;
  readonly plugins: readonly Pick<PluginMetadata, 'needs'>[];
  readonly dynamoDb: DynamoDb;
  readonly tableName: string;
  /** The invocation's id: the lease's holder. */
  readonly runId: string;
  /** How long this run watches (ms): under the function's timeout, with room to checkpoint. */
  readonly watchMs: number;
  /** Where the EMF line goes (stdout in Lambda). */
  readonly emit: (line: string) => void;
  readonly log?: (line: string) => void;
  readonly now?: () => number;
}

export type ScheduledRunResult =
  | { readonly ran: false; readonly reason: 'no kinds' | 'lease held' }
  | { readonly ran: true; readonly kinds: readonly string[]; readonly lagSeconds: number };

/** How long a scheduled run watches, unless its function's remaining time leaves it less. */
export const READER_WATCH_MS = 50_000;

/** The lease outlasts a run (watchMs plus checkpointing), and lapses before two schedules pass. */
const LEASE_MARGIN_MS = 40_000;

export async function scheduledRun(options: ScheduledRunOptions): Promise<ScheduledRunResult> {
  const now = options.now ?? Date.now;
  const counts = { relists: 0, errors: 0, events: 0 };
  const lags = new Map<string, () => number>();
  const metrics: ReaderMetrics = {
    event: () => void counts.events++,
    relist: () => void counts.relists++,
    error: () => void counts.errors++,
    lag: (resource, seconds) => void lags.set(resource, seconds),
  };
  const reader = clusterReader({
    credentials: options.credentials,
    plugins: options.plugins,
    dynamoDb: options.dynamoDb,
    tableName: options.tableName,
    metrics,
    log: options.log,
    watchSeconds: Math.ceil(options.watchMs / 1000),
    maxBackoffMs: 5_000,
  });
  if (!reader) return { ran: false, reason: 'no kinds' };
  const lease = new ReaderLease(
    new StateStore(options.dynamoDb, options.tableName, false, now),
    options.runId,
    options.watchMs + LEASE_MARGIN_MS,
  );
  if (!(await lease.acquire())) {
    options.log?.('reader: another run holds the lease: nothing to do');
    return { ran: false, reason: 'lease held' };
  }
  try {
    await reader.watcher.start(now() + options.watchMs);
  } finally {
    reader.client.close();
    await lease.release();
  }
  // How far behind each kind ended, in whole seconds: a watch open to the end is 0; one that kept
  // failing is the time since it last held everything.
  const lagSeconds = Math.floor(Math.max(0, ...[...lags.values()].map((seconds) => seconds())));
  options.emit(
    JSON.stringify({
      _aws: {
        Timestamp: now(),
        CloudWatchMetrics: [
          {
            Namespace: 'ServerlessAdmission',
            Dimensions: [['Service']],
            Metrics: [
              { Name: READER_METRIC.lag, Unit: 'Seconds' },
              { Name: READER_METRIC.relists, Unit: 'Count' },
              { Name: READER_METRIC.errors, Unit: 'Count' },
              { Name: READER_METRIC.events, Unit: 'Count' },
            ],
          },
        ],
      },
      Service: 'cluster-reader',
      [READER_METRIC.lag]: lagSeconds,
      [READER_METRIC.relists]: counts.relists,
      [READER_METRIC.errors]: counts.errors,
      [READER_METRIC.events]: counts.events,
    }),
  );
  return { ran: true, kinds: reader.kinds, lagSeconds };
}
