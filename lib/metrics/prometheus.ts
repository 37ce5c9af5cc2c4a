// Counters and histograms kept in the process, rendered in the Prometheus text exposition format
// (version 0.0.4) for the local server's `GET /metrics`. Label sets are few (see catalog.ts), so
// a map keyed by the joined label values is all the bookkeeping needed.
import type { ReaderMetrics, RequestOutcome, StoreCall } from './catalog.js';
import { APISERVER_WEBHOOK_BUCKETS, HELP, METRIC, STORE_BUCKETS } from './catalog.js';

type Labels = Readonly<Record<string, string>>;

interface Series<T> {
  readonly labels: Labels;
  value: T;
}

interface HistogramValue {
  readonly counts: number[];
  sum: number;
  count: number;
}

class Family<T> {
  readonly series = new Map<string, Series<T>>();

  constructor(
    readonly name: string,
    readonly type: 'counter' | 'histogram' | 'gauge',
    private readonly initial: () => T,
  ) {}

  at(labels: Labels): Series<T> {
    const key = Object.values(labels).join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      series = { labels, value: this.initial() };
      this.series.set(key, series);
    }
    return series;
  }
}

class Counter extends Family<number> {
  constructor(name: string) {
    super(name, 'counter', () => 0);
  }

  inc(labels: Labels, by = 1): void {
    this.at(labels).value += by;
  }
}

class Histogram extends Family<HistogramValue> {
  constructor(
    name: string,
    readonly buckets: readonly number[],
  ) {
    super(name, 'histogram', () => ({ counts: buckets.map(() => 0), sum: 0, count: 0 }));
  }

  observe(labels: Labels, seconds: number): void {
    this.observeIn(this.at(labels), seconds);
  }

  observeIn(series: Series<HistogramValue>, seconds: number): void {
    const { value } = series;
    for (let i = 0; i < this.buckets.length; i++) if (seconds <= this.buckets[i]) value.counts[i]++;
    value.sum += seconds;
    value.count++;
  }
}

/** A value read at each scrape. */
class Gauge extends Family<() => number> {
  constructor(name: string) {
    super(name, 'gauge', () => () => 0);
  }

  set(labels: Labels, read: () => number): void {
    this.at(labels).value = read;
  }
}

