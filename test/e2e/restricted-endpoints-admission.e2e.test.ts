// restricted-endpoints-admission through a real kube-apiserver (OpenShift's plugin: this apiserver
// has no built-in to compare with): a user outside the allowlist may not point Endpoints or an
// EndpointSlice into a restricted network, with OpenShift's messages; system:masters may; a dry
// run, and failurePolicy Fail during an outage. (The link-local network OpenShift also refuses
// in Endpoints never reaches a webhook: the apiserver's validation refuses it first, with 422.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling, grantClusterAdmin } from './support/cluster-setup.js';
import type { KubeObject, WriteOptions } from './support/kube.js';
import { create, get, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(
  join(import.meta.dirname, '../../config/examples/restricted-endpoints-admission.yaml'),
  'utf8',
);
const DEVELOPER: WriteOptions = { as: 'alice', groups: ['developers'] };

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  await grantClusterAdmin(webhook.cluster, 'developers');
});
afterAll(async () => {
  await webhook?.stop();
});

function endpoints(name: string, ip: string, port = 8080): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: 'default' },
    subsets: [{ addresses: [{ ip }], ports: [{ port, protocol: 'TCP' }] }],
  };
}

function slice(name: string, ip: string, port: number): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default' },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip] }],
    ports: [{ port, protocol: 'TCP' }],
  };
}

describe('restricted-endpoints-admission', () => {
  it('admits a developer’s endpoints outside the restricted networks', async () => {
    const answer = await create(webhook.cluster, endpoints('external-db', '192.0.2.5'), DEVELOPER);
    expect(answer.status, answer.message).toBe(201);
  });

  it.each([
    [
      'a restricted CIDR',
      endpoints('pod-network', '10.128.0.5'),
      'endpoints "pod-network" is forbidden: endpoint address 10.128.0.5 is not allowed',
    ],
    [
      'the service network, as an EndpointSlice',
      slice('service-network', '172.30.0.10', 8080),
      'endpointslices.discovery.k8s.io "service-network" is forbidden: endpoint address 172.30.0.10 is not allowed',
    ],
    [
      'the machine config server’s port',
      slice('mcs', '192.0.2.6', 22623),
      'endpointslices.discovery.k8s.io "mcs" is forbidden: endpoint port TCP:22623 is not allowed',
    ],
  ])('refuses a developer’s endpoints into %s with OpenShift’s message', async (_, object, message) => {
    const answer = await create(webhook.cluster, object, DEVELOPER);
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)).toEqual({
      webhook: 'restricted-endpoints-admission.validate.serverless-admission.io',
      message,
    });
    expect(await get(webhook.cluster, object)).toBeUndefined();
  });

  it('admits the same endpoints from system:masters (the allowlist)', async () => {
    const answer = await create(webhook.cluster, endpoints('admin-pod-network', '10.128.0.5'));
    expect(answer.status, answer.message).toBe(201);
  });

  it('refuses a dry run as a real request, and admits one without storing it', async () => {
    expect(
      (await create(webhook.cluster, endpoints('dry-pods', '10.128.0.6'), { ...DEVELOPER, dryRun: true })).status,
    ).toBe(403);
    const dry = endpoints('dry', '192.0.2.7');
    const admitted = await create(webhook.cluster, dry, { ...DEVELOPER, dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(await get(webhook.cluster, dry)).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, endpoints('outage', '192.0.2.8'), DEVELOPER);
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling(
          'restricted-endpoints-admission.validate.serverless-admission.io',
          '/restricted-endpoints-admission/validate',
        ),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, endpoints('after', '192.0.2.8'), DEVELOPER);
    expect(after.status, after.message).toBe(201);
  });
});
