// storage-object-in-use-protection natively: the MutatingAdmissionPolicy and
// ValidatingAdmissionPolicy `emit --native` compiles, applied to a real apiserver, store upstream's
// TestAdmit claims, volumes and volume attributes classes (test/support/cases, each given the spec
// the apiserver's validation asks for) and the rows test/native/creation-marks.test.ts adds as the
// webhooks do on another apiserver. The built-in StorageObjectInUseProtection (on by default) is
// off on both, so the plugin alone decides. The v1beta1 VolumeAttributesClass row stays with the
// in-process proof: v1beta1 is not served by default on v1.36.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { createAt, get, requestAt } from './support/kube.js';
import { expectSameAnswer, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { labelled, modify, startNativePair } from './support/native-pair.js';
import { ADMIT_CASES, claim, pv, withFinalizers } from '../support/cases/storage-object-in-use-protection.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: StorageObjectInUseProtection
`;

type CaseObject = typeof claim;

const COLLECTIONS: Record<string, string> = {
  PersistentVolumeClaim: '/api/v1/namespaces/team-a/persistentvolumeclaims',
  PersistentVolume: '/api/v1/persistentvolumes',
  VolumeAttributesClass: '/apis/storage.k8s.io/v1/volumeattributesclasses',
};
/** The case's object, named for its row, in team-a, with a spec the apiserver validates. */
function valid(caseObject: CaseObject, name: string): KubeObject {
  const object = caseObject as KubeObject;
  const metadata = {
    ...object.metadata,
    name,
    ...(object.kind === 'PersistentVolumeClaim' && { namespace: 'team-a' }),
  };
  if (object.kind === 'PersistentVolumeClaim')
    return {
      ...object,
      metadata,
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
    };
  if (object.kind === 'PersistentVolume')
    return {
      ...object,
      metadata,
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv' } },
    };
  // A class's parameters must hold one pair at least.
  return { ...object, metadata, parameters: { tier: 'e2e' } };
}
const write = (cluster: ControlPlane, object: KubeObject) => createAt(cluster, COLLECTIONS[object.kind], object);
const finalizersOf = (object: KubeObject | undefined) => object?.metadata.finalizers as unknown[] | undefined;

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    controlPlane: { disableAdmissionPlugins: ['StorageObjectInUseProtection'] },
    seed: async (cluster) => {
      await cluster.request('POST', '/api/v1/namespaces', { metadata: { name: 'team-a' } });
      const stored = await write(cluster, valid(claim, 'stored'));
      if (stored.status !== 201) throw new Error(`seeding the claim: ${stored.message}`);
    },
    inForce: async (cluster) =>
      finalizersOf((await createAt(cluster, COLLECTIONS.PersistentVolume, valid(pv, 'probe'), { dryRun: true })).object)
        ?.length === 1,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const rows: { name: string; request: (cluster: ControlPlane) => Promise<Answer>; finalizers: unknown[] | undefined }[] =
  [
    ...ADMIT_CASES.map(({ name, object, expected }, index) => ({
      name,
      request: (cluster: ControlPlane) => write(cluster, valid(object, `row-${index}`)),
      finalizers: finalizersOf(expected as KubeObject),
    })),
    {
      name: 'create a volume with another finalizer',
      request: (cluster) => write(cluster, valid(withFinalizers(pv, 'example.com/other'), 'other')),
      finalizers: ['example.com/other', 'kubernetes.io/pv-protection'],
    },
  ];

/**
 * Writes to the stored claim: an update, and its status. The native side's controller-manager
 * protects and binds stored claims itself meanwhile, so each side's answer is held against what
 * that side had stored just before: the plugin adds nothing.
 */
const LEFT_ALONE: { name: string; request: (cluster: ControlPlane) => Promise<Answer> }[] = [
  {
    name: 'an update is left alone',
    request: (cluster) => modify(cluster, valid(claim, 'stored'), labelled({ changed: 'yes' })),
  },
  {
    name: 'the status subresource is left alone',
    request: async (cluster) => {
      const path = '/api/v1/namespaces/team-a/persistentvolumeclaims/stored';
      const stored = (await cluster.request('GET', path)).json<KubeObject>();
      return requestAt(cluster, 'PUT', `${path}/status`, { ...stored, status: { phase: 'Lost' } });
    },
  },
];

describe('storage-object-in-use-protection (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const { name, request } of LEFT_ALONE) {
    it(`leaves alone what the webhooks leave alone: ${name}`, async () => {
      const before = await Promise.all(
        [pair.webhooks.cluster, pair.native.cluster].map(async (c) =>
          finalizersOf(await get(c, valid(claim, 'stored'))),
        ),
      );
      const [webhook, native] = await pair.both(request);
      expect([webhook.status, native.status], `${webhook.message} / ${native.message}`).toEqual([200, 200]);
      expect([finalizersOf(webhook.object), finalizersOf(native.object)]).toEqual(before);
    });
  }

  for (const { name, request, finalizers } of rows) {
    it(`stores what the webhooks store: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      expect(webhook.status, webhook.message).toBeLessThan(300);
      expect(finalizersOf(webhook.object)).toEqual(finalizers);
      expectSameAnswer(webhook, native);
    });
  }
});
