// lib/metrics: one plugin's admission metrics, published where the handler runs. In Lambda
// (AWS_LAMBDA_FUNCTION_NAME is set) as CloudWatch EMF, one line per invocation (emf.ts); elsewhere (the
// local server, tests) into the process's Prometheus registry that `GET /metrics` renders.
// METRICS=emf|prometheus|off overrides. This folder imports nothing else of lib: lib/http records
// requests and lib/state records store calls through it.
import type { RequestOutcome, StoreCall } from './catalog.js';
import { currentEmfSink, EmfPublisher } from './emf.js';
import { PrometheusRegistry } from './prometheus.js';

export type {
  DecisionLabel,
  FailureReason,
  MalformedReason,
  MetricPhase,
  ReaderMetrics,
  RequestOutcome,
  StoreCall,
  StoreResult,
} from './catalog.js';
export { APISERVER_WEBHOOK_BUCKETS, METRIC, malformedReason } from './catalog.js';
export {
  decisionDimension,
  EMF_CLUSTER_DIMENSIONS,
  EMF_DIMENSIONS,
  EMF_METRIC,
  EMF_NAMESPACE,
  EMF_SERVICE,
  EmfPublisher,
  setEmfSink,
} from './emf.js';
export { PrometheusRegistry } from './prometheus.js';

export type MetricsMode = 'emf' | 'prometheus' | 'off';

export interface PluginMetrics {
  readonly mode: MetricsMode;
  /** Once per request, after the answer is known (EMF: the invocation's flush). */
  recordRequest(outcome: RequestOutcome): void;
  /**
   * EMF only: what recordRequest would write, returned instead, for the request log to carry in
   * its own line (one write per request instead of two).
   */
  readonly emfLine?: (outcome: RequestOutcome) => string;
  recordStoreCall(call: StoreCall): void;
}

/** Every plugin's series in this process: what the local server's `GET /metrics` serves. */
export const prometheusRegistry = new PrometheusRegistry();

export function metricsModeFromEnv(env: NodeJS.ProcessEnv = process.env): MetricsMode {
  const mode = env.METRICS || (env.AWS_LAMBDA_FUNCTION_NAME ? 'emf' : 'prometheus');
  if (mode !== 'emf' && mode !== 'prometheus' && mode !== 'off')
    throw new Error(`METRICS must be emf, prometheus or off, got ${JSON.stringify(mode)}`);
  return mode;
}

const OFF: Omit<PluginMetrics, 'mode'> = { recordRequest: () => undefined, recordStoreCall: () => undefined };

/**
 * Built once per handler, at init (Lambda's cold start), like its configuration. `cluster`: the
 * fleet's cluster the handler serves, a dimension (EMF) or label (Prometheus) of all its metrics.
 */
export function pluginMetrics(
  plugin: string,
  mode: MetricsMode = metricsModeFromEnv(),
  cluster?: string,
): PluginMetrics {
  if (mode === 'off') return { mode, ...OFF };
  if (mode === 'prometheus') {
    return {
      mode,
      recordRequest: (outcome) => prometheusRegistry.recordRequest(plugin, outcome, cluster),
      recordStoreCall: (call) => prometheusRegistry.recordStoreCall(plugin, call, cluster),
    };
  }
  const emf = new EmfPublisher(plugin, currentEmfSink, cluster);
  return {
    mode,
    recordRequest: (outcome) => emf.request(outcome),
    emfLine: (outcome) => emf.line(outcome),
    recordStoreCall: (call) => emf.storeCall(call),
  };
}
