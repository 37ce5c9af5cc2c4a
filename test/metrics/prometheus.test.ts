// `GET /metrics` on the local server: the deployed handlers (a stateless plugin, and ResourceQuota
// over DynamoDB Local through the deployed store wiring) serve real reviews, and every decision
// path moves the Prometheus series the scrape then shows.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import alwaysPullImages from '../../functions/always-pull-images/plugin.js';
import resourceQuota from '../../functions/resource-quota/plugin.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import type { CallerAuth } from '../../lib/http/caller-identity.js';
import { capability, urlSecretAuth } from '../support/capability.js';
import { APISERVER_WEBHOOK_BUCKETS, METRIC, pluginMetrics, prometheusRegistry } from '../../lib/metrics/index.js';
import { HELP } from '../../lib/metrics/catalog.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { PrometheusRegistry } from '../../lib/metrics/prometheus.js';
import { createPki } from '../../infra/pki/pki.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import type { ClientIdentity } from '../support/https-client.js';
import { post } from '../support/https-client.js';
import { review } from '../support/review.js';

const pki = createPki();
const apiserver: ClientIdentity = { caPem: pki.ca.certPem, certPem: pki.client.certPem, keyPem: pki.client.keyPem };
const tls = { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem };
const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/admission.yaml' });
const podCreateDryRun = readFileSync(
  new URL('../fixtures/apiserver/admissionreview-v1-pod-create-dryrun-k8s-v1.20.2.json', import.meta.url),
  'utf8',
);

let store: TestStore;
let server: LocalServer;
let secretServer: LocalServer;
const saved = { endpoint: process.env.DYNAMODB_ENDPOINT, table: process.env.STATE_TABLE };

/** The deployed handler of a plugin (with the store for stateful ones), counting into /metrics. */
function handler(plugin: AnyAdmissionPlugin, callerAuth: CallerAuth): AdmissionHandler {
  const metrics = pluginMetrics(plugin.metadata.name, 'prometheus');
  return createPluginHandler(plugin, { config: configurePlugin(plugin, configuration), callerAuth, metrics });
}

beforeAll(async () => {
  store = await testStore('metrics');
  // The deployed wiring (lib/state's stateFromEnv) reads these at each request.
  process.env.DYNAMODB_ENDPOINT = store.endpoint;
  process.env.STATE_TABLE = store.tableName;
  const mtls = { mode: 'mtls' as const, allowedSubjects: [] };
  const handlers = new Map([alwaysPullImages, resourceQuota].map((p) => [p.metadata.name, handler(p, mtls)]));
  server = await startLocalServer({
    handlers,
    tls,
    requireClientCertificate: true,
    port: 0,
    metrics: { text: () => prometheusRegistry.render() },
  });
  const callerAuth = urlSecretAuth();
  secretServer = await startLocalServer({
    handlers: new Map([[alwaysPullImages.metadata.name, handler(alwaysPullImages, callerAuth)]]),
    tls,
    requireClientCertificate: false,
    port: 0,
    ...(callerAuth.mode === 'url-secret' && { capabilities: callerAuth.capabilities }),
    metrics: { text: () => prometheusRegistry.render() },
  });
});

