// A fleet as the packaged functions serve it: two clusters' files packaged as `npm run package`
// packages them (infra/serverless/packaged-config.ts), and the Lambda handlers started from that
// package (ADMISSION_CONFIG, CALLER_AUTH, as deployed) and invoked with the events API Gateway
// sends them. Each cluster is its own stage (infra/serverless/cluster-stages.ts): on the
// execute-api name the stage is the URL's first segment, and `path` leaves it out; on the custom
// domain the base path `/<cluster>` is mapped to it, and `path` keeps it. The URLs are those emit
// writes for `--cluster NAME --base-url https://HOST`. `blue` enables PodNodeSelector; `green`
// enables AlwaysPullImages and PodNodeSelector with another cluster default. The same namespace
// name in both, judged by each one's own state (DynamoDB Local).
import type { KeyObject } from 'node:crypto';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { loadFleet } from '../../lib/config/fleet.js';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { publicKeyText } from '../../lib/http/capability.js';
import { setLogSink } from '../../lib/http/log.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import type { PackagedFleet } from '../../infra/serverless/packaged-config.js';
import { packageFleet, writePackagedConfiguration } from '../../infra/serverless/packaged-config.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { webhookUrl } from '../../infra/emit/webhooks.js';
import { lambdaContext } from '../support/gateway-event.js';
import { review } from '../support/review.js';

const KEYS: Record<string, KeyObject> = {
  blue: generateKeyPairSync('ed25519').privateKey,
  green: generateKeyPairSync('ed25519').privateKey,
};
const SUBJECTS: Record<string, string> = { blue: 'blue-apiserver', green: 'green-apiserver' };
const FILES: Record<string, string> = {
  blue: `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodNodeSelector
    configuration:
      podNodeSelectorPluginConfig:
        clusterDefaultNodeSelector: "tier=blue"
`,
  green: `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysPullImages
  - name: PodNodeSelector
    configuration:
      podNodeSelectorPluginConfig:
        clusterDefaultNodeSelector: "tier=green"
`,
};

const dir = mkdtempSync(join(tmpdir(), 'packaged-fleet-'));
const saved = { ...process.env };
let store: TestStore;
let fleet: PackagedFleet;
/** Each plugin's handler, as its function starts from its package: one per caller mode. */
const handlers: Record<'url-secret' | 'mtls', Map<string, AdmissionHandler>> = {
  'url-secret': new Map(),
  mtls: new Map(),
};

beforeAll(async () => {
  const clusters = join(dir, 'clusters');
  mkdirSync(clusters);
  for (const [cluster, text] of Object.entries(FILES)) {
    writeFileSync(join(clusters, `${cluster}.yaml`), text);
    writeFileSync(
      join(clusters, `${cluster}.settings.yaml`),
      `allowedSubjects: [${SUBJECTS[cluster]}]\ncapabilityKeys: ["${publicKeyText(KEYS[cluster])}"]\n`,
    );
  }
  fleet = packageFleet(plugins, loadFleet(clusters), 'url-secret');
  store = await testStore('packaged-fleet');
  process.env.DYNAMODB_ENDPOINT = store.endpoint;
  process.env.STATE_TABLE = store.tableName;
  setLogSink(() => undefined);
  for (const plugin of fleet.plugins) {
    const file = writePackagedConfiguration(
      fleet.packages.get(plugin.metadata.name)!,
      join(dir, `${plugin.metadata.name}.json`),
    );
    // What a function's handler module does at its cold start, with the environment it is deployed with.
    process.env.ADMISSION_CONFIG = file;
    for (const mode of ['url-secret', 'mtls'] as const) {
      process.env.CALLER_AUTH = mode;
      handlers[mode].set(plugin.metadata.name, createStatefulAdmissionHandler(plugin));
    }
  }
});

afterAll(() => {
  setLogSink(undefined);
  store?.close();
  for (const name of ['DYNAMODB_ENDPOINT', 'STATE_TABLE', 'ADMISSION_CONFIG', 'CALLER_AUTH'])
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  rmSync(dir, { recursive: true, force: true });
});

/** Where an apiserver reaches a deployed fleet: the REST API's execute-api name, or its custom domain. */
type Entry = 'execute-api' | 'custom-domain';
const HOSTS: Record<Entry, string> = {
  'execute-api': 'a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com',
  'custom-domain': 'admission.example.com',
};
/** The deployment's own stage (`--stage`), which serves no cluster. */
const DEPLOYMENT_STAGE = 'dev';

/**
 * The path of the URL `npm run emit -- --cluster NAME --auth url-secret --base-url https://HOST`
 * writes for `cluster`, signed with `key` (the cluster's own by default).
 */
