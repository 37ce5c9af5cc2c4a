// image-policy-webhook through a real kube-apiserver, against the built-in ImagePolicyWebhook on a
// second apiserver, both asking the same ImageReview backend (an HTTPS server on loopback that
// refuses images from registry.example/blocked, with a bearer token): the same decisions, message
// and stored pods, the same failed-open pod when the backend is down (defaultAllow: true), a dry
// run, and the webhooks' failurePolicies during an outage of this project's server.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCertificate } from '../../infra/pki/pki.js';
import { failedCalling, namespaceWithServiceAccount } from './support/cluster-setup.js';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import { admittedShape, create, get, pod, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const TOKEN = 'image-review-token';
const IMAGE_POLICY = (kubeConfigFile: string) => `  - name: ImagePolicyWebhook
    configuration:
      imagePolicy:
        kubeConfigFile: ${kubeConfigFile}
        allowTTL: 50
        denyTTL: 50
        retryBackoff: 500
        defaultAllow: true
`;
const ADMISSION = (kubeConfigFile: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
${IMAGE_POLICY(kubeConfigFile)}`;

/** The ImageReview backend: refuses any image under registry.example/blocked, with a reason. */
function review(request: IncomingMessage, response: ServerResponse): void {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      response.writeHead(401).end();
      return;
    }
    const imageReview = JSON.parse(body) as { apiVersion: string; spec: { containers?: { image: string }[] } };
    const blocked = (imageReview.spec.containers ?? [])
      .map((c) => c.image)
      .filter((i) => i.startsWith('registry.example/blocked'));
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        apiVersion: imageReview.apiVersion,
        kind: 'ImageReview',
        status:
          blocked.length > 0 ? { allowed: false, reason: `${blocked.join(', ')} is not signed` } : { allowed: true },
      }),
    );
  });
}

let dir: string;
let backend: Server;
let webhook: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'image-review-'));
  const ca = issueCertificate({ commonName: 'image review CA', days: 1, usage: 'ca' });
  const serving = issueCertificate(
    { commonName: 'image-review', days: 1, usage: 'server', ipAddresses: ['127.0.0.1'] },
    ca,
  );
  backend = createServer({ key: serving.keyPem, cert: serving.certPem }, review);
  await new Promise<void>((listening) => backend.listen(0, '127.0.0.1', () => listening()));
  const { port } = backend.address() as { port: number };
  const kubeconfig = `apiVersion: v1
kind: Config
clusters:
  - name: image-policy-backend
    cluster:
      server: https://127.0.0.1:${port}/imagereview
      certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}
users:
  - name: image-policy-webhook
    user:
      token: ${TOKEN}
contexts:
  - name: default
    context: { cluster: image-policy-backend, user: image-policy-webhook }
current-context: default
`;
  // The built-in reads the file by an absolute path; the webhook by one relative to its configuration.
  const kubeconfigFile = join(dir, 'image-policy-backend.kubeconfig');
  writeFileSync(kubeconfigFile, kubeconfig, { mode: 0o600 });
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: ADMISSION('image-policy-backend.kubeconfig'),
      files: { 'image-policy-backend.kubeconfig': kubeconfig },
      controlPlane: { controllerManager: false },
    }),
    startControlPlane({
      enableAdmissionPlugins: ['ImagePolicyWebhook'],
      admissionConfiguration: ADMISSION(kubeconfigFile),
      controllerManager: false,
    }),
  ]);
  await Promise.all([
    namespaceWithServiceAccount(webhook.cluster, 'default'),
    namespaceWithServiceAccount(builtin, 'default'),
  ]);
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
  await new Promise((closed) => (backend?.listening ? backend.close(closed) : closed(undefined)));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const withImage = (name: string, image: string) => pod('default', name, { containers: [{ name: 'c', image }] });

describe('image-policy-webhook', () => {
  it('admits an image the backend allows, stored as the built-in stores it', async () => {
    const object = withImage('signed', 'registry.example/app:1');
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(admittedShape(await get(webhook.cluster, object))).toEqual(admittedShape(await get(builtin, object)));
  });

  it('refuses an image the backend refuses, with the built-in’s message', async () => {
    const object = withImage('unsigned', 'registry.example/blocked:1');
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(reference.status).toBe(403);
    expect(reference.message).toBe(
      'pods "unsigned" is forbidden: image policy webhook backend denied one or more images: ' +
        'registry.example/blocked:1 is not signed',
    );
    expect(served.status).toBe(403);
    // The mutating webhook asks the backend first and refuses already (docs/design/e2e-exceptions.md).
    expect(webhookDenial(served.message)).toEqual({
      webhook: 'image-policy-webhook.mutate.serverless-admission.io',
      message: reference.message,
    });
  });

  it('judges a dry run as a real request and stores nothing', async () => {
    expect(
      (await create(webhook.cluster, withImage('dry-blocked', 'registry.example/blocked:2'), { dryRun: true })).status,
    ).toBe(403);
    const dry = await create(webhook.cluster, withImage('dry', 'registry.example/app:2'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(await get(webhook.cluster, withImage('dry', 'registry.example/app:2'))).toBeUndefined();
  });

  it('during an outage of this project’s server refuses (validation Fail; the mutation Ignore is skipped)', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, withImage('outage', 'registry.example/app:1'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling('image-policy-webhook.validate.serverless-admission.io', '/image-policy-webhook/validate'),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, withImage('after', 'registry.example/app:1'));
    expect(after.status, after.message).toBe(201);
  });

  it('admits a pod failed open while the backend is down (defaultAllow); only the webhook’s pod keeps the annotation', async () => {
    const closed = new Promise((done) => backend.close(done));
    backend.closeAllConnections();
    await closed;
    // An image neither has a cached decision for, and which the backend would refuse.
    const object = withImage('failed-open', 'registry.example/blocked:never-reviewed');
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(reference.status, reference.message).toBe(201);
    expect(served.status, served.message).toBe(201);
    // The built-in sets the annotation in its validating phase, on a copy the apiserver does not
    // store; the mutating webhook's patch is stored (docs/design/e2e-exceptions.md).
    const [stored, storedReference] = await Promise.all([get(webhook.cluster, object), get(builtin, object)]);
    expect(stored!.metadata.annotations).toEqual({ 'alpha.image-policy.k8s.io/failed-open': 'true' });
    expect(storedReference!.metadata.annotations).toBeUndefined();
    const { annotations, ...metadata } = stored!.metadata;
    expect(annotations).toBeDefined();
    expect(admittedShape({ ...stored!, metadata })).toEqual(admittedShape(storedReference));
  });
});
