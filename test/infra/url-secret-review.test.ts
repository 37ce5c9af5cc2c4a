// What an outside review of url-secret mode tried and found open, each through the local server
// (real HTTPS, the deployed handlers, DynamoDB Local): a capability that worked at every deployment
// its key signed for, other spellings of one capability, and what refusals and failures told.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import alwaysPullImages from '../../functions/always-pull-images/plugin.js';
import namespaceLifecycle from '../../functions/namespace-lifecycle/plugin.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { setLogSink } from '../../lib/http/log.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import type { CallerAuthOption } from '../../infra/emit/webhooks.js';
import { webhookUrl } from '../../infra/emit/webhooks.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { OLD_KEY, urlSecretAuth } from '../support/capability.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { post } from '../support/https-client.js';
import { testPki } from '../support/pki.js';

const podCreate = readFileSync(
  new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
  'utf8',
);
const pki = testPki();
const noCertificate = { caPem: pki.ca.certPem };
/** What `npm run emit -- --auth url-secret` signs with: the deployment key. */
const emitting: CallerAuthOption = { mode: 'url-secret', key: OLD_KEY };

let server: LocalServer;
let store: TestStore;
const logged: string[] = [];

beforeAll(async () => {
  store = await testStore('url-secret-review');
  const callerAuth = urlSecretAuth(OLD_KEY);
  const handlers = new Map<string, AdmissionHandler>([
    [alwaysPullImages.metadata.name, createAdmissionHandler(alwaysPullImages, { config: undefined, callerAuth })],
    [
      namespaceLifecycle.metadata.name,
      createPluginHandler(namespaceLifecycle as AnyAdmissionPlugin, {
        config: undefined,
        callerAuth,
        state: (request) => store.state(request),
      }),
    ],
  ]);
  server = await startLocalServer({
    handlers,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
    requireClientCertificate: false,
    port: 0,
    ...(callerAuth.mode === 'url-secret' && { capabilities: callerAuth.capabilities }),
  });
  setLogSink((line) => logged.push(line));
});

afterAll(async () => {
  setLogSink(undefined);
  await server?.close();
  store?.close();
});

/** The path of the URL emit writes for `--base-url base`, sent to the local server. */
const pathOf = (url: string, base: string) => url.slice(base.length);
const send = (path: string, body = podCreate) => post(`${server.url}${path}?timeout=10s`, body, noCertificate);
const emitted = (base: string, plugin = 'always-pull-images', endpoint: Endpoint = 'mutate') =>
  pathOf(webhookUrl(base, plugin, endpoint, emitting), base);

describe('a capability is bound to the deployment it was emitted for', () => {
  it('the same key makes different URLs for production and for the local trial', () => {
    expect(emitted('https://admission.example.com')).not.toBe(emitted(server.url));
  });

  it("grants at the local server only the URL emitted for the local server's own base URL", async () => {
    expect((await send(emitted(server.url))).status).toBe(200);
    for (const elsewhere of [
      'https://admission.example.com',
      `https://localhost:${server.port}`,
      `https://127.0.0.1:${server.port + 1}`,
      `https://127.0.0.1:${server.port}/dev`,
    ]) {
      const answer = await send(emitted(elsewhere));
      expect(answer.status, elsewhere).toBe(403);
      expect(answer.body).toBe('caller capability missing or not valid\n');
    }
  });

  it('on API Gateway: the name requestContext.domainName reached and the stage of an execute-api name', async () => {
    const handler = createAdmissionHandler(alwaysPullImages, { config: undefined, callerAuth: urlSecretAuth(OLD_KEY) });
    const executeApi = 'abc123.execute-api.eu-west-1.amazonaws.com';
    /** A REST event as API Gateway sends it: the route in `path`, the stage too in requestContext.path. */
    const event = (domainName: string, stage: string | undefined, routePath: string) =>
      ({
        path: routePath,
        httpMethod: 'POST',
        headers: { 'content-type': 'application/json' },
        body: podCreate,
        isBase64Encoded: false,
        requestContext: { domainName, path: `${stage ? `/${stage}` : ''}${routePath}`, identity: {} },
      }) as never;
    const status = async (domainName: string, stage: string | undefined, base: string) =>
      (await handler(event(domainName, stage, emitted(base)), {} as never)).statusCode;
    expect(await status(executeApi, 'dev', `https://${executeApi}/dev`)).toBe(200);
    expect(await status(executeApi, 'prod', `https://${executeApi}/dev`)).toBe(403);
    expect(await status('admission.example.com', undefined, 'https://admission.example.com')).toBe(200);
    expect(await status('admission.example.com', undefined, `https://${executeApi}/dev`)).toBe(403);
    expect(await status(executeApi, 'dev', 'https://admission.example.com')).toBe(403);
    // Upper case and an explicit :443 in --base-url name the same deployment as API Gateway's domainName.
    expect(await status('admission.example.com', undefined, 'https://Admission.Example.com:443')).toBe(200);
  });
});