afterAll(async () => {
  await server?.close();
  await secretServer?.close();
  store?.close();
  for (const [key, value] of [
    ['DYNAMODB_ENDPOINT', saved.endpoint],
    ['STATE_TABLE', saved.table],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

/** The value of the series of `name` whose labels include `labels`, summed over the others. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-z_]+)="((?:\\.|[^"])*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(match[3]);
  }
  return total;
}

async function scrape(): Promise<string> {
  const answer = await post(`${server.url}/metrics`, '', apiserver, { method: 'GET' });
  expect(answer.status).toBe(200);
  expect(answer.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return answer.body;
}

/** How much each series moved while `act` ran. */
async function delta(act: () => Promise<void>): Promise<(name: string, labels?: Record<string, string>) => number> {
  const before = await scrape();
  await act();
  const after = await scrape();
  return (name, labels) => sample(after, name, labels) - sample(before, name, labels);
}

const NS = 'team-metrics';
const pod = (name: string, extra: object = {}) =>
  JSON.stringify(
    review({
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NS, uid: `uid-${name}` },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      },
      ...extra,
    }),
  );
const quota = JSON.stringify(
  review({
    kind: { kind: 'ResourceQuota' },
    resource: { resource: 'resourcequotas' },
    object: {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'pods-quota', namespace: NS },
      spec: { hard: { pods: '1' } },
    },
  }),
);

async function send(path: string, body: string): Promise<number> {
  return (await post(`${server.url}${path}?timeout=10s`, body, apiserver)).status;
}

async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('GET /metrics', () => {
  it('counts allowed, patched, denied, learning and dry-run answers per plugin and phase, with store calls', async () => {
    const moved = await delta(async () => {
      expect(await send('/resource-quota/learn', quota)).toBe(200); // learned: the quota
      expect(await send('/resource-quota/validate', pod('p1'))).toBe(200); // allowed: 1 of 1
      expect(await send('/resource-quota/validate', pod('p2'))).toBe(200); // denied: exceeded quota
      expect(await send('/always-pull-images/mutate', pod('p3'))).toBe(200); // patched: imagePullPolicy
      expect(await send('/always-pull-images/validate', podCreateDryRun)).toBe(200);
    });
    const rq = { plugin: 'resource-quota', phase: 'validate' };
    const learning = { plugin: 'resource-quota', phase: 'learn' };
    expect(moved(METRIC.requests, { ...rq, code: '200', rejected: 'false' })).toBe(1);
    expect(moved(METRIC.requests, { ...rq, code: '200', rejected: 'true', operation: 'CREATE' })).toBe(1);
    expect(moved(METRIC.requests, { ...learning, code: '200', rejected: 'false', operation: 'CREATE' })).toBe(1);
    expect(moved(METRIC.decisions, { ...rq, decision: 'allowed' })).toBe(1);
    expect(moved(METRIC.decisions, { ...rq, decision: 'denied', rejection_code: '403' })).toBe(1);
    expect(moved(METRIC.decisions, { ...learning, decision: 'allowed' })).toBe(1);
    expect(moved(METRIC.decisions, { plugin: 'always-pull-images', phase: 'mutate', decision: 'patched' })).toBe(1);
    expect(moved(METRIC.dryRuns, { plugin: 'always-pull-images', phase: 'validate' })).toBe(1);
    expect(moved(`${METRIC.duration}_count`, rq)).toBe(2);
    expect(moved(`${METRIC.duration}_bucket`, { ...rq, le: '+Inf' })).toBe(2);
    expect(moved(`${METRIC.duration}_count`, learning)).toBe(1);
    expect(moved(`${METRIC.storeCalls}`, { plugin: 'resource-quota', result: 'ok' })).toBeGreaterThan(0);
    expect(moved(`${METRIC.storeDuration}_count`, { plugin: 'resource-quota' })).toBe(
      moved(METRIC.storeCalls, { plugin: 'resource-quota' }),
    );
    expect(moved(METRIC.storeCalls, { plugin: 'always-pull-images' })).toBe(0);
    expect(moved(METRIC.failures)).toBe(0);
  });

  it('uses the apiserver webhook duration buckets and counts each handler cold start once', async () => {
    const text = await scrape();
    const les = [
      ...text.matchAll(
        new RegExp(
          `^${METRIC.duration}_bucket\\{plugin="resource-quota",phase="validate",operation="CREATE",rejected="false",le="([^"]+)"\\}`,
          'gm',
        ),
      ),
    ].map((m) => m[1]);
    expect(les).toEqual([...APISERVER_WEBHOOK_BUCKETS.map(String), '+Inf']);
    expect(sample(text, METRIC.coldStarts, { plugin: 'resource-quota' })).toBe(1);
    // Counted at a handler's first request: the url-secret server's handler has not served yet.
    expect(sample(text, METRIC.coldStarts, { plugin: 'always-pull-images' })).toBe(1);
    expect(text).toContain(`# TYPE ${METRIC.duration} histogram`);
    expect(text).toContain(`# TYPE ${METRIC.requests} counter`);
  });

  it('counts malformed requests by reason', async () => {
    const moved = await delta(async () => {
      expect(await send('/always-pull-images/validate', '{nope')).toBe(400);
      expect(
        (await post(`${server.url}/always-pull-images/validate`, pod('x'), apiserver, { contentType: 'text/plain' }))
          .status,
      ).toBe(415);
    });
    expect(moved(METRIC.malformed, { plugin: 'always-pull-images', phase: 'validate', reason: 'bad_request' })).toBe(1);
    expect(
      moved(METRIC.malformed, { plugin: 'always-pull-images', phase: 'validate', reason: 'unsupported_media_type' }),
    ).toBe(1);
    expect(moved(METRIC.requests, { plugin: 'always-pull-images', code: '400', rejected: 'true', operation: '' })).toBe(
      1,
    );
  });

  it('counts an unreachable store as a store_unavailable failure and its calls as unavailable', async () => {
    process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${await deadPort()}`;
    try {
      const moved = await delta(async () => {
        expect(await send('/resource-quota/validate', pod('p9'))).toBe(500);
      });
      expect(moved(METRIC.failures, { plugin: 'resource-quota', phase: 'validate', reason: 'store_unavailable' })).toBe(
        1,
      );
      expect(moved(METRIC.requests, { plugin: 'resource-quota', code: '500', rejected: 'true' })).toBe(1);
      expect(moved(METRIC.storeCalls, { plugin: 'resource-quota', result: 'unavailable' })).toBeGreaterThan(0);
    } finally {
      process.env.DYNAMODB_ENDPOINT = store.endpoint;
    }
  });

  it("is behind the client certificate, and in url-secret mode behind the metrics' own capability", async () => {
    const METRICS = capability('metrics', secretServer.url);
    const VALIDATE = capability({ plugin: 'always-pull-images', endpoint: 'validate' }, secretServer.url);
    await expect(post(`${server.url}/metrics`, '', { caPem: pki.ca.certPem }, { method: 'GET' })).rejects.toThrow();
    const get = async (path: string) =>
      (await post(`${secretServer.url}${path}`, '', { caPem: pki.ca.certPem }, { method: 'GET' })).status;
    // Refused as any caller without a capability is (403), whatever the path.
    expect(await get('/metrics')).toBe(403);
    expect(await get('/wrong-secret/metrics')).toBe(403);
    // A webhook's capability is not the metrics' one.
    expect(await get(`/${VALIDATE}/metrics`)).toBe(403);
    expect(await get(`/${METRICS}/metrics`)).toBe(200);
    // A capability reaches neither the metrics nor (through the path label) anything scraped.
    expect(
      await post(`${secretServer.url}/${VALIDATE}/always-pull-images/validate`, pod('s1'), { caPem: pki.ca.certPem }),
    ).toMatchObject({ status: 200 });
    const text = await scrape();
    expect(text).not.toContain(VALIDATE);
    expect(text).not.toContain(METRICS);
    expect(sample(text, METRIC.coldStarts, { plugin: 'always-pull-images' })).toBe(2); // its first request
  });
});

describe('before the first request', () => {
  it('every family is described, HELP then TYPE, and has no sample yet', async () => {
    const registry = new PrometheusRegistry();
    const fresh = await startLocalServer({
      handlers: new Map(),
      tls,
      requireClientCertificate: true,
      port: 0,
      metrics: { text: () => registry.render() },
    });
    try {
      const answer = await post(`${fresh.url}/metrics`, '', apiserver, { method: 'GET' });
      expect(answer.status).toBe(200);
      const histograms = new Set<string>([METRIC.duration, METRIC.storeDuration]);
      expect(answer.body).toBe(
        Object.values(METRIC)
          .map(
            (name) =>
              `# HELP ${name} ${HELP[name]}\n# TYPE ${name} ${histograms.has(name) ? 'histogram' : name === METRIC.readerLag ? 'gauge' : 'counter'}\n`,
          )
          .join(''),
      );
    } finally {
      await fresh.close();
    }
  });

  it('a family keeps its HELP and TYPE once, above its first sample', () => {
    const registry = new PrometheusRegistry();
    registry.recordStoreCall('p', { operation: 'GetItem', result: 'ok', seconds: 0.002 });
    const lines = registry.render().split('\n');
    expect(lines.filter((l) => l === `# TYPE ${METRIC.storeCalls} counter`)).toHaveLength(1);
    const type = lines.indexOf(`# TYPE ${METRIC.storeCalls} counter`);
    expect(lines[type + 1]).toBe(`${METRIC.storeCalls}{plugin="p",operation="GetItem",result="ok"} 1`);
  });
});