function capabilityPath(cluster: string, plugin: string, endpoint: Endpoint, key = KEYS[cluster], entry?: Entry) {
  const url = webhookUrl(
    `https://${HOSTS[entry ?? 'execute-api']}`,
    plugin,
    endpoint,
    { mode: 'url-secret', key },
    cluster,
  );
  return new URL(url).pathname;
}

/**
 * The event API Gateway hands the function for a call of `calledPath` at `entry`: the stage is the
 * path's first segment (a stage of that name, or the base path mapped to it), which `path` leaves
 * out on the execute-api name and keeps on the custom domain; `requestContext.path` holds it both ways.
 */
function deployedEvent(entry: Entry, calledPath: string, body: string, subject?: string, stage?: string) {
  const first = calledPath.split('/')[1] ?? '';
  return {
    resource: '/{capability}/pod-node-selector/mutate',
    path: entry === 'execute-api' ? calledPath.slice(first.length + 1) : calledPath,
    httpMethod: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    isBase64Encoded: false,
    requestContext: {
      stage: stage ?? first,
      path: calledPath,
      domainName: HOSTS[entry],
      identity: { clientCert: subject === undefined ? null : { subjectDN: `CN=${subject}` } },
    },
  } as unknown as APIGatewayProxyEvent;
}

async function invoke(
  mode: 'url-secret' | 'mtls',
  plugin: string,
  path: string,
  body: object,
  subject?: string,
  entry: Entry = mode === 'mtls' ? 'custom-domain' : 'execute-api',
  stage?: string,
) {
  const handler = handlers[mode].get(plugin);
  if (!handler) throw new Error(`no function for ${plugin}`);
  return handler(deployedEvent(entry, path, JSON.stringify(body), subject, stage), lambdaContext);
}

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

const namespaceWrite = (name: string, annotations: Record<string, string>) =>
  review({
    resource: { resource: 'namespaces' },
    name,
    object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations } },
  });

const patchOf = (body: string): unknown[] | undefined => {
  const patch = JSON.parse(body).response.patch;
  return patch === undefined ? undefined : JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
};

describe('packaging a fleet', () => {
  it('packages the union of the plugins, each with the clusters that enable it', () => {
    expect(fleet.plugins.map((p) => p.metadata.name).sort()).toEqual(['always-pull-images', 'pod-node-selector']);
    expect(fleet.clustersOf.get('always-pull-images')).toEqual(['green']);
    expect(fleet.clustersOf.get('pod-node-selector')).toEqual(['blue', 'green']);
    // AlwaysPullImages' package holds green's configuration only, and both clusters' callers.
    const apis = fleet.packages.get('always-pull-images')!;
    expect(Object.keys(apis.files).map((f) => f.split('/').pop())).toEqual(['green.yaml']);
    expect(apis.fleet?.clusters.map((c) => [c.name, c.admissionConfiguration?.split('/').pop()])).toEqual([
      ['blue', undefined],
      ['green', 'green.yaml'],
    ]);
    const pns = fleet.packages.get('pod-node-selector')!;
    expect(Object.keys(pns.files).map((f) => f.split('/').pop())).toEqual(['blue.yaml', 'green.yaml']);
  });
});

