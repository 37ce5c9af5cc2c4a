// pod-node-constraints through a real kube-apiserver (OpenShift's plugin: this apiserver has no
// built-in to compare with), with config/examples/pod-node-constraints.yaml: a user outside the
// allowlist may not pick a node by name or by a blacklisted label, with OpenShift's messages;
// system:masters may; a dry run, and failurePolicy Fail during an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling, grantClusterAdmin, namespaceWithServiceAccount } from './support/cluster-setup.js';
import type { WriteOptions } from './support/kube.js';
import { create, get, pod, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(join(import.meta.dirname, '../../config/examples/pod-node-constraints.yaml'), 'utf8');
// Bound to cluster-admin by RBAC, yet outside the plugin's allowlist (only system:masters is in it).
const DEVELOPER: WriteOptions = { as: 'alice', groups: ['developers'] };

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  await Promise.all([
    namespaceWithServiceAccount(webhook.cluster, 'team-a'),
    grantClusterAdmin(webhook.cluster, 'developers'),
  ]);
});
afterAll(async () => {
  await webhook?.stop();
});

describe('pod-node-constraints', () => {
  it('admits a developer’s pod that selects nodes by other labels', async () => {
    const object = pod('team-a', 'zoned', { nodeSelector: { 'topology.kubernetes.io/zone': 'a' } });
    const answer = await create(webhook.cluster, object, DEVELOPER);
    expect(answer.status, answer.message).toBe(201);
  });

  it.each([
    [
      'a blacklisted label',
      pod('team-a', 'by-label', { nodeSelector: { 'kubernetes.io/hostname': 'node-1' } }),
      'pods "by-label" is forbidden: node selection by label(s) [kubernetes.io/hostname] is prohibited by policy for your role',
    ],
    [
      'its name',
      pod('team-a', 'by-name', { nodeName: 'node-1' }),
      'pods "by-name" is forbidden: node selection by nodeName is prohibited by policy for your role',
    ],
    [
      'both',
      pod('team-a', 'by-both', { nodeName: 'node-1', nodeSelector: { 'kubernetes.io/hostname': 'node-1' } }),
      'pods "by-both" is forbidden: node selection by nodeName and label(s) [kubernetes.io/hostname] is prohibited ' +
        'by policy for your role',
    ],
  ])('refuses a developer’s pod that picks a node by %s, with OpenShift’s message', async (_, object, message) => {
    const answer = await create(webhook.cluster, object, DEVELOPER);
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)).toEqual({
      webhook: 'pod-node-constraints.validate.serverless-admission.io',
      message,
    });
    expect(await get(webhook.cluster, object)).toBeUndefined();
  });

  it('admits the same pod from system:masters (the allowlist)', async () => {
    const answer = await create(webhook.cluster, pod('team-a', 'admin', { nodeName: 'node-1' }));
    expect(answer.status, answer.message).toBe(201);
  });

  it('refuses a dry run as a real request, and admits one without storing it', async () => {
    const refused = await create(webhook.cluster, pod('team-a', 'dry-name', { nodeName: 'node-1' }), {
      ...DEVELOPER,
      dryRun: true,
    });
    expect(refused.status).toBe(403);
    const admitted = await create(webhook.cluster, pod('team-a', 'dry'), { ...DEVELOPER, dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(await get(webhook.cluster, pod('team-a', 'dry'))).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, pod('team-a', 'outage'), DEVELOPER);
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling('pod-node-constraints.validate.serverless-admission.io', '/pod-node-constraints/validate'),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, pod('team-a', 'after'), DEVELOPER);
    expect(after.status, after.message).toBe(201);
  });
});
