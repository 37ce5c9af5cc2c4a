// Hostile input against every stateless plugin in the registry, through the real Lambda handler:
// arbitrary JSON and mutated real reviews never crash the process, never answer with another
// uid, and every answer either passes the apiserver's response rules or is a 4xx.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { configurePlugin, parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { apiserverRuleViolations } from '../support/apiserver-rules.js';
import { gatewayEvent, lambdaContext as context } from '../support/gateway-event.js';

const captured = JSON.parse(readFileSync(new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url), 'utf8'));
const noConfiguration = parseAdmissionConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n', 'fuzz.yaml');
const RUNS = 150;

// Plugins that need the store are fuzzed where the store runs (test/state).
const stateless = plugins.filter((p) => !p.metadata.writes && p.metadata.needs.length === 0);

const eventFor = (plugin: AnyAdmissionPlugin, phase: 'mutate' | 'validate', body: string) => gatewayEvent(`/${plugin.metadata.name}/${phase}`, body);

const phasesOf = (plugin: AnyAdmissionPlugin) => (['mutate', 'validate'] as const).filter((p) => (p === 'mutate' ? plugin.admit : plugin.validate));

/** Replaces one node of a JSON value, found by walking a random path, with an arbitrary value. */
function mutateAt(value: unknown, path: number[], replacement: unknown): unknown {
  if (path.length === 0 || value === null || typeof value !== 'object') return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[path[0] % keys.length];
  const copy: any = Array.isArray(value) ? [...value] : { ...value };
  copy[key] = mutateAt((value as any)[key], path.slice(1), replacement);
  return copy;
}

const kubeishValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom('', 'Always', 'Never', 'CREATE', 'UPDATE', 'DELETE', 'pods', 'v1', 'Pod', null, [], {}, -1, 1e308, '\u0000', 'a/b~c'),
);

describe.each(stateless.map((p) => [p.metadata.name, p] as const))('%s', (_name, plugin) => {
  const config = configurePlugin(plugin, noConfiguration);
  const handler = createAdmissionHandler(plugin, { config, callerAuth: { mode: 'mtls', allowedSubjects: [] } });

  it.each(phasesOf(plugin))('%s: arbitrary JSON bodies get a 4xx or a well-formed answer', async (phase) => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (body) => {
        const result = await handler(eventFor(plugin, phase, JSON.stringify(body)), context);
        if (result.statusCode >= 400 && result.statusCode < 500) return;
        expect(apiserverRuleViolations(body as never, phase, result)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it.each(phasesOf(plugin))('%s: mutated real reviews get a 4xx or a well-formed answer with the same uid', async (phase) => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 8 }), kubeishValue, fc.constantFrom('CREATE', 'UPDATE'), async (path, replacement, operation) => {
        const sent = mutateAt({ ...captured, request: { ...captured.request, operation, oldObject: operation === 'UPDATE' ? captured.request.object : null } }, path, replacement) as typeof captured;
        const result = await handler(eventFor(plugin, phase, JSON.stringify(sent)), context);
        if (result.statusCode >= 400 && result.statusCode < 500) return;
        expect(apiserverRuleViolations(sent, phase, result)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});
