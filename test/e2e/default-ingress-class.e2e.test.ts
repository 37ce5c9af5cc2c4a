// default-ingress-class through a real kube-apiserver, against the built-in DefaultIngressClass (on
// by default, so disabled on the webhook's apiserver) on a second one: an ingress without a class
// gets the default IngressClass learned from the API, stored alike; a dry run, and Ignore during an
// outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: DefaultIngressClass
`;

function ingressClass(name: string, isDefault: boolean): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: {
      name,
      ...(isDefault && { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }),
    },
    spec: { controller: 'example.com/ingress' },
  };
}

function ingress(name: string, extra: { className?: string; annotations?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'default', ...(extra.annotations && { annotations: extra.annotations }) },
    spec: {
      ...(extra.className !== undefined && { ingressClassName: extra.className }),
      defaultBackend: { service: { name: 'web', port: { number: 80 } } },
    },
  };
}

let webhook: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['DefaultIngressClass'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  // Created through the API once the webhooks are in place, so the webhook learns them.
  for (const cluster of [webhook.cluster, builtin])
    for (const object of [ingressClass('nginx', true), ingressClass('internal', false)]) {
      const answer = await create(cluster, object);
      if (answer.status !== 201) throw new Error(`IngressClass: ${answer.message}`);
    }
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
});

const className = (object: KubeObject | undefined) =>
  (object?.spec as { ingressClassName?: string } | undefined)?.ingressClassName;

describe('default-ingress-class', () => {
  it.each([
    ['without a class gets the default', ingress('unset'), 'nginx'],
    ['naming a class keeps it', ingress('named', { className: 'internal' }), 'internal'],
    [
      'with the legacy annotation gets none',
      ingress('annotated', { annotations: { 'kubernetes.io/ingress.class': 'internal' } }),
      undefined,
    ],
  ])('an ingress %s, stored as the built-in stores it', async (_, object, expected) => {
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhook.cluster, object);
    expect(className(stored)).toBe(expected);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, object)));
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, ingress('dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(className(dry.object)).toBe('nginx');
    expect(await get(webhook.cluster, ingress('dry'))).toBeUndefined();
  });

  it('during an outage admits the ingress without a class (failurePolicy Ignore)', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, ingress('outage'));
      expect(answer.status, answer.message).toBe(201);
      expect(className(answer.object)).toBeUndefined();
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, ingress('after'));
    expect(className(after.object)).toBe('nginx');
  });
});
