// In-process cost of each plugin's full Lambda handler (API Gateway event in, result out) on a
// realistic review, next to the floor: JSON.parse + JSON.stringify of the same review. Rounds
// alternate floor and handler, so a slower moment of a shared machine hits both; each figure is
// the median over rounds, with the ratio's spread.
import { plugins } from '../../functions/index.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { gatewayEvent, lambdaContext as context } from '../support/gateway-event.js';
import { sampleReviewFor } from './samples.js';
import { median, round, spread, timeEach } from './stats.js';

export async function benchHandlers(iterations = 1000, rounds = 5): Promise<Record<string, unknown>[]> {
  const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/admission.yaml' });
  const rows: Record<string, unknown>[] = [];
  for (const plugin of plugins) {
    if (plugin.metadata.writes || plugin.metadata.needs.length > 0) continue; // measured with the store in bench/store
    const handler = createAdmissionHandler(plugin, { config: configurePlugin(plugin, configuration), callerAuth: { mode: 'mtls', allowedSubjects: [] } });
    const { resource, body } = sampleReviewFor(plugin);
    for (const phase of ['mutate', 'validate'] as const) {
      if (!(phase === 'mutate' ? plugin.admit : plugin.validate)) continue;
      const event = gatewayEvent(`/${plugin.metadata.name}/${phase}`, body);
      const status = (await handler(event, context)).statusCode;
      if (status !== 200) throw new Error(`${plugin.metadata.name}/${phase} answered ${status} on its sample`);
      const measured = [];
      for (let r = 0; r < rounds; r++) {
        const floor = await timeEach(() => JSON.stringify(JSON.parse(body)), iterations);
        const cost = await timeEach(() => handler(event, context), iterations);
        measured.push({ floor, cost });
      }
      const ratio = spread(measured.map((m) => m.cost.p50 / m.floor.p50));
      rows.push({
        plugin: plugin.metadata.name,
        phase,
        resource,
        'p50 µs': median(measured.map((m) => m.cost.p50)),
        'p99 µs': median(measured.map((m) => m.cost.p99)),
        'floor p50 µs': median(measured.map((m) => m.floor.p50)),
        'floor p99 µs': median(measured.map((m) => m.floor.p99)),
        'p50 ratio': round(ratio.median, 2),
        'ratio spread': `${round(ratio.min, 2)}–${round(ratio.max, 2)}`,
      });
    }
  }
  return rows;
}