describe.each(['execute-api', 'custom-domain'] as const)(
  'url-secret on the %s: each cluster with its own key, configuration and state',
  (entry) => {
    /** The path emit writes for `--base-url https://HOST` of this entry. */
    const urlPath = (cluster: string, plugin: string, endpoint: Endpoint, key = KEYS[cluster]) =>
      capabilityPath(cluster, plugin, endpoint, key, entry);
    const call = (plugin: string, path: string, body: object, stage?: string) =>
      invoke('url-secret', plugin, path, body, undefined, entry, stage);

    it('judges the same namespace name by each cluster’s own state and configuration', async () => {
      // blue's "shared" namespace names a node selector; green's "shared" names none (green's default).
      const learnedBlue = await call(
        'pod-node-selector',
        urlPath('blue', 'pod-node-selector', 'learn'),
        namespaceWrite('shared', { 'scheduler.alpha.kubernetes.io/node-selector': 'env=blue' }),
      );
      expect(learnedBlue.statusCode, learnedBlue.body).toBe(200);
      const learnedGreen = await call(
        'pod-node-selector',
        urlPath('green', 'pod-node-selector', 'learn'),
        namespaceWrite('shared', {}),
      );
      expect(learnedGreen.statusCode, learnedGreen.body).toBe(200);
      const blue = await call('pod-node-selector', urlPath('blue', 'pod-node-selector', 'mutate'), pod('shared'));
      expect(blue.statusCode, blue.body).toBe(200);
      expect(patchOf(blue.body)).toEqual([{ op: 'add', path: '/spec/nodeSelector', value: { env: 'blue' } }]);
      const green = await call('pod-node-selector', urlPath('green', 'pod-node-selector', 'mutate'), pod('shared'));
      expect(green.statusCode, green.body).toBe(200);
      expect(patchOf(green.body)).toEqual([{ op: 'add', path: '/spec/nodeSelector', value: { tier: 'green' } }]);
    });

    it("refuses a capability of cluster A at cluster B's path (403)", async () => {
      const green = urlPath('green', 'pod-node-selector', 'mutate');
      for (const path of [
        green.replace(/^\/green\//, '/blue/'),
        urlPath('blue', 'pod-node-selector', 'mutate', KEYS.green),
      ]) {
        const answer = await call('pod-node-selector', path, pod('shared'));
        expect(answer.statusCode, path).toBe(403);
        expect(answer.body).toBe('caller capability missing or not valid\n');
      }
    });

    it('answers 404 for a plugin the cluster does not enable, only to a caller with that cluster’s capability', async () => {
      const answer = await call('always-pull-images', urlPath('blue', 'always-pull-images', 'mutate'), pod('shared'));
      expect(answer.statusCode).toBe(404);
      expect(answer.body).toContain('cluster blue does not enable always-pull-images');
      // green's capability at blue's path, or none: the refusal every unproved caller gets.
      const moved = urlPath('green', 'always-pull-images', 'mutate').replace(/^\/green\//, '/blue/');
      expect((await call('always-pull-images', moved, pod('shared'))).statusCode).toBe(403);
      // green is served it.
      const served = await call('always-pull-images', urlPath('green', 'always-pull-images', 'mutate'), pod('shared'));
      expect(patchOf(served.body)).toEqual([
        { op: 'replace', path: '/spec/containers/0/imagePullPolicy', value: 'Always' },
      ]);
    });

    it("refuses a cluster the deployment does not serve, the deployment's own stage, another stage (403)", async () => {
      const red = new URL(
        webhookUrl(
          `https://${HOSTS[entry]}`,
          'pod-node-selector',
          'mutate',
          { mode: 'url-secret', key: generateKeyPairSync('ed25519').privateKey },
          'red',
        ),
      ).pathname;
      expect((await call('pod-node-selector', red, pod('shared'))).statusCode).toBe(403);
      // The deployment's own stage serves no cluster: blue's capability through it grants nothing.
      const blue = urlPath('blue', 'pod-node-selector', 'mutate');
      const throughDeploymentStage = `/${DEPLOYMENT_STAGE}${blue.slice('/blue'.length)}`;
      expect((await call('pod-node-selector', throughDeploymentStage, pod('shared'))).statusCode).toBe(403);
      // A stage other than the cluster the path names (API Gateway sends none such): refused.
      expect((await call('pod-node-selector', blue, pod('shared'), 'green')).statusCode).toBe(403);
      // A capability emitted for the other entry's host grants nothing here.
      const other = capabilityPath(
        'blue',
        'pod-node-selector',
        'mutate',
        KEYS.blue,
        entry === 'execute-api' ? 'custom-domain' : 'execute-api',
      );
      expect((await call('pod-node-selector', other, pod('shared'))).statusCode).toBe(403);
      expect((await call('pod-node-selector', blue, pod('shared'))).statusCode).toBe(200);
    });
  },
);

describe('mTLS: the certificate subject API Gateway passes says which cluster calls', () => {
  const path = (cluster: string, plugin = 'pod-node-selector') =>
    formatWebhookPath({ cluster, plugin, endpoint: 'mutate' });

  it("admits each cluster's certificate at its own path, refuses it at the other's (403)", async () => {
    const blue = await invoke('mtls', 'pod-node-selector', path('blue'), pod('shared'), SUBJECTS.blue);
    expect(patchOf(blue.body)).toEqual([{ op: 'add', path: '/spec/nodeSelector', value: { env: 'blue' } }]);
    const crossed = await invoke('mtls', 'pod-node-selector', path('green'), pod('shared'), SUBJECTS.blue);
    expect(crossed.statusCode).toBe(403);
    expect(crossed.body).toContain('not allowed for cluster green');
  });

  it('answers 404 for a plugin the cluster does not enable once the certificate is its own', async () => {
    const apis = path('blue', 'always-pull-images');
    const answer = await invoke('mtls', 'always-pull-images', apis, pod('shared'), SUBJECTS.blue);
    expect(answer.statusCode).toBe(404);
    expect((await invoke('mtls', 'always-pull-images', apis, pod('shared'), SUBJECTS.green)).statusCode).toBe(403);
  });

  it('answers 404 for a cluster the deployment does not serve', async () => {
    const answer = await invoke('mtls', 'pod-node-selector', path('red'), pod('shared'), SUBJECTS.blue);
    expect(answer.statusCode).toBe(404);
    expect(answer.body).toBe('no cluster at /red/pod-node-selector/mutate\n');
  });
});
