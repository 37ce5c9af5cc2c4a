// namespace-reservation through a real kube-apiserver (OpenShift's plugin: this apiserver has no
// built-in to compare with): reserved names and prefixes refused with OpenShift's messages, other
// namespaces created, a dry run, and failurePolicy Fail during an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling } from './support/cluster-setup.js';
import type { KubeObject } from './support/kube.js';
import { create, get, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(join(import.meta.dirname, '../../config/examples/namespace-reservation.yaml'), 'utf8');

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
});
afterAll(async () => {
  await webhook?.stop();
});

const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

describe('namespace-reservation', () => {
  it('creates a namespace whose name is not reserved', async () => {
    const answer = await create(webhook.cluster, namespace('team-a'));
    expect(answer.status, answer.message).toBe(201);
    expect(await get(webhook.cluster, namespace('team-a'))).toBeDefined();
  });

  it.each([
    ['kube', 'namespaces "kube" is forbidden: cannot create a namespace with the name "kube"'],
    [
      'openshift-monitoring',
      'namespaces "openshift-monitoring" is forbidden: cannot create a namespace starting with "openshift-"',
    ],
    ['kube-tools', 'namespaces "kube-tools" is forbidden: cannot create a namespace starting with "kube-"'],
  ])('refuses the namespace %s with OpenShift’s message', async (name, message) => {
    const answer = await create(webhook.cluster, namespace(name));
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)).toEqual({
      webhook: 'namespace-reservation.validate.serverless-admission.io',
      message,
    });
    expect(await get(webhook.cluster, namespace(name))).toBeUndefined();
  });

  it('refuses a dry run as a real request, and admits one without storing it', async () => {
    expect((await create(webhook.cluster, namespace('openshift'), { dryRun: true })).status).toBe(403);
    const dry = await create(webhook.cluster, namespace('dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(await get(webhook.cluster, namespace('dry'))).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, namespace('outage'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling('namespace-reservation.validate.serverless-admission.io', '/namespace-reservation/validate'),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, namespace('after'));
    expect(after.status, after.message).toBe(201);
  });
});