/** The series every request of one kind (plugin, phase, operation, status, decision) moves. */
interface RequestSeries {
  readonly requests: Series<number>;
  readonly duration: Series<HistogramValue>;
  readonly decision: Series<number> | undefined;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra) pairs.push(extra);
  return pairs.length === 0 ? '' : `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

/** The labels that say whose series it is: the plugin, after its cluster in a fleet. */
function owner(plugin: string, cluster: string | undefined): Labels {
  return cluster === undefined ? { plugin } : { cluster, plugin };
}

function bound(value: number): string {
  return value === Infinity ? '+Inf' : String(value);
}

/** The process's admission metrics, every plugin's, as `GET /metrics` serves them. */
export class PrometheusRegistry {
  private readonly requests = new Counter(METRIC.requests);
  private readonly duration = new Histogram(METRIC.duration, APISERVER_WEBHOOK_BUCKETS);
  private readonly decisions = new Counter(METRIC.decisions);
  private readonly dryRuns = new Counter(METRIC.dryRuns);
  private readonly malformed = new Counter(METRIC.malformed);
  private readonly failures = new Counter(METRIC.failures);
  private readonly learningLost = new Counter(METRIC.learningLost);
  private readonly storeCalls = new Counter(METRIC.storeCalls);
  private readonly storeDuration = new Histogram(METRIC.storeDuration, STORE_BUCKETS);
  private readonly coldStarts = new Counter(METRIC.coldStarts);
  private readonly readerEvents = new Counter(METRIC.readerEvents);
  private readonly readerRelists = new Counter(METRIC.readerRelists);
  private readonly readerErrors = new Counter(METRIC.readerErrors);
  private readonly readerLag = new Gauge(METRIC.readerLag);
  private readonly throttled = new Counter(METRIC.clusterThrottled);
  private readonly families = [
    this.requests,
    this.duration,
    this.decisions,
    this.dryRuns,
    this.malformed,
    this.failures,
    this.learningLost,
    this.storeCalls,
    this.storeDuration,
    this.coldStarts,
    this.readerEvents,
    this.readerRelists,
    this.readerErrors,
    this.readerLag,
    this.throttled,
  ];

  /** The cluster reader's series (lib/cluster), in the same exposition. */
  readonly reader: ReaderMetrics = {
    event: (resource, type) => this.readerEvents.inc({ resource, type }),
    relist: (resource) => this.readerRelists.inc({ resource }),
    error: (resource, reason) => this.readerErrors.inc({ resource, reason }),
    lag: (resource, seconds) => this.readerLag.set({ resource }, seconds),
  };

  /** Per kind of request, its series: found by label values once, then by one key per request. */
  private readonly requestSeries = new Map<string, RequestSeries>();

  /** `cluster`: a fleet's cluster, a label of every series (none without a fleet). */
  recordRequest(plugin: string, outcome: RequestOutcome, cluster?: string): void {
    const { phase, operation, statusCode, decision, rejectionCode } = outcome;
    const key = `${cluster}\u0000${plugin}\u0000${phase}\u0000${operation}\u0000${statusCode}\u0000${decision}\u0000${rejectionCode}`;
    let series = this.requestSeries.get(key);
    if (series === undefined) {
      series = this.requestSeriesOf(owner(plugin, cluster), outcome);
      this.requestSeries.set(key, series);
    }
    series.requests.value++;
    this.duration.observeIn(series.duration, outcome.seconds);
    if (series.decision) series.decision.value++;
    if (outcome.dryRun || outcome.malformed || outcome.failure || outcome.learningLost || outcome.coldStart) {
      const of = owner(plugin, cluster);
      if (outcome.dryRun) this.dryRuns.inc({ ...of, phase });
      if (outcome.malformed) this.malformed.inc({ ...of, phase, reason: outcome.malformed });
      if (outcome.failure) this.failures.inc({ ...of, phase, reason: outcome.failure });
      if (outcome.learningLost) this.learningLost.inc({ ...of, phase });
      if (outcome.coldStart) this.coldStarts.inc(of);
    }
  }

  private requestSeriesOf(of: Labels, outcome: RequestOutcome): RequestSeries {
    const { phase, operation } = outcome;
    const rejected = String(outcome.statusCode !== 200 || outcome.decision === 'denied');
    const code = String(Math.min(outcome.statusCode, 600));
    const rejectionCode = outcome.decision === 'denied' ? String(Math.min(outcome.rejectionCode ?? 403, 600)) : '';
    return {
      requests: this.requests.at({ ...of, phase, operation, code, rejected }),
      duration: this.duration.at({ ...of, phase, operation, rejected }),
      decision: outcome.decision
        ? this.decisions.at({ ...of, phase, decision: outcome.decision, rejection_code: rejectionCode })
        : undefined,
    };
  }

  recordStoreCall(plugin: string, call: StoreCall, cluster?: string): void {
    const of = owner(plugin, cluster);
    this.storeCalls.inc({ ...of, operation: call.operation, result: call.result });
    this.storeDuration.observe({ ...of, operation: call.operation }, call.seconds);
  }

  /** A fleet: a request of `cluster` refused for its fair share (429) before any handler ran. */
  recordThrottled(cluster: string): void {
    this.throttled.inc({ cluster });
  }

  /**
   * The text exposition format. Every family is described (HELP and TYPE) from the start, samples
   * or not, so a scrape before the first request already tells Prometheus what will come.
   */
  render(): string {
    const out: string[] = [];
    for (const family of this.families) {
      out.push(
        `# HELP ${family.name} ${HELP[family.name as keyof typeof HELP]}`,
        `# TYPE ${family.name} ${family.type}`,
      );
      for (const series of family.series.values()) {
        if (family instanceof Histogram) {
          const value = series.value as HistogramValue;
          const bucket = (le: string, count: number) =>
            `${family.name}_bucket${labelText(series.labels, ['le', le])} ${count}`;
          for (const [i, le] of family.buckets.entries()) out.push(bucket(bound(le), value.counts[i]));
          out.push(bucket('+Inf', value.count));
          out.push(`${family.name}_sum${labelText(series.labels)} ${value.sum}`);
          out.push(`${family.name}_count${labelText(series.labels)} ${value.count}`);
        } else if (family instanceof Gauge) {
          out.push(`${family.name}${labelText(series.labels)} ${(series.value as () => number)()}`);
        } else {
          out.push(`${family.name}${labelText(series.labels)} ${series.value as number}`);
        }
      }
    }
    return `${out.join('\n')}\n`;
  }
}
