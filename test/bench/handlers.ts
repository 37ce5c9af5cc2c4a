// In-process cost of each plugin's full Lambda handler (API Gateway event in, result out) on a
// realistic review, next to the floor: JSON.parse + JSON.stringify of the same review.
import { usesStore } from '../../lib/admission/plugin.js';
import { plugins } from '../../functions/index.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import { gatewayEvent, lambdaContext as context } from '../support/gateway-event.js';
import { restrictedPodReview, sampleReviewFor } from './samples.js';
import { round, timeEach } from './stats.js';

export async function benchHandlers(iterations = 3000): Promise<Record<string, unknown>[]> {
  const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/admission.yaml' });
  const rows: Record<string, unknown>[] = [];
  for (const plugin of plugins) {
    if (usesStore(plugin.metadata)) continue; // measured with the store in bench/store
    const handler = createAdmissionHandler(plugin, { config: configurePlugin(plugin, configuration), callerAuth: { mode: 'mtls', allowedSubjects: [] } });
    const { resource, body } = sampleReviewFor(plugin);
    const floor = await timeEach(() => JSON.stringify(JSON.parse(body)), iterations);
    for (const phase of ['mutate', 'validate'] as const) {
      if (!(phase === 'mutate' ? plugin.admit : plugin.validate)) continue;
      const event = gatewayEvent(`/${plugin.metadata.name}/${phase}`, body);
      const status = (await handler(event, context)).statusCode;
      if (status !== 200) throw new Error(`${plugin.metadata.name}/${phase} answered ${status} on its sample`);
      const cost = await timeEach(() => handler(event, context), iterations);
      rows.push({
        plugin: plugin.metadata.name,
        phase,
        resource,
        'p50 µs': cost.p50,
        'p99 µs': cost.p99,
        'floor p50 µs': floor.p50,
        'floor p99 µs': floor.p99,
        'p50 ratio': round(cost.p50 / floor.p50, 2),
      });
    }
  }
  rows.push(...(await benchPodSecurity(iterations)));
  return rows;
}

/**
 * PodSecurity on a restricted-level pod with an init container and four containers, judged by
 * config/examples/pod-security.yaml (enforce baseline, audit and warn restricted: every check runs).
 * The namespace lookup is a port answering "never seen"; its store cost (1 GetItem) is in bench/store.
 */
async function benchPodSecurity(iterations: number): Promise<Record<string, unknown>[]> {
  const plugin = plugins.find((p) => p.metadata.name === 'pod-security')!;
  const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/examples/pod-security.yaml' });
  const state = { ...NO_STATE, learnedNamespaces: { get: async () => undefined, knownAbsent: async () => false } };
  const handler = createAdmissionHandler(plugin, { config: configurePlugin(plugin, configuration), callerAuth: { mode: 'mtls', allowedSubjects: [] }, state: () => state });
  const body = restrictedPodReview(4);
  const event = gatewayEvent('/pod-security/validate', body);
  const answer = await handler(event, context);
  if (answer.statusCode !== 200 || !JSON.parse(answer.body).response.allowed) throw new Error(`pod-security refused its sample: ${answer.body}`);
  const floor = await timeEach(() => JSON.stringify(JSON.parse(body)), iterations);
  const cost = await timeEach(() => handler(event, context), iterations);
  return [{
    plugin: 'pod-security',
    phase: 'validate',
    resource: 'pods (restricted, 1+4 containers)',
    'p50 µs': cost.p50,
    'p99 µs': cost.p99,
    'floor p50 µs': floor.p50,
    'floor p99 µs': floor.p99,
    'p50 ratio': round(cost.p50 / floor.p50, 2),
  }];
}
