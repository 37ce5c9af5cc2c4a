// The load plan: which webhooks each user request of the load mix calls, derived from the emitted
// configurations as an apiserver would match them (rules, namespaceSelector, matchConditions), for
// the plugins an operator would register with the loaded AdmissionConfiguration.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { loadPlan } from '../../infra/load/plan.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { configurePlugins } from '../../lib/config/plugins.js';
import { CapabilityVerifier, publicKeyText } from '../../lib/http/capability.js';
import { parseWebhookPath } from '../../lib/http/webhook-path.js';
import { OLD_KEY } from '../support/capability.js';

const fixture = JSON.parse(
  readFileSync('test/fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', 'utf8'),
);
const empty = configurePlugins(
  plugins,
  parseAdmissionConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n', 'test'),
);
const withImagePolicy = configurePlugins(
  plugins,
  parseAdmissionConfiguration(
    readFileSync('config/examples/image-policy-webhook.yaml', 'utf8'),
    'config/examples/image-policy-webhook.yaml',
  ),
);

describe('load plan', () => {
  it('calls a plugin that requires its entry only when the configuration has it', () => {
    const called = (set: typeof empty) =>
      new Set(loadPlan(fixture, set).podCreate.calls.map((c) => c.path.split('/')[1]));
    expect(called(empty).has('image-policy-webhook')).toBe(false);
    expect(called(withImagePolicy).has('image-policy-webhook')).toBe(true);
  });

  it("evaluates matchConditions: a user's pod create reaches NodeRestriction's learning webhook only", () => {
    const plan = loadPlan(fixture, empty);
    const nodeRestriction = plan.podCreate.calls.filter((c) => c.path.startsWith('/node-restriction/'));
    expect(nodeRestriction.map((c) => [c.webhook, c.path])).toEqual([
      ['node-restriction.learn.serverless-admission.io', '/node-restriction/learn'],
    ]);
    expect(plan.podCreate.calls.some((c) => c.path.startsWith('/image-policy-webhook/'))).toBe(false);
    // Mutating webhooks come first, by configuration name, as the apiserver orders them.
    const phases = plan.podCreate.calls.map((c) => c.phase);
    expect(phases.indexOf('validate')).toBeGreaterThan(phases.lastIndexOf('mutate'));
  });
});

describe('load plan for a url-secret server', () => {
  it("carries each webhook's own capability, which the server accepts for that plugin and endpoint only", () => {
    const plan = loadPlan(fixture, empty, { mode: 'url-secret', key: OLD_KEY }, 'https://127.0.0.1:8443');
    const verifier = new CapabilityVerifier([publicKeyText(OLD_KEY)]);
    const calls = plan.podCreate.calls;
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      const route = parseWebhookPath(call.path, true)!;
      const grant = { plugin: route.plugin, endpoint: route.endpoint };
      expect(verifier.check(route.capability!, { deployment: '127.0.0.1:8443', grant })).toBeDefined();
      // Bound to the target: the same call at another deployment grants nothing.
      expect(verifier.check(route.capability!, { deployment: 'admission.example.com', grant })).toBeUndefined();
    }
  });
});
