// Stands in for lib/metrics/emf.ts in the cold-start bench's "Powertools" bundle: the same exports,
// with the line serialized by Powertools Metrics, so the bundle carries and loads Powertools.
import type { RequestOutcome, StoreCall } from '../../lib/metrics/catalog.js';
import type { EmfSink } from '../../lib/metrics/emf.js';
import { powertoolsPluginMetrics } from '../support/powertools-emf.js';

export { currentEmfSink, decisionDimension, EMF_METRIC, EMF_NAMESPACE, EMF_SERVICE, invocationValues, setEmfSink } from '../../lib/metrics/emf.js';

export class EmfPublisher {
  private readonly metrics;

  constructor(plugin: string, sink: () => EmfSink) {
    this.metrics = powertoolsPluginMetrics(plugin, (line) => sink()(line));
  }

  storeCall(call: StoreCall): void {
    this.metrics.recordStoreCall(call);
  }

  request(outcome: RequestOutcome): void {
    this.metrics.recordRequest(outcome);
  }
}
