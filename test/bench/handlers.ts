// In-process cost of each plugin's full Lambda handler (API Gateway event in, result out) on a
// realistic review, next to the floor: JSON.parse + JSON.stringify of the same review. The handler
// runs as deployed, publishing CloudWatch EMF (lib/metrics/emf.ts; the line is written to
// /dev/null, a syscall as in Lambda), and is measured again with metrics off, with EMF through
// Powertools Metrics instead, and with the local Prometheus registry, in alternating rounds with
// the floor, so that drift on a shared machine hits all of them alike.
import { closeSync, openSync, writeSync } from 'node:fs';
import { plugins } from '../../functions/index.js';
import { usesStore } from '../../lib/admission/plugin.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { setLogSink } from '../../lib/http/log.js';
import type { PluginMetrics } from '../../lib/metrics/index.js';
import { pluginMetrics, setEmfSink } from '../../lib/metrics/index.js';
import { powertoolsPluginMetrics } from '../support/powertools-emf.js';
import { gatewayEvent, lambdaContext as context } from '../support/gateway-event.js';
import { restrictedPodReview, sampleReviewFor } from './samples.js';
import { round, timeEach } from './stats.js';

const MODES = ['off', 'emf', 'powertools', 'prometheus', 'logs', 'emf+logs'] as const;
type Mode = (typeof MODES)[number];
/** Modes with the request log on (to /dev/null): in Lambda it is, and EMF then rides in its line. */
const withLogs = (mode: Mode) => mode === 'logs' || mode === 'emf+logs';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `configFile`: the AdmissionConfiguration each plugin is configured from (bench --cluster: the cluster's). */
export async function benchHandlers(
  iterations = 3000,
  rounds = 3,
  configFile = 'config/admission.yaml',
): Promise<Record<string, unknown>[]> {
  const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: configFile });
  const devNull = openSync('/dev/null', 'w');
  const toDevNull = (line: string) => void writeSync(devNull, `${line}\n`);
  setEmfSink(toDevNull);
  const metricsFor = (plugin: string, mode: Mode): PluginMetrics =>
    mode === 'powertools'
      ? powertoolsPluginMetrics(plugin, toDevNull)
      : pluginMetrics(plugin, mode === 'logs' ? 'off' : mode === 'emf+logs' ? 'emf' : mode);
  const logsFor = (mode: Mode) => setLogSink(withLogs(mode) ? toDevNull : undefined);
  const rows: Record<string, unknown>[] = [];
  try {
    for (const plugin of plugins) {
      if (usesStore(plugin.metadata)) continue; // measured with the store in bench/store
      const config = configurePlugin(plugin, configuration);
      const handlers = Object.fromEntries(
        MODES.map((mode) => [
          mode,
          createAdmissionHandler(plugin, {
            config,
            callerAuth: { mode: 'mtls', allowedSubjects: [] },
            metrics: metricsFor(plugin.metadata.name, mode),
          }),
        ]),
      );
      const { resource, body } = sampleReviewFor(plugin);
      const parseFloor = () => timeEach(() => JSON.stringify(JSON.parse(body)), iterations);
      for (const phase of ['mutate', 'validate'] as const) {
        if (!(phase === 'mutate' ? plugin.admit : plugin.validate)) continue;
        const event = gatewayEvent(`/${plugin.metadata.name}/${phase}`, body);
        const p50 = Object.fromEntries(MODES.map((m) => [m, [] as number[]])) as Record<Mode, number[]>;
        const p99 = Object.fromEntries(MODES.map((m) => [m, [] as number[]])) as Record<Mode, number[]>;
        for (const mode of MODES) {
          logsFor(mode);
          const status = (await handlers[mode](event, context)).statusCode;
          if (status !== 200) throw new Error(`${plugin.metadata.name}/${phase} answered ${status} on its sample`);
        }
        // The floor is measured in every round too, between the modes: drift hits both alike.
        const floors: { p50: number; p99: number }[] = [];
        for (let r = 0; r < rounds; r++) {
          floors.push(await parseFloor());
          for (const mode of MODES) {
            logsFor(mode);
            const cost = await timeEach(() => handlers[mode](event, context), iterations);
            p50[mode].push(cost.p50);
            p99[mode].push(cost.p99);
          }
        }
        const emf = median(p50.emf);
        const off = median(p50.off);
        const floor = { p50: median(floors.map((f) => f.p50)), p99: median(floors.map((f) => f.p99)) };
        const ratios = p50.emf.map((cost, r) => cost / floors[r].p50);
        rows.push({
          plugin: plugin.metadata.name,
          phase,
          resource,
          'p50 µs': round(emf),
          'p99 µs': round(median(p99.emf)),
          'p50 µs metrics off': round(off),
          'EMF cost %': round((100 * (emf - off)) / off, 1),
          'p50 µs Powertools EMF': round(median(p50.powertools)),
          'Powertools cost %': round((100 * (median(p50.powertools) - off)) / off, 1),
          'p50 µs prometheus': round(median(p50.prometheus)),
          'p50 µs logs on, metrics off': round(median(p50.logs)),
          'EMF cost % with logs on': round((100 * (median(p50['emf+logs']) - median(p50.logs))) / median(p50.logs), 1),
          'floor p50 µs': floor.p50,
          'floor p99 µs': floor.p99,
          'p50 ratio': round(median(ratios), 2),
          'ratio spread': `${round(Math.min(...ratios), 2)}–${round(Math.max(...ratios), 2)}`,
        });
      }
    }
    rows.push(...(await benchPodSecurity(iterations)));
  } finally {
    setEmfSink(undefined);
    setLogSink(undefined);
    closeSync(devNull);
  }
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
  const handler = createAdmissionHandler(plugin, {
    config: configurePlugin(plugin, configuration),
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    state: () => state,
  });
  const body = restrictedPodReview(4);
  const event = gatewayEvent('/pod-security/validate', body);
  const answer = await handler(event, context);
  if (answer.statusCode !== 200 || !JSON.parse(answer.body).response.allowed)
    throw new Error(`pod-security refused its sample: ${answer.body}`);
  const floor = await timeEach(() => JSON.stringify(JSON.parse(body)), iterations);
  const cost = await timeEach(() => handler(event, context), iterations);
  return [
    {
      plugin: 'pod-security',
      phase: 'validate',
      resource: 'pods (restricted, 1+4 containers)',
      'p50 µs': cost.p50,
      'p99 µs': cost.p99,
      'floor p50 µs': floor.p50,
      'floor p99 µs': floor.p99,
      'p50 ratio': round(cost.p50 / floor.p50, 2),
    },
  ];
}
