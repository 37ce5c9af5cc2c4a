// storage-object-in-use-protection through a real kube-apiserver, against the built-in
// StorageObjectInUseProtection (on by default, so disabled on the webhook's apiserver) on a second
// one: claims and volumes are stored with the same protection finalizers; a dry run, and Ignore
// during an outage.
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
  - name: StorageObjectInUseProtection
`;

function claim(name: string, finalizers?: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', ...(finalizers && { finalizers }) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
  };
}

function volume(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '1Gi' },
      hostPath: { path: `/tmp/${name}` },
    },
  };
}

let webhook: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['StorageObjectInUseProtection'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
});

const finalizersOf = (object: KubeObject | undefined) => object?.metadata.finalizers;

describe('storage-object-in-use-protection', () => {
  it.each([
    ['a claim', claim('data'), ['kubernetes.io/pvc-protection']],
    ['a claim that already has it', claim('twice', ['kubernetes.io/pvc-protection']), ['kubernetes.io/pvc-protection']],
    [
      'a claim with another finalizer',
      claim('other', ['example.com/keep']),
      ['example.com/keep', 'kubernetes.io/pvc-protection'],
    ],
    ['a volume', volume('disk'), ['kubernetes.io/pv-protection']],
  ])('stores %s with the protection finalizer, as the built-in does', async (_, object, expected) => {
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhook.cluster, object);
    expect(finalizersOf(stored)).toEqual(expected);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, object)));
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, claim('dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(finalizersOf(dry.object)).toEqual(['kubernetes.io/pvc-protection']);
    expect(await get(webhook.cluster, claim('dry'))).toBeUndefined();
  });

  it('during an outage admits the claim unprotected (failurePolicy Ignore)', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, claim('outage'));
      expect(answer.status, answer.message).toBe(201);
      expect(finalizersOf(answer.object)).toBeUndefined();
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, claim('after'));
    expect(finalizersOf(after.object)).toEqual(['kubernetes.io/pvc-protection']);
  });
});
