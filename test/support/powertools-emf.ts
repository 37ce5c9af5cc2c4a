// Powertools for AWS Lambda (Metrics) as the reference EMF serializer: the tests check that
// lib/metrics writes the line Powertools would for the same metrics, and the bench measures what
// publishing through Powertools would cost instead (bench/results.json, `p50 µs Powertools EMF`).
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { PluginMetrics, RequestOutcome, StoreCall } from '../../lib/metrics/index.js';
import type { EmfSink, EmfValue } from '../../lib/metrics/emf.js';
import { decisionDimension, EMF_NAMESPACE, EMF_SERVICE, invocationValues } from '../../lib/metrics/emf.js';

function powertools(plugin: string): Metrics {
  return new Metrics({ namespace: EMF_NAMESPACE, serviceName: EMF_SERVICE, defaultDimensions: { plugin } });
}

function add(metrics: Metrics, values: readonly EmfValue[]): void {
  for (const { name, unit, value } of values) {
    for (const v of Array.isArray(value) ? value : [value])
      metrics.addMetric(name, unit === 'Count' ? MetricUnit.Count : MetricUnit.Milliseconds, v);
  }
}

/** What Powertools serializes for these metrics of one invocation. */
export function powertoolsLine(
  plugin: string,
  outcome: RequestOutcome,
  values: readonly EmfValue[],
): Record<string, unknown> {
  const metrics = powertools(plugin);
  metrics.addDimension('phase', outcome.phase);
  metrics.addDimensions({ decision: decisionDimension(outcome) });
  add(metrics, values);
  return metrics.serializeMetrics() as unknown as Record<string, unknown>;
}

/** A plugin's metrics published through Powertools, one flush per invocation (bench only). */
export function powertoolsPluginMetrics(plugin: string, sink: EmfSink): PluginMetrics {
  const metrics = powertools(plugin);
  let store = { calls: 0, latenciesMs: [] as number[], failures: 0 };
  return {
    mode: 'emf',
    recordStoreCall(call: StoreCall) {
      store.calls++;
      store.latenciesMs.push(call.seconds * 1000);
      if (call.result === 'unavailable') store.failures++;
    },
    recordRequest(outcome: RequestOutcome) {
      metrics.addDimension('phase', outcome.phase);
      metrics.addDimensions({ decision: decisionDimension(outcome) });
      add(metrics, invocationValues(outcome, store));
      store = { calls: 0, latenciesMs: [], failures: 0 };
      try {
        sink(JSON.stringify(metrics.serializeMetrics()));
      } finally {
        metrics.clearMetrics();
        metrics.clearDimensions();
      }
    },
  };
}
