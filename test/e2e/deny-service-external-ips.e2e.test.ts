// deny-service-external-ips through a real kube-apiserver, against the built-in
// DenyServiceExternalIPs on a second apiserver: the same refusals and stored services, a dry run,
// and failurePolicy Fail during an outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, update, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: DenyServiceExternalIPs
`;

let webhook: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({ enableAdmissionPlugins: ['DenyServiceExternalIPs'], controllerManager: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
});

// A fixed cluster IP, so that both apiservers store the same object.
function service(name: string, clusterIP: string, externalIPs?: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { clusterIP, ports: [{ port: 80 }], ...(externalIPs && { externalIPs }) },
  };
}

async function both(send: (cluster: ControlPlane) => ReturnType<typeof create>) {
  return Promise.all([send(webhook.cluster), send(builtin)]);
}

describe('deny-service-external-ips', () => {
  it('admits a service without externalIPs and stores it as the built-in does', async () => {
    const object = service('plain', '10.0.0.20');
    const [served, reference] = await both((c) => create(c, object));
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(admittedShape(await get(webhook.cluster, object))).toEqual(admittedShape(await get(builtin, object)));
  });

  it('refuses externalIPs on create and when added on update, with the built-in’s message', async () => {
    const created = service('external', '10.0.0.21', ['192.0.2.10']);
    const [served, reference] = await both((c) => create(c, created));
    expect(reference.status).toBe(403);
    expect(reference.message).toBe(
      'services "external" is forbidden: Use of external IPs is denied by admission control',
    );
    expect(served.status).toBe(403);
    expect(webhookDenial(served.message)).toEqual({
      webhook: 'deny-service-external-ips.validate.serverless-admission.io',
      message: reference.message,
    });

    const base = service('grows', '10.0.0.22');
    await both((c) => create(c, base));
    const [current, currentReference] = await Promise.all([get(webhook.cluster, base), get(builtin, base)]);
    const grown = (object: KubeObject | undefined) => ({
      ...object!,
      spec: { ...(object!.spec as object), externalIPs: ['192.0.2.11'] },
    });
    const [servedUpdate, referenceUpdate] = await Promise.all([
      update(webhook.cluster, grown(current)),
      update(builtin, grown(currentReference)),
    ]);
    expect(referenceUpdate.status).toBe(403);
    expect(servedUpdate.status).toBe(403);
    expect(webhookDenial(servedUpdate.message)?.message).toBe(referenceUpdate.message);
    expect(admittedShape(await get(webhook.cluster, base))).toEqual(admittedShape(await get(builtin, base)));
  });

  it('refuses a dry run as a real request, and admits one without storing it', async () => {
    const refused = await create(webhook.cluster, service('dry-external', '10.0.0.23', ['192.0.2.12']), {
      dryRun: true,
    });
    expect(refused.status).toBe(403);
    const dry = service('dry', '10.0.0.24');
    const admitted = await create(webhook.cluster, dry, { dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(await get(webhook.cluster, dry)).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, service('outage', '10.0.0.25'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        /^Internal error occurred: failed calling webhook "deny-service-external-ips\.validate\.serverless-admission\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/deny-service-external-ips\/validate\?timeout=\d+s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, service('after', '10.0.0.26'));
    expect(after.status, after.message).toBe(201);
  });
});
