// mutating-admission-policy through a real kube-apiserver: the policies of
// config/examples/mutating-admission-policy.yaml served by the webhook, against the same policies,
// bindings and params created natively (admissionregistration.k8s.io/v1, GA in 1.36) on a second
// apiserver: the same stored objects, a dry run, and each failurePolicy during an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, eventually, get, pod } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(join(import.meta.dirname, '../../config/examples/mutating-admission-policy.yaml'), 'utf8');

/** The example's policies, bindings and params, as `kubectl apply -f` takes them. */
function manifests(): string {
  const configuration = parseDocument(CONFIG).toJS() as {
    plugins: { configuration: { manifests: unknown[] } }[];
  };
  return configuration.plugins[0].configuration.manifests.map((m) => JSON.stringify(m)).join('\n---\n');
}

function deployment(name: string, replicas?: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      ...(replicas !== undefined && { replicas }),
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
      },
    },
  };
}

// Without a controller-manager nobody creates the default ServiceAccount the pods are given.
async function serviceAccount(cluster: ControlPlane): Promise<void> {
  const answer = await create(cluster, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'default', namespace: 'default' },
  });
  if (answer.status !== 201) throw new Error(`default ServiceAccount: ${answer.message}`);
}

let webhook: WebhookCluster;
let native: ControlPlane;

beforeAll(async () => {
  [webhook, native] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({ controllerManager: false }),
  ]);
  await Promise.all([serviceAccount(webhook.cluster), serviceAccount(native)]);
  const applied = await native.kubectl(['apply', '-f', '-'], manifests());
  if (applied.code !== 0) throw new Error(`kubectl apply: ${applied.stderr}`);
  // The apiserver compiles policies asynchronously: wait until the pod policy mutates.
  await eventually('the native policy labels pods', async () => {
    const probe = await create(native, pod('default', 'probe'), { dryRun: true });
    return (probe.object?.metadata.labels as Record<string, string> | undefined)?.team ? true : undefined;
  });
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), native?.stop()]);
});

describe('mutating-admission-policy', () => {
  it.each([
    ['without labels', pod('default', 'bare')],
    [
      'with labels of its own',
      {
        ...pod('default', 'labelled'),
        metadata: { name: 'labelled', namespace: 'default', labels: { app: 'x', team: 'other' } },
      },
    ],
  ])('labels a pod %s with its params’ team, stored as the native policy stores it', async (_, object) => {
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(native, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhook.cluster, object);
    expect((stored!.metadata.labels as Record<string, string>).team).toBe('platform');
    expect(admittedShape(stored)).toEqual(admittedShape(await get(native, object)));
  });

  // The apiserver defaults spec.replicas to 1 while decoding, before admission, so the example's
  // `!has(object.spec.replicas)` condition never holds for an apps/v1 request, natively or here.
  it.each([
    ['without a replica count', deployment('unset'), 1],
    ['with a replica count', deployment('five', 5), 5],
  ])('stores a deployment %s as the native policy does', async (_, object, replicas) => {
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(native, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhook.cluster, object);
    expect((stored!.spec as { replicas: number }).replicas).toBe(replicas);
    expect(stored!.metadata.annotations).toBeUndefined();
    expect(admittedShape(stored)).toEqual(admittedShape(await get(native, object)));
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, pod('default', 'dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(dry.object!.metadata.labels).toEqual({ team: 'platform' });
    expect(await get(webhook.cluster, pod('default', 'dry'))).toBeUndefined();
  });

  it('during an outage: pods are refused (Fail), deployments admitted unmutated (Ignore)', async () => {
    await webhook.stopServer();
    try {
      const refused = await create(webhook.cluster, pod('default', 'outage'));
      expect(refused.status).toBe(500);
      expect(refused.message).toMatch(
        /^Internal error occurred: failed calling webhook "mutating-admission-policy\.mutate\.serverless-admission\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/mutating-admission-policy\/mutate\?timeout=\d+s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
      const skipped = await create(webhook.cluster, deployment('outage'));
      expect(skipped.status, skipped.message).toBe(201);
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, pod('default', 'after'));
    expect(after.status, after.message).toBe(201);
    expect(after.object!.metadata.labels).toEqual({ team: 'platform' });
  });
});
