// Fair share between the clusters of a fleet, through `npm start` itself (infra/local/start.ts in a
// fresh directory with config/clusters/, url-secret mode): cluster blue's settings give it a small
// share, and while blue floods the server with its own valid reviews (what a runaway apiserver of
// blue would send), blue is answered 429 with Retry-After beyond its share and every review of
// cluster green is admitted. Counts and outcomes only: the latency the probe reports is a figure
// for `npm run flood`, not asserted here.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterShare } from '../../infra/local/fair-share.js';
import { readDeploymentKey } from '../../infra/emit/url-secret.js';
import { runFlood } from '../../infra/load/flood.js';
import { ConfigError } from '../../lib/config/errors.js';
import { clusterThrottle, DEFAULT_CLUSTER_THROTTLE, parseClusterSettings } from '../../lib/config/fleet.js';
import type { CapabilityGrant } from '../../lib/http/capability.js';
import { capabilityFor, deploymentOfBaseUrl } from '../../lib/http/capability.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { runServer, type Server, stopServerProcess } from '../e2e/support/webhook-cluster.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { post } from '../support/https-client.js';

const CONFIGURATION = (plugins: string[]) =>
  `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n${plugins.map((p) => `  - name: ${p}\n`).join('')}`;
const BLUE_SHARE = { requestsPerSecond: 2, burst: 5 };

describe('a cluster share (token bucket)', () => {
  it('admits a burst, then one request per 1/rate seconds, and says how long to wait in whole seconds', () => {
    let now = 0;
    const share = new ClusterShare({ requestsPerSecond: 2, burst: 3 }, () => now);
    expect([share.take(), share.take(), share.take()]).toEqual([undefined, undefined, undefined]);
    expect(share.take()).toBe(1);
    now += 499;
    expect(share.take()).toBe(1);
    now += 1;
    expect(share.take()).toBeUndefined();
    // Idle for a minute: full again, never above its burst.
    now += 60_000;
    expect([share.take(), share.take(), share.take(), share.take()]).toEqual([undefined, undefined, undefined, 1]);
  });

  it('asks a slow share to wait the seconds one token takes', () => {
    let now = 0;
    const share = new ClusterShare({ requestsPerSecond: 0.2, burst: 1 }, () => now);
    expect(share.take()).toBeUndefined();
    expect(share.take()).toBe(5);
    now += 4_000;
    expect(share.take()).toBe(1);
  });
});

describe('cluster settings: throttle', () => {
  const file = 'config/clusters/blue.settings.yaml';
  it('defaults to the default share, and reads requestsPerSecond and burst', () => {
    expect(clusterThrottle(parseClusterSettings({}, file))).toEqual(DEFAULT_CLUSTER_THROTTLE);
    expect(clusterThrottle(parseClusterSettings({ throttle: { requestsPerSecond: 50, burst: 80 } }, file))).toEqual({
      requestsPerSecond: 50,
      burst: 80,
    });
    // A burst not given: one second's worth.
    expect(parseClusterSettings({ throttle: { requestsPerSecond: 0.5 } }, file).throttle).toEqual({
      requestsPerSecond: 0.5,
      burst: 1,
    });
  });

  it.each([
    [{ throttle: 100 }, 'throttle', /must be a mapping \(e\.g\. throttle: \{requestsPerSecond: 200, burst: 400\}\)/],
    [{ throttle: { requestsPerSecond: 0 } }, 'throttle.requestsPerSecond', /must be a number > 0 .*got 0; e\.g\./],
    [{ throttle: { rate: 10 } }, 'throttle.rate', /unknown field; known fields: requestsPerSecond, burst/],
    [{ throttle: { requestsPerSecond: 10, burst: 2.5 } }, 'throttle.burst', /must be a whole number >= 1.*got 2\.5/],
    [{ throttle: { requestsPerSecond: 10, burst: 0 } }, 'throttle.burst', /must be a whole number >= 1/],
  ])('refuses %j naming the file and field, with an example', (settings, field, detail) => {
    let error: unknown;
    try {
      parseClusterSettings(settings, file);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).plugin).toBe(`cluster settings ${file}`);
    expect((error as ConfigError).field).toBe(field);
    expect((error as ConfigError).message).toMatch(detail);
  });
});

