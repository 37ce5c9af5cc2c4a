// A fleet through the local server (real HTTPS, the deployed handlers, DynamoDB Local): two
// clusters, `blue` (PodNodeSelector, ResourceQuota) and `green` (AlwaysPullImages, PodNodeSelector,
// ResourceQuota), each with its own key or certificate subject, its own plugins and its own
// partitions of one table. The same namespace names in both, judged by each one's own state.
import type { KeyObject } from 'node:crypto';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import type { AdmissionPlugin } from '../../lib/admission/plugin.js';
import type { CallerAuth } from '../../lib/http/caller-identity.js';
import { CapabilityVerifier, capabilityFor, deploymentOfBaseUrl, publicKeyText } from '../../lib/http/capability.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { setLogSink } from '../../lib/http/log.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { activePlugins, configurePlugins } from '../../lib/config/plugins.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import type { ClusterRoutes, LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { issueCertificate } from '../../infra/pki/pki.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { post } from '../support/https-client.js';
import { testPki } from '../support/pki.js';
import { review } from '../support/review.js';

const pki = testPki();
const KEYS: Record<string, KeyObject> = {
  blue: generateKeyPairSync('ed25519').privateKey,
  green: generateKeyPairSync('ed25519').privateKey,
};
const PLUGINS: Record<string, string[]> = {
  blue: ['PodNodeSelector', 'ResourceQuota'],
  green: ['AlwaysPullImages', 'PodNodeSelector', 'ResourceQuota'],
};

/** Each cluster's AdmissionConfiguration, as config/clusters/<cluster>.yaml would hold it. */
const configurationOf = (cluster: string) =>
  parseAdmissionConfiguration(
    `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n${PLUGINS[cluster].map((name) => `  - name: ${name}\n`).join('')}`,
    `config/clusters/${cluster}.yaml`,
  );
const SUBJECTS: Record<string, string> = { blue: 'blue-apiserver', green: 'green-apiserver' };
const certificates = Object.fromEntries(
  Object.entries(SUBJECTS).map(([cluster, commonName]) => [
    cluster,
    { caPem: pki.ca.certPem, ...issueCertificate({ commonName, days: 1, usage: 'client' }, pki.ca) },
  ]),
);

let store: TestStore;
let urlSecret: LocalServer;
let mtls: LocalServer;
const saved = { endpoint: process.env.DYNAMODB_ENDPOINT, table: process.env.STATE_TABLE };

function fleet(auth: (cluster: string) => CallerAuth): Map<string, ClusterRoutes> {
  const clusters = new Map<string, ClusterRoutes>();
  for (const cluster of Object.keys(PLUGINS)) {
    const callerAuth = auth(cluster);
    const handlers = new Map<string, AdmissionHandler>();
    for (const { plugin, config } of activePlugins(configurePlugins(plugins, configurationOf(cluster)))) {
      handlers.set(
        plugin.metadata.name,
        createPluginHandler(plugin as AdmissionPlugin<unknown>, { config, callerAuth, readsCluster: false }),
      );
    }
    clusters.set(cluster, {
      handlers,
      ...(callerAuth.mode === 'url-secret'
        ? { capabilities: callerAuth.capabilities }
        : { allowedSubjects: callerAuth.allowedSubjects }),
    });
  }
  return clusters;
}

beforeAll(async () => {
  store = await testStore('fleet-server');
  // The handlers' state comes from the environment, as deployed (lib/state stateFromEnv).
  process.env.DYNAMODB_ENDPOINT = store.endpoint;
  process.env.STATE_TABLE = store.tableName;
  setLogSink(() => undefined);
  const tls = { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem };
  urlSecret = await startLocalServer({
    handlers: new Map(),
    clusters: fleet((cluster) => ({
      mode: 'url-secret',
      capabilities: new CapabilityVerifier([publicKeyText(KEYS[cluster])]),
      cluster,
    })),
    tls,
    requireClientCertificate: false,
    port: 0,
  });
  mtls = await startLocalServer({
    handlers: new Map(),
    clusters: fleet((cluster) => ({ mode: 'mtls', allowedSubjects: [SUBJECTS[cluster]], cluster })),
    tls,
    requireClientCertificate: true,
    port: 0,
  });
});

afterAll(async () => {
  setLogSink(undefined);
  await urlSecret?.close();
  await mtls?.close();
  store?.close();
  process.env.DYNAMODB_ENDPOINT = saved.endpoint;
  process.env.STATE_TABLE = saved.table;
  if (saved.endpoint === undefined) delete process.env.DYNAMODB_ENDPOINT;
  if (saved.table === undefined) delete process.env.STATE_TABLE;
});

/** The path emit writes for `cluster` (signed with `key`, the cluster's own by default). */
function capabilityPath(cluster: string, plugin: string, endpoint: Endpoint, key = KEYS[cluster], named = cluster) {
  const capability = capabilityFor(key, {
    deployment: deploymentOfBaseUrl(urlSecret.url),
    cluster: named,
    grant: { plugin, endpoint },
  });
  return formatWebhookPath({ cluster, capability, plugin, endpoint });
}

const noCertificate = { caPem: pki.ca.certPem };
const send = (path: string, body: object) =>
  post(`${urlSecret.url}${path}?timeout=10s`, JSON.stringify(body), noCertificate);
const sendAs = (cluster: string, path: string, body: object) =>
  post(`${mtls.url}${path}?timeout=10s`, JSON.stringify(body), certificates[cluster]);

const pod = (namespace: string) =>
  review({
    namespace,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace },
      spec: { containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] },
    },
  });

