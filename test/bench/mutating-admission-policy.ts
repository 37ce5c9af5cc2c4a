// MutatingAdmissionPolicy figures: the full Lambda handler (API Gateway event in, JSON patch out)
// for a label-adding ApplyConfiguration on the pod create captured from a kube-apiserver, next to
// the floor, JSON.parse + JSON.stringify of the same review, in alternating rounds; and a request
// no policy names with 1 and with 1,000 policies loaded. Figures, never assertions. Alone:
// `npx tsx test/bench/mutating-admission-policy.ts`.
import { pathToFileURL } from 'node:url';
import plugin from '../../functions/mutating-admission-policy/plugin.js';
import type { PluginConfig } from '../../functions/mutating-admission-policy/config.js';
import type { PluginState } from '../../lib/admission/ports.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { pluginMetrics } from '../../lib/metrics/index.js';
import { gatewayEvent, lambdaContext as context } from '../support/gateway-event.js';
import { capturedPodReview } from './samples.js';
import { round, spread, table, timeEach } from './stats.js';

const source = { file: 'bench', baseDir: process.cwd() };

const state: PluginState = {
  ...NO_STATE,
  learnedNamespaces: {
    get: async (name) => ({ name, labels: {}, annotations: {}, phase: 'Active', observedAt: '2024-01-01T00:00:00Z' }),
    knownAbsent: async () => false,
  },
};

function policy(name: string, group: string, resource: string): unknown[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: [group], apiVersions: ['v1'], operations: ['CREATE'], resources: [resource] }],
        },
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}' },
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name },
    },
  ];
}

const handlerFor = (config: PluginConfig) =>
  createAdmissionHandler(plugin, {
    config,
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    metrics: pluginMetrics(plugin.metadata.name, 'off'),
    state: () => state,
  });

export async function benchMutatingAdmissionPolicy(iterations = 3000, rounds = 5): Promise<Record<string, unknown>> {
  const labelling = handlerFor(plugin.configure!({ manifests: policy('team-label', '', 'pods') }, source));
  const one = handlerFor(plugin.configure!({ manifests: policy('p0', 'apps', 'deployments') }, source));
  const thousand = handlerFor(
    plugin.configure!(
      {
        manifests: Array.from({ length: 1000 }, (_, i) =>
          policy(`p${i}`, i % 2 ? `g${i}.example.com` : 'apps', i % 2 ? 'widgets' : 'deployments'),
        ).flat(),
      },
      source,
    ),
  );
  const body = capturedPodReview;
  const event = gatewayEvent('/mutating-admission-policy/mutate', body);
  const answer = await labelling(event, context);
  if (answer.statusCode !== 200 || JSON.parse(answer.body).response.patchType !== 'JSONPatch')
    throw new Error(`the label policy did not patch the sample pod: ${answer.statusCode} ${answer.body}`);
  const ratios: number[] = [];
  const p50s: number[] = [];
  const floors: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const floor = await timeEach(() => JSON.stringify(JSON.parse(body)), iterations);
    const cost = await timeEach(() => labelling(event, context), iterations);
    floors.push(floor.p50);
    p50s.push(cost.p50);
    ratios.push(cost.p50 / floor.p50);
  }
  const with1 = await timeEach(() => one(event, context), iterations);
  const with1000 = await timeEach(() => thousand(event, context), iterations);
  const ratio = spread(ratios);
  return {
    label_apply_configuration_pod_handler_p50_us: spread(p50s).median,
    parse_floor_p50_us: spread(floors).median,
    ratio_p50: ratio.median,
    ratio_min: ratio.min,
    ratio_max: ratio.max,
    no_match_1_policy_handler_p50_us: round(with1.p50),
    no_match_1000_policies_handler_p50_us: round(with1000.p50),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await benchMutatingAdmissionPolicy();
  process.stdout.write(`${table(Object.entries(figures).map(([figure, value]) => ({ figure, value })))}\n`);
}
