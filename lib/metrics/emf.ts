// CloudWatch Embedded Metric Format: one JSON line per invocation on stdout, which CloudWatch Logs
// turns into metrics with no API call on the request path. Two dimension sets: {service, plugin,
// phase} follows one webhook; {service, plugin, decision} splits a plugin's answers. In a fleet the
// line also names its cluster, and the same two sets with `cluster` follow each cluster apart.
//
// Why not Powertools Metrics, the maintained library: its flush (it reads process.env several
// times per call to find its invocation store) adds about 7.5 µs to every handler, 54-99 % of a cheap
// handler's p50 without metrics, where this line adds 8-16 % (bench/results.json, `Powertools cost %`
// beside `EMF cost %`; `npm run bench -- --only handlers`). The format is small and stable; the
// line below is checked, in test/metrics/emf.test.ts, to be the one Powertools serializes for the
// same metrics. The invariant part of a line (directive, dimensions, metric definitions) depends
// only on phase, decision and which metrics are present, so it is built once and cached.
import type { RequestOutcome, StoreCall } from './catalog.js';

export const EMF_NAMESPACE = 'ServerlessAdmission';
export const EMF_SERVICE = 'serverless-admission';

/** EMF metric names: what the alarms and the dashboard in serverless.yml refer to. */
export const EMF_METRIC = {
  requests: 'Requests',
  latency: 'Latency',
  dryRuns: 'DryRuns',
  failures: 'Failures',
  storeFailures: 'StoreFailures',
  learningLost: 'LearningLost',
  storeCalls: 'StoreCalls',
  storeLatency: 'StoreLatency',
  coldStarts: 'ColdStarts',
} as const;

/** The dimension sets of every line: one webhook, and one plugin's answers by decision. */
export const EMF_DIMENSIONS: readonly (readonly string[])[] = [
  ['service', 'plugin', 'phase'],
  ['service', 'plugin', 'decision'],
];

/** A fleet's lines add the same sets per cluster. */
export const EMF_CLUSTER_DIMENSIONS: readonly (readonly string[])[] = [
  ['service', 'cluster', 'plugin', 'phase'],
  ['service', 'cluster', 'plugin', 'decision'],
];

type EmfUnit = 'Count' | 'Milliseconds';

/** One metric of a line: a value, or up to 100 values (EMF's limit per metric). */
export interface EmfValue {
  readonly name: string;
  readonly unit: EmfUnit;
  readonly value: number | number[];
}

export type EmfSink = (line: string) => void;

const stdoutSink: EmfSink = (line) => process.stdout.write(`${line}\n`);

const MAX_VALUES = 100;

/**
 * The `decision` dimension: every answer of one invocation in one closed list, so a single
 * `Requests` metric splits into allowed / patched / warned / audited / denied_<code> /
 * malformed_<reason> / failed_<reason>.
 */
export function decisionDimension(outcome: RequestOutcome): string {
  if (outcome.failure) return `failed_${outcome.failure}`;
  if (outcome.malformed) return `malformed_${outcome.malformed}`;
  if (outcome.decision === 'denied') return `denied_${Math.min(outcome.rejectionCode ?? 403, 600)}`;
  return outcome.decision ?? 'allowed';
}

/** The metrics one invocation publishes, in a fixed order (it keys the cache). */
export function invocationValues(
  outcome: RequestOutcome,
  store: { calls: number; latenciesMs: number[]; failures: number },
): EmfValue[] {
  const values: EmfValue[] = [
    { name: EMF_METRIC.requests, unit: 'Count', value: 1 },
    { name: EMF_METRIC.latency, unit: 'Milliseconds', value: roundMs(outcome.seconds * 1000) },
  ];
  if (outcome.dryRun) values.push({ name: EMF_METRIC.dryRuns, unit: 'Count', value: 1 });
  if (outcome.failure) values.push({ name: EMF_METRIC.failures, unit: 'Count', value: 1 });
  // A store outage shows whether it failed the request or only lost what it would have learned.
  const storeFailures = store.failures + (outcome.failure === 'store_unavailable' || outcome.learningLost ? 1 : 0);
  if (storeFailures > 0) values.push({ name: EMF_METRIC.storeFailures, unit: 'Count', value: storeFailures });
  if (outcome.learningLost) values.push({ name: EMF_METRIC.learningLost, unit: 'Count', value: 1 });
  if (outcome.coldStart) values.push({ name: EMF_METRIC.coldStarts, unit: 'Count', value: 1 });
  if (store.calls > 0) {
    values.push({ name: EMF_METRIC.storeCalls, unit: 'Count', value: store.calls });
    const latencies = store.latenciesMs.slice(0, MAX_VALUES);
    values.push({
      name: EMF_METRIC.storeLatency,
      unit: 'Milliseconds',
      value: latencies.length === 1 ? latencies[0] : latencies,
    });
  }
  return values;
}

