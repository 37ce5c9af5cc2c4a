// Hostile input against every plugin in the registry, through the real Lambda handler (stateful
// ones over DynamoDB Local): arbitrary JSON and mutated real reviews never crash the process,
// never answer with another uid, and every answer either passes the apiserver's response rules or
// is a 4xx.
import { usesStore } from '../../lib/admission/plugin.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { configurePlugin, parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { testPki } from '../support/pki.js';
import { testStore } from '../support/dynamodb.js';
import { apiserverRuleViolations } from '../support/apiserver-rules.js';
import { gatewayEvent, lambdaContext as context } from '../support/gateway-event.js';

const captured = JSON.parse(
  readFileSync(
    new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
    'utf8',
  ),
);
const RUNS = 150;
/** Each stateful answer costs store round trips: fewer runs keep the suite within its budget. */
const STATEFUL_RUNS = 40;

const isStateful = (plugin: AnyAdmissionPlugin) => usesStore(plugin.metadata);

const dir = mkdtempSync(join(tmpdir(), 'fuzz-image-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * ImagePolicyWebhook needs a backend: its kubeconfig names a loopback port that refuses, with
 * defaultAllow, so every review takes the fail-open path quickly.
 */
function imagePolicyConfiguration(): string {
  const ca = Buffer.from(testPki().ca.certPem).toString('base64');
  writeFileSync(
    join(dir, 'backend.kubeconfig'),
    `apiVersion: v1\nkind: Config\nclusters:\n- name: backend\n  cluster: {server: 'https://127.0.0.1:1/review', certificate-authority-data: ${ca}}\nusers:\n- name: webhook\n  user: {}\ncontexts:\n- name: default\n  context: {cluster: backend, user: webhook}\ncurrent-context: default\n`,
  );
  return `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy: {kubeConfigFile: ${join(dir, 'backend.kubeconfig')}, allowTTL: 50, denyTTL: 50, retryBackoff: 1, defaultAllow: true}\n`;
}
const fuzzConfiguration = parseAdmissionConfiguration(
  imagePolicyConfiguration(),
  join(tmpdir(), 'fuzz-admission.yaml'),
);

async function handlerFor(plugin: AnyAdmissionPlugin): Promise<AdmissionHandler> {
  const options = {
    config: configurePlugin(plugin, fuzzConfiguration),
    callerAuth: { mode: 'mtls' as const, allowedSubjects: [] },
  };
  if (!isStateful(plugin)) return createAdmissionHandler(plugin, options);
  const store = await testStore(`fuzz-${plugin.metadata.name}`);
  return createStatefulAdmissionHandler(plugin, { ...options, state: (request) => store.state(request) });
}

const eventFor = (plugin: AnyAdmissionPlugin, phase: 'mutate' | 'validate', body: string) =>
  gatewayEvent(`/${plugin.metadata.name}/${phase}`, body);

const phasesOf = (plugin: AnyAdmissionPlugin) =>
  (['mutate', 'validate'] as const).filter((p) => (p === 'mutate' ? plugin.admit : plugin.validate));

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
  fc.constantFrom(
    '',
    'Always',
    'Never',
    'CREATE',
    'UPDATE',
    'DELETE',
    'pods',
    'v1',
    'Pod',
    null,
    [],
    {},
    -1,
    1e308,
    '\u0000',
    'a/b~c',
  ),
);

describe.each(plugins.map((p) => [p.metadata.name, p] as const))('%s', (_name, plugin) => {
  let handler: AdmissionHandler;
  const numRuns = isStateful(plugin) ? STATEFUL_RUNS : RUNS;
  beforeAll(async () => {
    handler = await handlerFor(plugin);
  });

  it.each(phasesOf(plugin))('%s: arbitrary JSON bodies get a 4xx or a well-formed answer', async (phase) => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (body) => {
        const result = await handler(eventFor(plugin, phase, JSON.stringify(body)), context);
        if (result.statusCode >= 400 && result.statusCode < 500) return;
        expect(apiserverRuleViolations(body as never, phase, result)).toEqual([]);
      }),
      { numRuns },
    );
  });

  it.each(phasesOf(plugin))(
    '%s: mutated real reviews get a 4xx or a well-formed answer with the same uid',
    async (phase) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.nat(), { maxLength: 8 }),
          kubeishValue,
          fc.constantFrom('CREATE', 'UPDATE'),
          async (path, replacement, operation) => {
            const sent = mutateAt(
              {
                ...captured,
                request: {
                  ...captured.request,
                  operation,
                  oldObject: operation === 'UPDATE' ? captured.request.object : null,
                },
              },
              path,
              replacement,
            ) as typeof captured;
            const result = await handler(eventFor(plugin, phase, JSON.stringify(sent)), context);
            if (result.statusCode >= 400 && result.statusCode < 500) return;
            expect(apiserverRuleViolations(sent, phase, result)).toEqual([]);
          },
        ),
        { numRuns },
      );
    },
  );
});
