// external-ip-ranger through a real kube-apiserver (OpenShift's plugin: this apiserver has no
// built-in to compare with), with config/examples/external-ip-ranger.yaml: external IPs inside the
// allowed network are stored, others refused with OpenShift's field errors; a dry run, and
// failurePolicy Fail during an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling, grantClusterAdmin } from './support/cluster-setup.js';
import type { KubeObject, WriteOptions } from './support/kube.js';
import { create, get, update, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(join(import.meta.dirname, '../../config/examples/external-ip-ranger.yaml'), 'utf8');
// Bound to cluster-admin by RBAC, yet outside the allowlist that stands in for OpenShift's
// `create services/externalips` check (system:masters by default).
const DEVELOPER: WriteOptions = { as: 'alice', groups: ['developers'] };

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  await grantClusterAdmin(webhook.cluster, 'developers');
});
afterAll(async () => {
  await webhook?.stop();
});

function service(name: string, externalIPs?: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { ports: [{ port: 80 }], ...(externalIPs && { externalIPs }) },
  };
}

const externalIPs = (object: KubeObject | undefined) =>
  (object?.spec as { externalIPs?: string[] } | undefined)?.externalIPs;

describe('external-ip-ranger', () => {
  it('stores external IPs inside the allowed network', async () => {
    const object = service('inside', ['192.0.2.10', '192.0.2.127']);
    const answer = await create(webhook.cluster, object, DEVELOPER);
    expect(answer.status, answer.message).toBe(201);
    expect(externalIPs(await get(webhook.cluster, object))).toEqual(['192.0.2.10', '192.0.2.127']);
  });

  it('refuses every external IP outside it, or in the excluded range, with OpenShift’s field errors', async () => {
    const object = service('outside', ['192.0.2.10', '192.0.2.200', '198.51.100.1']);
    const answer = await create(webhook.cluster, object, DEVELOPER);
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)).toEqual({
      webhook: 'external-ip-ranger.validate.serverless-admission.io',
      message:
        'services "outside" is forbidden: [spec.externalIPs[1]: Forbidden: externalIP is not ' +
        'allowed, spec.externalIPs[2]: Forbidden: externalIP is not allowed]',
    });
    expect(await get(webhook.cluster, object)).toBeUndefined();
  });

  it('admits any external IP from system:masters (the allowlist)', async () => {
    const answer = await create(webhook.cluster, service('admin', ['198.51.100.3']));
    expect(answer.status, answer.message).toBe(201);
  });

  it('refuses adding an external IP outside the network on update', async () => {
    const created = await create(webhook.cluster, service('grows'), DEVELOPER);
    expect(created.status, created.message).toBe(201);
    const grown = { ...created.object!, spec: { ...(created.object!.spec as object), externalIPs: ['203.0.113.9'] } };
    const answer = await update(webhook.cluster, grown, DEVELOPER);
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)?.message).toBe(
      'services "grows" is forbidden: spec.externalIPs[0]: Forbidden: externalIP is not allowed',
    );
  });

  it('refuses a dry run as a real request, and admits one without storing it', async () => {
    expect(
      (await create(webhook.cluster, service('dry-outside', ['198.51.100.2']), { ...DEVELOPER, dryRun: true })).status,
    ).toBe(403);
    const dry = service('dry', ['192.0.2.11']);
    const admitted = await create(webhook.cluster, dry, { ...DEVELOPER, dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(await get(webhook.cluster, dry)).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, service('outage', ['192.0.2.12']), DEVELOPER);
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling('external-ip-ranger.validate.serverless-admission.io', '/external-ip-ranger/validate'),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, service('after', ['192.0.2.12']), DEVELOPER);
    expect(after.status, after.message).toBe(201);
  });
});
