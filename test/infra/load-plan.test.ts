// The load plan: which webhooks each user request of the load mix calls, derived from the emitted
// configurations as an apiserver would match them (rules, namespaceSelector, matchConditions), for
// the plugins an operator would register with the loaded AdmissionConfiguration.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { loadPlan, registeredPlugins } from '../../infra/load/plan.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';

const fixture = JSON.parse(readFileSync('test/fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', 'utf8'));
const empty = parseAdmissionConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n', 'test');
const withImagePolicy = parseAdmissionConfiguration(readFileSync('config/examples/image-policy-webhook.yaml', 'utf8'), 'config/examples/image-policy-webhook.yaml');

describe('load plan', () => {
  it('registers a plugin that requires its entry only when the configuration has it', () => {
    const names = (configuration: typeof empty) => registeredPlugins(plugins, configuration).map((p) => p.metadata.name);
    expect(names(empty)).not.toContain('image-policy-webhook');
    expect(names(withImagePolicy)).toContain('image-policy-webhook');
    expect(names(empty)).toHaveLength(plugins.length - 1);
  });

  it("evaluates matchConditions: a user's pod create reaches NodeRestriction's learning webhook only", () => {
    const plan = loadPlan(plugins, fixture, empty);
    const nodeRestriction = plan.podCreate.calls.filter((c) => c.path === '/node-restriction/validate');
    expect(nodeRestriction.map((c) => c.webhook)).toEqual(['node-restriction.learn.serverless-admission.io']);
    expect(plan.podCreate.calls.some((c) => c.path.startsWith('/image-policy-webhook/'))).toBe(false);
    // Mutating webhooks come first, by configuration name, as the apiserver orders them.
    const phases = plan.podCreate.calls.map((c) => c.phase);
    expect(phases.indexOf('validate')).toBeGreaterThan(phases.lastIndexOf('mutate'));
  });
});
