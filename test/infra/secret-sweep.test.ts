// The capability stays secret: in url-secret mode (EKS, GKE, AKS) the first path segment is a
// webhook's credential. Every kind of request, right and wrong, goes to the local server (the
// deployed handlers of every active plugin behind a real HTTPS server), and the capability must
// appear in nothing the server answered or logged.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugins as registry } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { setLogSink } from '../../lib/http/log.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { capability, urlSecretAuth } from '../support/capability.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { createPki } from '../../infra/pki/pki.js';
import type { HttpAnswer } from '../support/https-client.js';
import { post } from '../support/https-client.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';

/** always-pull-images' mutate capability at the server (made once it listens). */
let SECRET: string;
const pki = createPki();
const caller = { caPem: pki.ca.certPem };
const podCreate = readFileSync(
  new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
  'utf8',
);

let server: LocalServer;
let store: TestStore;
const logged: string[] = [];

beforeAll(async () => {
  store = await testStore('secret-sweep');
  setLogSink((line) => logged.push(line));
  const callerAuth = urlSecretAuth();
  const handlers = new Map<string, AdmissionHandler>();
  for (const { plugin, config } of activePlugins(
    loadPluginSet(registry, { ADMISSION_CONFIG: 'config/admission.yaml' }),
  )) {
    handlers.set(
      plugin.metadata.name,
      createPluginHandler(plugin as AnyAdmissionPlugin, {
        config,
        callerAuth,
        state: (request) => store.state(request),
      }),
    );
  }
  server = await startLocalServer({
    handlers,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
    requireClientCertificate: false,
    port: 0,
    ...(callerAuth.mode === 'url-secret' && { capabilities: callerAuth.capabilities }),
  });
  SECRET = capability({ plugin: 'always-pull-images', endpoint: 'mutate' }, server.url);
});

afterAll(async () => {
  setLogSink(undefined);
  await server?.close();
  store?.close();
});

const url = (path: string) => `${server.url}${path}?timeout=10s`;
/** The path with the given capability (by default the plugin's own for that endpoint). */
const withSecret = (plugin: string, endpoint: Endpoint, secret = capability({ plugin, endpoint }, server.url)) =>
  url(formatWebhookPath({ plugin, endpoint, capability: secret }));

const REQUESTS: readonly [what: string, send: () => Promise<HttpAnswer>, status: number][] = [
  ['the right secret, a real review', () => post(withSecret('always-pull-images', 'mutate'), podCreate, caller), 200],
  [
    'the right secret, a stateful plugin',
    () => post(withSecret('namespace-lifecycle', 'validate'), podCreate, caller),
    200,
  ],
  ['a wrong secret', () => post(withSecret('always-pull-images', 'mutate', `${SECRET}x`), podCreate, caller), 403],
  [
    "another endpoint's capability",
    () => post(withSecret('always-pull-images', 'validate', SECRET), podCreate, caller),
    403,
  ],
  ['an unknown plugin', () => post(withSecret('no-such-plugin', 'mutate'), podCreate, caller), 404],
  // Without a capability for what the path names, every path is refused alike (403).
  ['an unknown phase', () => post(url(`/${SECRET}/always-pull-images/judge`), podCreate, caller), 403],
  [
    'a phase the plugin does not serve',
    () => post(withSecret('deny-service-external-ips', 'mutate'), podCreate, caller),
    404,
  ],
  ['the secret in the wrong place', () => post(url(`/always-pull-images/${SECRET}/mutate`), podCreate, caller), 403],
  ['the secret alone', () => post(url(`/${SECRET}`), podCreate, caller), 403],
  ['GET', () => post(withSecret('always-pull-images', 'mutate'), '', caller, { method: 'GET' }), 405],
  [
    'an oversized body',
    () => post(withSecret('always-pull-images', 'mutate'), Buffer.alloc(7 * 1024 * 1024, 0x20), caller),
    413,
  ],
  [
    'a wrong content type',
    () => post(withSecret('always-pull-images', 'mutate'), podCreate, caller, { contentType: 'text/plain' }),
    415,
  ],
  ['a malformed body', () => post(withSecret('always-pull-images', 'mutate'), '{"apiVersion": ', caller), 400],
  [
    'a review without uid',
    () =>
      post(
        withSecret('always-pull-images', 'mutate'),
        JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }),
        caller,
      ),
    400,
  ],
];

/** What the server answers itself, before any handler (so no request log line). */
const ANSWERED_BY_THE_SERVER = new Set([
  'an unknown plugin',
  'an unknown phase',
  'the secret in the wrong place',
  'the secret alone',
  'GET',
  'an oversized body',
]);

describe('url-secret mode: a capability never leaves the URL', () => {
  it.each(REQUESTS)('%s: the capability is in neither the answer nor the log', async (what, send, status) => {
    const before = logged.length;
    const answer = await send();
    expect(answer.status).toBe(status);
    expect(answer.body).not.toContain(SECRET);
    expect(JSON.stringify(answer.headers)).not.toContain(SECRET);
    const lines = logged.slice(before);
    for (const line of lines) expect(line).not.toContain(SECRET);
    // Requests that reach a handler are logged, with the path redacted.
    if (!ANSWERED_BY_THE_SERVER.has(what)) {
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]).path).toMatch(/^\/<redacted>\/[a-z-]+\/(mutate|validate)$/);
    }
  });

  it('says which path it did not find, redacted', async () => {
    const answer = await post(withSecret('no-such-plugin', 'mutate'), podCreate, caller);
    expect(answer.body).toBe('no webhook at /<redacted>/<redacted>/mutate\n');
  });
});