describe('a capability has one spelling', () => {
  const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

  it('refuses the 15 other last characters that decode to the same bytes (the 4 unused bits)', async () => {
    const path = emitted(server.url);
    const [, capability, rest] = /^\/([^/]+)(\/.*)$/.exec(path)!;
    const last = BASE64URL.indexOf(capability.at(-1)!);
    const spellings = Array.from({ length: 16 }, (_, bits) => BASE64URL[(last & ~0xf) | bits]);
    const statuses = await Promise.all(
      spellings.map(async (c) => [c, (await send(`/${capability.slice(0, -1)}${c}${rest}`)).status]),
    );
    expect(statuses).toEqual(spellings.map((c) => [c, c === capability.at(-1) ? 200 : 403]));
  });

  it('refuses the capability percent-encoded, wholly or in one character', async () => {
    const path = emitted(server.url);
    const [, capability, rest] = /^\/([^/]+)(\/.*)$/.exec(path)!;
    const hex = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
    const whole = [...capability].map(hex).join('');
    const one = `${hex(capability[0])}${capability.slice(1)}`;
    for (const spelling of [whole, one, whole.toLowerCase()]) {
      const answer = await send(`/${spelling}${rest}`);
      expect(answer.status, spelling.slice(0, 12)).toBe(403);
    }
    expect((await send(path)).status).toBe(200);
  });

  it('refuses the path with an empty segment or a trailing slash', async () => {
    const path = emitted(server.url);
    const [, capability, rest] = /^\/([^/]+)(\/.*)$/.exec(path)!;
    for (const spelling of [`/${capability}/${rest}`, `/${capability}${rest}/`]) {
      expect((await send(spelling)).status, spelling.slice(-30)).toBe(403);
    }
  });
});

describe('a refusal says nothing of what is served; a failure nothing of the store', () => {
  it('answers an unknown route without a valid capability exactly as a wrong capability', async () => {
    const refused = await send('/wrong/always-pull-images/mutate');
    expect(refused).toMatchObject({ status: 403, body: 'caller capability missing or not valid\n' });
    for (const path of [
      '/wrong/always-pull-images/learn', // an endpoint the plugin does not serve
      '/wrong/no-such-plugin/validate', // a plugin not served
      '/wrong/always-pull-images/judge', // no endpoint at all
      '/always-pull-images/mutate', // no capability segment
      '/wrong/metrics',
    ]) {
      const answer = await send(path);
      expect({ status: answer.status, body: answer.body }, path).toEqual({
        status: refused.status,
        body: refused.body,
      });
    }
    const get = await post(`${server.url}/wrong/always-pull-images/mutate`, '', noCertificate, { method: 'GET' });
    expect({ status: get.status, body: get.body }).toEqual({ status: refused.status, body: refused.body });
  });

  it('says what is served only to a caller with a valid capability for the path', async () => {
    const learn = await send(emitted(server.url, 'always-pull-images', 'learn'));
    expect(learn.status).toBe(404);
    expect(learn.body).toContain('always-pull-images serves /always-pull-images/mutate');
    expect(learn.body).not.toContain(emitted(server.url, 'always-pull-images', 'learn').split('/')[1]);
  });

  it("answers a store failure 500 without the store's text, and logs it bounded", async () => {
    const forged = JSON.parse(podCreate);
    const namespace = 'n'.repeat(3000); // over DynamoDB's 2,048-byte partition key
    forged.request.namespace = namespace;
    forged.request.object.metadata.namespace = namespace;
    const before = logged.length;
    const answer = await send(emitted(server.url, 'namespace-lifecycle', 'validate'), JSON.stringify(forged));
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(/^internal error \(request id [0-9a-f-]{36}\)\n$/);
    const lines = logged.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(answer.body).toContain(line.requestId as string);
    // The log keeps what failed, cut where it is long: every text field, however long the input.
    const failure = line.failure as { reason: string; stack: string };
    expect(failure.reason).toMatch(/ValidationException/);
    expect(line.namespace).toBe(`${'n'.repeat(256)}…[2744 more characters]`);
    const texts = (value: unknown): string[] =>
      typeof value === 'string'
        ? [value]
        : value && typeof value === 'object'
          ? Object.entries(value).flatMap(([key, v]) => (key === 'stack' ? [] : texts(v)))
          : [];
    for (const text of texts(line)) expect(text.length).toBeLessThanOrEqual(256 + '…[9999 more characters]'.length);
    expect(failure.stack.length).toBeLessThanOrEqual(2048 + '…[99999 more characters]'.length);
  });
});