describe('npm start: a flood from one cluster leaves the other its share', () => {
  let store: TestStore;
  let workdir: string;
  let server: Server | undefined;

  beforeAll(async () => {
    store = await testStore('fair-share');
    workdir = mkdtempSync(join(tmpdir(), 'fair-share-'));
    mkdirSync(join(workdir, 'config/clusters'), { recursive: true });
    writeFileSync(join(workdir, 'config/clusters/blue.yaml'), CONFIGURATION(['AlwaysPullImages']));
    writeFileSync(
      join(workdir, 'config/clusters/blue.settings.yaml'),
      `throttle: {requestsPerSecond: ${BLUE_SHARE.requestsPerSecond}, burst: ${BLUE_SHARE.burst}}\n`,
    );
    writeFileSync(join(workdir, 'config/clusters/green.yaml'), CONFIGURATION(['AlwaysPullImages', 'PodNodeSelector']));
    const { ADMISSION_CONFIG: _config, CLUSTER_KUBECONFIG: _reader, ...inherited } = process.env;
    server = await runServer(workdir, {
      ...inherited,
      PORT: '0',
      LOG_LEVEL: 'silent',
      CALLER_AUTH: 'url-secret',
      DYNAMODB_ENDPOINT: store.endpoint,
      STATE_TABLE: store.tableName,
    });
  });

  afterAll(async () => {
    await stopServerProcess(server);
    store?.close();
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  });

  const caPem = () => readFileSync(join(workdir, '.local/pki/ca.crt'), 'utf8');
  /** What emit --cluster writes: the cluster's key (npm start created it) signing this grant. */
  function capability(cluster: string, grant: CapabilityGrant): string {
    const key = readDeploymentKey(join(workdir, `.local/clusters/${cluster}/url-secret`));
    return capabilityFor(key, { deployment: deploymentOfBaseUrl(server!.url), cluster, grant });
  }
  const validate = (cluster: string) =>
    formatWebhookPath({
      cluster,
      capability: capability(cluster, { plugin: 'always-pull-images', endpoint: 'validate' }),
      plugin: 'always-pull-images',
      endpoint: 'validate',
    });
  const review = () =>
    readFileSync(
      new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
      'utf8',
    );

  it('refuses blue beyond its share with 429 and Retry-After while answering every review of green', async () => {
    const report = await runFlood({
      baseUrl: server!.url,
      caPem: caPem(),
      realPath: validate('green'),
      realBody: review(),
      flood: 'cluster',
      floodPath: validate('blue'),
      cluster: 'green',
      floodRate: 150,
      realRate: 20,
      seconds: 1.5,
      timeoutSeconds: 10,
    });
    // Green: every review sent was answered (200), none refused for a share.
    expect(report.real.sent).toBeGreaterThan(0);
    expect(report.real.failed).toBe(0);
    expect(report.real.answered).toBe(report.real.sent);
    // Blue: its share admitted some, the rest was refused 429; nothing else.
    const sent = report.flood.attempted - report.flood.skipped;
    expect(report.flood.throttled).toBeGreaterThan(0);
    expect(report.flood.accepted).toBeGreaterThanOrEqual(1);
    expect(report.flood.accepted + report.flood.throttled).toBe(sent);
    expect(report.flood.otherErrors + report.flood.refused).toBe(0);
    // Admitted beyond its burst only what its rate refilled, and far less than it sent.
    expect(report.flood.accepted).toBeLessThan(sent);

    const throttled = await post(`${server!.url}${validate('blue')}?timeout=10s`, review(), { caPem: caPem() });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(throttled.body).toBe(
      `cluster blue is over its fair share of ${BLUE_SHARE.requestsPerSecond} requests per second (burst ${BLUE_SHARE.burst}): retry later\n`,
    );
    // Green's share is its own: still admitted while blue is refused.
    const green = await post(`${server!.url}${validate('green')}?timeout=10s`, review(), { caPem: caPem() });
    expect(green.status).toBe(200);
    // An answer (AlwaysPullImages refuses the fixture's IfNotPresent), not a refusal of the call.
    expect(JSON.parse(green.body).response.uid).toBe(JSON.parse(review()).request.uid);
  });

  it('spends no share on a caller without a valid capability: it is refused 403, the share stays', async () => {
    const forged = formatWebhookPath({
      cluster: 'blue',
      capability: capability('green', { plugin: 'always-pull-images', endpoint: 'validate' }),
      plugin: 'always-pull-images',
      endpoint: 'validate',
    });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(`${server!.url}${forged}?timeout=10s`, review(), { caPem: caPem() })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(403));
  });

  it('counts the refused requests by cluster, and every answered one under its cluster', async () => {
    const path = `/green/${capability('green', 'metrics')}/metrics`;
    const scraped = await post(`${server!.url}${path}`, '', { caPem: caPem() }, { method: 'GET' });
    expect(scraped.status).toBe(200);
    const throttledBlue = /^serverless_admission_cluster_throttled_total\{cluster="blue"\} (\d+)$/m.exec(scraped.body);
    expect(Number(throttledBlue?.[1])).toBeGreaterThan(0);
    expect(scraped.body).not.toMatch(/serverless_admission_cluster_throttled_total\{cluster="green"\}/);
    expect(scraped.body).toMatch(
      /^serverless_admission_webhook_request_total\{cluster="green",plugin="always-pull-images",phase="validate",operation="CREATE",code="200",/m,
    );
    expect(scraped.body).toMatch(
      /^serverless_admission_webhook_request_total\{cluster="blue",plugin="always-pull-images",/m,
    );
  });
});
