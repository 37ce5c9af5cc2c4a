// origin-pod-node-environment through a real kube-apiserver (OpenShift's plugin: this apiserver has
// no built-in to compare with), with config/examples/origin-pod-node-environment.yaml: pods get
// their project's node selector (or the cluster default), conflicts are refused with OpenShift's
// messages; a dry run, and the webhooks' failurePolicies (mutation Ignore, validation Fail) during
// an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling, namespaceWithServiceAccount } from './support/cluster-setup.js';
import type { KubeObject } from './support/kube.js';
import { create, get, pod, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(
  join(import.meta.dirname, '../../config/examples/origin-pod-node-environment.yaml'),
  'utf8',
);
const NODE_SELECTOR = 'openshift.io/node-selector';

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  // Created once the webhooks are in place, so the webhook learns the projects and the node.
  await Promise.all([
    namespaceWithServiceAccount(webhook.cluster, 'apps'),
    namespaceWithServiceAccount(webhook.cluster, 'infra', { annotations: { [NODE_SELECTOR]: 'role=infra' } }),
    namespaceWithServiceAccount(webhook.cluster, 'anywhere', { annotations: { [NODE_SELECTOR]: '' } }),
  ]);
  const node = await create(webhook.cluster, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'db-1', labels: { role: 'db' } },
  });
  if (node.status !== 201) throw new Error(`node: ${node.message}`);
});
afterAll(async () => {
  await webhook?.stop();
});

const selector = (object: KubeObject | undefined) =>
  (object?.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector;

describe('origin-pod-node-environment', () => {
  it.each([
    [
      'the cluster default in a project without a selector',
      pod('apps', 'default'),
      { 'node-role.kubernetes.io/worker': '' },
    ],
    ['its project’s selector', pod('infra', 'project'), { role: 'infra' }],
    [
      'its project’s selector beside its own',
      pod('infra', 'own', { nodeSelector: { disk: 'ssd' } }),
      { disk: 'ssd', role: 'infra' },
    ],
    ['nothing in a project whose selector is empty', pod('anywhere', 'free'), undefined],
  ])('stores a pod with %s', async (_, object, expected) => {
    const answer = await create(webhook.cluster, object);
    expect(answer.status, answer.message).toBe(201);
    expect(selector(await get(webhook.cluster, object))).toEqual(expected);
  });

  it.each([
    [
      'a node selector',
      pod('infra', 'selector', { nodeSelector: { role: 'db' } }),
      'pods "selector" is forbidden: pod node label selector conflicts with its project node label selector',
    ],
    [
      'the node it names',
      pod('infra', 'named', { nodeName: 'db-1' }),
      'pods "named" is forbidden: pod node name conflicts with project node label selector',
    ],
  ])('refuses a pod whose %s conflicts with its project’s, with OpenShift’s message', async (_, object, message) => {
    const answer = await create(webhook.cluster, object);
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)?.message).toBe(message);
    expect(await get(webhook.cluster, object)).toBeUndefined();
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, pod('infra', 'dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(selector(dry.object)).toEqual({ role: 'infra' });
    expect(await get(webhook.cluster, pod('infra', 'dry'))).toBeUndefined();
  });

  it('during an outage the mutation is skipped (Ignore) and the validation refuses (Fail)', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, pod('infra', 'outage'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling(
          'origin-pod-node-environment.validate.serverless-admission.io',
          '/origin-pod-node-environment/validate',
        ),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, pod('infra', 'after'));
    expect(selector(after.object)).toEqual({ role: 'infra' });
  });
});
