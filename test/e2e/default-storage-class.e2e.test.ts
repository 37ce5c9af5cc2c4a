// default-storage-class through a real kube-apiserver, against the built-in DefaultStorageClass (on
// by default, so disabled on the webhook's apiserver) on a second one: a claim without a class gets
// the default class learned from the API, stored alike; a dry run, and Ignore during an outage.
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
  - name: DefaultStorageClass
`;

function storageClass(name: string, isDefault: boolean): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name,
      ...(isDefault && { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }),
    },
    provisioner: 'example.com/disks',
  };
}

function claim(name: string, storageClassName?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      ...(storageClassName !== undefined && { storageClassName }),
    },
  };
}

let webhook: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['DefaultStorageClass'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  // Created through the API once the webhooks are in place, so the webhook learns them.
  for (const cluster of [webhook.cluster, builtin])
    for (const object of [storageClass('standard', true), storageClass('archive', false)]) {
      const answer = await create(cluster, object);
      if (answer.status !== 201) throw new Error(`StorageClass: ${answer.message}`);
    }
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
});

const className = (object: KubeObject | undefined) =>
  (object?.spec as { storageClassName?: string } | undefined)?.storageClassName;

describe('default-storage-class', () => {
  it.each([
    ['without a class gets the default', claim('unset'), 'standard'],
    ['naming a class keeps it', claim('named', 'archive'), 'archive'],
    ['with an empty class keeps none', claim('empty', ''), ''],
  ])('a claim %s, stored as the built-in stores it', async (_, object, expected) => {
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhook.cluster, object);
    expect(className(stored)).toBe(expected);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, object)));
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, claim('dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(className(dry.object)).toBe('standard');
    expect(await get(webhook.cluster, claim('dry'))).toBeUndefined();
  });

  it('during an outage admits the claim without a class (failurePolicy Ignore)', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, claim('outage'));
      expect(answer.status, answer.message).toBe(201);
      expect(className(answer.object)).toBeUndefined();
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, claim('after'));
    expect(className(after.object)).toBe('standard');
  });
});
