// ValidatingAdmissionPolicy figures: µs per evaluation of a matching policy (the page's demo policy
// denying 6 replicas, through the plugin's validate phase, and its one expression alone), and the
// cost of a request no policy names with 1 and with 1,000 policies loaded (the (group, resource)
// index should make them equal). Figures, never assertions. Alone: `npx tsx test/bench/cel.ts`.
import { pathToFileURL } from 'node:url';
import plugin from '../../functions/validating-admission-policy/plugin.js';
import type { PluginConfig } from '../../functions/validating-admission-policy/config.js';
import { compileExpression } from '../../lib/cel/compile.js';
import { toCel } from '../../lib/cel/values.js';
import { decodeAdmissionReview } from '../../lib/admission/request.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { PluginState } from '../../lib/admission/ports.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import { table, timeEach } from './stats.js';

const ITERATIONS = 20_000;
const source = { file: 'bench', baseDir: process.cwd() };

const state: PluginState = {
  ...NO_STATE,
  learnedNamespaces: {
    get: async (name) => ({
      name,
      labels: { environment: 'test' },
      annotations: {},
      phase: 'Active',
      observedAt: '2024-01-01T00:00:00Z',
    }),
    knownAbsent: async () => false,
  },
};

function policy(name: string, group: string, resource: string): unknown[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [group], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [resource] },
          ],
        },
        validations: [{ expression: 'object.spec.replicas <= 5' }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { environment: 'test' } } },
      },
    },
  ];
}

function request(group: string, resource: string, kind: string, object: unknown): AdmissionRequest {
  return decodeAdmissionReview({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u',
      kind: { group, version: 'v1', kind },
      resource: { group, version: 'v1', resource },
      namespace: 'test',
      name: 'nginx',
      operation: 'CREATE',
      userInfo: { username: 'bench' },
      object,
    },
  });
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'nginx', namespace: 'test' },
  spec: { replicas: 6, template: { spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
};
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'nginx', namespace: 'test' },
  spec: { containers: [{ name: 'nginx', image: 'nginx' }] },
};

export async function benchCel(): Promise<Record<string, number>> {
  const demo: PluginConfig = plugin.configure!(
    { manifests: policy('demo-policy.example.com', 'apps', 'deployments') },
    source,
  );
  const one: PluginConfig = plugin.configure!({ manifests: policy('p0', 'apps', 'deployments') }, source);
  const thousand: PluginConfig = plugin.configure!(
    {
      manifests: Array.from({ length: 1000 }, (_, i) =>
        policy(`p${i}`, i % 2 ? `g${i}.example.com` : 'apps', i % 2 ? 'widgets' : 'deployments'),
      ).flat(),
    },
    source,
  );
  const validate = plugin.validate!;
  const denying = request('apps', 'deployments', 'Deployment', deployment);
  const unmatched = request('', 'pods', 'Pod', pod);

  const matching = await timeEach(() => validate(denying, { config: demo, state }), ITERATIONS);
  const expression = compileExpression('object.spec.replicas <= 5', { variables: new Set() });
  const bindings = { object: toCel(deployment), oldObject: null, params: null };
  const expressionOnly = await timeEach(() => expression.evaluate(bindings, 1_000_000), ITERATIONS);
  const conversion = await timeEach(() => toCel(deployment), ITERATIONS);
  const with1 = await timeEach(() => validate(unmatched, { config: one, state }), ITERATIONS);
  const with1000 = await timeEach(() => validate(unmatched, { config: thousand, state }), ITERATIONS);
  return {
    matching_policy_validate_p50_us: matching.p50,
    matching_policy_validate_p99_us: matching.p99,
    expression_eval_p50_us: expressionOnly.p50,
    expression_eval_p99_us: expressionOnly.p99,
    object_to_cel_p50_us: conversion.p50,
    no_match_1_policy_p50_us: with1.p50,
    no_match_1_policy_p99_us: with1.p99,
    no_match_1000_policies_p50_us: with1000.p50,
    no_match_1000_policies_p99_us: with1000.p99,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await benchCel();
  process.stdout.write(`${table(Object.entries(figures).map(([figure, value]) => ({ figure, value })))}\n`);
}