const namespaceWrite = (name: string, nodeSelector: string) =>
  review({
    resource: { resource: 'namespaces' },
    name,
    object: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, annotations: { 'scheduler.alpha.kubernetes.io/node-selector': nodeSelector } },
    },
  });

const patchOf = (body: string): unknown[] | undefined => {
  const patch = JSON.parse(body).response.patch;
  return patch === undefined ? undefined : JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
};

describe('url-secret: each cluster has its own key, and a capability grants at its own cluster only', () => {
  it("serves a cluster's plugins at /<cluster>/<capability>/<plugin>/<endpoint>", async () => {
    const answer = await send(capabilityPath('green', 'always-pull-images', 'mutate'), pod('apps'));
    expect(answer.status).toBe(200);
    expect(patchOf(answer.body)).toEqual([
      { op: 'replace', path: '/spec/containers/0/imagePullPolicy', value: 'Always' },
    ]);
  });

  it("refuses one cluster's capability at the other's URLs (403), however it is placed", async () => {
    const green = capabilityPath('green', 'resource-quota', 'validate');
    // green's capability, moved under /blue: blue's key did not sign it, and it names green.
    const moved = green.replace(/^\/green\//, '/blue/');
    for (const path of [
      moved,
      // Signed by green's key but naming blue: blue's key did not sign it.
      capabilityPath('blue', 'resource-quota', 'validate', KEYS.green),
      // Signed by blue's key, naming green, sent to blue: the label blue checks names blue.
      capabilityPath('blue', 'resource-quota', 'validate', KEYS.blue, 'green'),
    ]) {
      const answer = await send(path, pod('apps'));
      expect(answer.status, path).toBe(403);
      expect(answer.body).toBe('caller capability missing or not valid\n');
    }
    expect((await send(capabilityPath('blue', 'resource-quota', 'validate'), pod('apps'))).status).toBe(200);
  });

  it('answers 404 for a plugin the cluster does not enable, to a caller with a capability for it', async () => {
    const answer = await send(capabilityPath('blue', 'always-pull-images', 'mutate'), pod('apps'));
    expect(answer.status).toBe(404);
    // Without a capability, the same path reads as every other refusal.
    const guessed = formatWebhookPath({
      cluster: 'blue',
      capability: 'x'.repeat(86),
      plugin: 'always-pull-images',
      endpoint: 'mutate',
    });
    expect((await send(guessed, pod('apps'))).status).toBe(403);
  });

  it('refuses a cluster that is not served (a removed one) with a 4xx', async () => {
    const removed = capabilityPath('red', 'resource-quota', 'validate', generateKeyPairSync('ed25519').privateKey);
    expect((await send(removed, pod('apps'))).status).toBe(403);
  });
});

describe('mTLS: the certificate subject says which cluster calls', () => {
  const path = (cluster: string) => formatWebhookPath({ cluster, plugin: 'resource-quota', endpoint: 'validate' });

  it("admits a cluster's certificate at its own URLs, refuses it at the other's (403)", async () => {
    expect((await sendAs('blue', path('blue'), pod('apps'))).status).toBe(200);
    expect((await sendAs('green', path('green'), pod('apps'))).status).toBe(200);
    const crossed = await sendAs('blue', path('green'), pod('apps'));
    expect(crossed.status).toBe(403);
    expect(crossed.body).toContain('not allowed for cluster green');
  });

  it('answers 404 for a plugin the cluster does not enable only after the certificate is its own', async () => {
    const apis = formatWebhookPath({ cluster: 'blue', plugin: 'always-pull-images', endpoint: 'mutate' });
    expect((await sendAs('blue', apis, pod('apps'))).status).toBe(404);
    expect((await sendAs('green', apis, pod('apps'))).status).toBe(403);
  });

  it('answers 404 for a cluster that is not served', async () => {
    const answer = await sendAs(
      'blue',
      formatWebhookPath({ cluster: 'red', plugin: 'resource-quota', endpoint: 'validate' }),
      pod('apps'),
    );
    expect(answer.status).toBe(404);
  });
});

describe('state is kept per cluster: the same namespace name in two clusters is two namespaces', () => {
  it("a node selector learned in blue's namespace does not apply to green's namespace of that name", async () => {
    const learned = await send(
      capabilityPath('blue', 'pod-node-selector', 'learn'),
      namespaceWrite('shared', 'env=blue'),
    );
    expect(learned.status).toBe(200);
    const inBlue = await send(capabilityPath('blue', 'pod-node-selector', 'mutate'), pod('shared'));
    expect(patchOf(inBlue.body)).toEqual([{ op: 'add', path: '/spec/nodeSelector', value: { env: 'blue' } }]);
    const inGreen = await send(capabilityPath('green', 'pod-node-selector', 'mutate'), pod('shared'));
    expect(inGreen.status).toBe(200);
    const greenPatch = patchOf(inGreen.body);
    expect(JSON.stringify(greenPatch ?? [])).not.toContain('env');
    // green learns its own, and blue's stays as it was.
    await send(capabilityPath('green', 'pod-node-selector', 'learn'), namespaceWrite('shared', 'env=green'));
    const again = await send(capabilityPath('blue', 'pod-node-selector', 'mutate'), pod('shared'));
    expect(patchOf(again.body)).toEqual([{ op: 'add', path: '/spec/nodeSelector', value: { env: 'blue' } }]);
    const green = await send(capabilityPath('green', 'pod-node-selector', 'mutate'), pod('shared'));
    expect(patchOf(green.body)).toEqual([{ op: 'add', path: '/spec/nodeSelector', value: { env: 'green' } }]);
  });
});
