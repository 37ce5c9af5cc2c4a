// CloudWatch Embedded Metric Format through Powertools for AWS Lambda (Metrics): one JSON line per
// invocation on stdout, which CloudWatch Logs turns into metrics with no API call on the request
// path. Dimensions: `service` (Powertools adds it), `plugin`, `phase`, and a second dimension set
// with `decision` too, so a chart can sum a phase or split it by answer.
//
// The line goes through our own sink rather than Powertools' console, so that tests read it and
// the bench can discard it; serializeMetrics + clear is what publishStoredMetrics does.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
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

export type EmfSink = (line: string) => void;

const stdoutSink: EmfSink = (line) => process.stdout.write(`${line}\n`);

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

export class EmfPublisher {
  private readonly metrics: Metrics;

  constructor(
    plugin: string,
    private readonly sink: () => EmfSink,
  ) {
    this.metrics = new Metrics({ namespace: EMF_NAMESPACE, serviceName: EMF_SERVICE, defaultDimensions: { plugin } });
  }

  /** Store calls of the current invocation; flushed with its request line. */
  storeCall(call: StoreCall): void {
    this.metrics.addMetric(EMF_METRIC.storeCalls, MetricUnit.Count, 1);
    this.metrics.addMetric(EMF_METRIC.storeLatency, MetricUnit.Milliseconds, call.seconds * 1000);
    if (call.result === 'unavailable') this.metrics.addMetric(EMF_METRIC.storeFailures, MetricUnit.Count, 1);
  }

  /** The invocation's one flush. */
  request(outcome: RequestOutcome): void {
    const m = this.metrics;
    m.addDimension('phase', outcome.phase);
    m.addDimensions({ phase: outcome.phase, decision: decisionDimension(outcome) });
    m.addMetric(EMF_METRIC.requests, MetricUnit.Count, 1);
    m.addMetric(EMF_METRIC.latency, MetricUnit.Milliseconds, outcome.seconds * 1000);
    if (outcome.dryRun) m.addMetric(EMF_METRIC.dryRuns, MetricUnit.Count, 1);
    if (outcome.failure) m.addMetric(EMF_METRIC.failures, MetricUnit.Count, 1);
    // A store outage shows whether it failed the request or only lost what it would have learned.
    if (outcome.failure === 'store_unavailable' || outcome.learningLost) m.addMetric(EMF_METRIC.storeFailures, MetricUnit.Count, 1);
    if (outcome.learningLost) m.addMetric(EMF_METRIC.learningLost, MetricUnit.Count, 1);
    if (outcome.coldStart) m.addMetric(EMF_METRIC.coldStarts, MetricUnit.Count, 1);
    try {
      this.sink()(JSON.stringify(m.serializeMetrics()));
    } finally {
      m.clearMetrics();
      m.clearDimensions();
    }
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