function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

export class EmfPublisher {
  /** `phase/decision` → by metricsMask: the line between the timestamp and the values. */
  private readonly heads = new Map<string, string[]>();
  private store = { calls: 0, latenciesMs: [] as number[], failures: 0 };

  /** `cluster`: a fleet's cluster, a dimension of its own sets beside the plugin's (none without a fleet). */
  constructor(
    private readonly plugin: string,
    private readonly sink: () => EmfSink,
    private readonly cluster?: string,
  ) {}

  /** Store calls of the current invocation; flushed with its request line. */
  storeCall(call: StoreCall): void {
    this.store.calls++;
    this.store.latenciesMs.push(roundMs(call.seconds * 1000));
    if (call.result === 'unavailable') this.store.failures++;
  }

  /** The invocation's one flush. */
  request(outcome: RequestOutcome): void {
    this.sink()(this.line(outcome));
  }

  /**
   * The invocation's EMF line, without writing it: a JSON object that the request log may extend
   * with its own fields and write as one line (lib/http/request-log), saving a write per request.
   * Its keys are `_aws`, the dimensions (service, plugin, phase, decision) and the metric names.
   */
  line(outcome: RequestOutcome): string {
    const { store } = this;
    const values = invocationValues(outcome, store);
    this.store = { calls: 0, latenciesMs: [], failures: 0 };
    const decision = decisionDimension(outcome);
    // Which optional metrics are present decides the head; a number keys it without building a string.
    const mask =
      (outcome.dryRun ? 1 : 0) |
      (outcome.failure ? 2 : 0) |
      (store.failures > 0 || outcome.failure === 'store_unavailable' || outcome.learningLost ? 4 : 0) |
      (outcome.learningLost ? 8 : 0) |
      (outcome.coldStart ? 16 : 0) |
      (store.calls > 0 ? 32 : 0);
    const key = `${outcome.phase}/${decision}`;
    let heads = this.heads.get(key);
    if (heads === undefined) {
      heads = [];
      this.heads.set(key, heads);
    }
    let head = heads[mask];
    if (head === undefined) {
      head = this.head(outcome.phase, decision, values);
      heads[mask] = head;
    }
    let line = `{"_aws":{"Timestamp":${Date.now()},${head}`;
    for (const { name, value } of values)
      line += `,"${name}":${typeof value === 'number' ? value : JSON.stringify(value)}`;
    return `${line}}`;
  }

  private head(phase: string, decision: string, values: readonly EmfValue[]): string {
    const { cluster } = this;
    const directive = {
      Namespace: EMF_NAMESPACE,
      // A fleet: every plugin's sets as without one (the deployment's alarms), and the same per cluster.
      Dimensions: cluster === undefined ? EMF_DIMENSIONS : [...EMF_DIMENSIONS, ...EMF_CLUSTER_DIMENSIONS],
      Metrics: values.map(({ name, unit }) => ({ Name: name, Unit: unit })),
    };
    const dimensions = JSON.stringify(
      cluster === undefined
        ? { service: EMF_SERVICE, plugin: this.plugin, phase, decision }
        : { service: EMF_SERVICE, cluster, plugin: this.plugin, phase, decision },
    ).slice(1, -1);
    return `"CloudWatchMetrics":[${JSON.stringify(directive)}]},${dimensions}`;
  }
}

let sink: EmfSink = stdoutSink;

/** Tests read the lines; the bench discards them. undefined restores stdout. */
export function setEmfSink(next: EmfSink | undefined): void {
  sink = next ?? stdoutSink;
}

export function currentEmfSink(): EmfSink {
  return sink;
}
