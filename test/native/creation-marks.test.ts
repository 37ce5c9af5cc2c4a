// TaintNodesByCondition and StorageObjectInUseProtection natively (Kubernetes 1.36+): upstream's
// Test_nodeTaints (plugin/pkg/admission/nodetaint) and TestAdmit (plugin/pkg/admission/storage/
// storageobjectinuseprotection), ported anew: the mutation leaves the object as the webhook's
// patch does, and the validating twin answers as the webhook's, before and after the mutation.
import { describe, expect, it } from 'vitest';
import storageObjectInUseProtection from '../../functions/storage-object-in-use-protection/plugin.js';
import taintNodesByCondition from '../../functions/taint-nodes-by-condition/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { NativeCluster, configured, expectSameAdmission, nativeObjectsOf } from './support/proof.js';

describe('TaintNodesByCondition on Kubernetes 1.36', () => {
  const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
  const node = (extra: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'mynode' },
    ...extra,
  });
  const NODES = {
    kind: { kind: 'Node' },
    resource: { resource: 'nodes' },
    userInfo: { username: 'system:node:mynode', groups: ['system:nodes'] },
  };
  // Test_nodeTaints: [name, node, operation, taints upstream expects]
  const ROWS: [string, KubeObject, 'CREATE' | 'UPDATE', unknown[] | undefined][] = [
    ['notReady taint is added on creation', node(), 'CREATE', [notReady]],
    ['already tainted node is not tainted again', node({ spec: { taints: [notReady] } }), 'CREATE', [notReady]],
    [
      'NotReady taint is added to an unready node as well',
      node({ status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
      'CREATE',
      [notReady],
    ],
    [
      'other taints are kept',
      node({ spec: { taints: [{ key: 'a', effect: 'NoExecute' }] } }),
      'CREATE',
      [{ key: 'a', effect: 'NoExecute' }, notReady],
    ],
    ['an update is left alone', node(), 'UPDATE', undefined],
  ];
  const cluster = new NativeCluster(nativeObjectsOf(configured(taintNodesByCondition), '1.36'), '1.36');

  it.each(ROWS)('%s', async (_name, object, operation, expected) => {
    const input: ReviewInput = { ...NODES, operation, object, oldObject: operation === 'UPDATE' ? node() : null };
    const { webhook } = await expectSameAdmission(taintNodesByCondition, undefined, cluster, input);
    expect((webhook.patchedObject?.spec as { taints?: unknown[] } | undefined)?.taints).toEqual(expected);
  });

  it('the status subresource is left alone', async () => {
    await expectSameAdmission(taintNodesByCondition, undefined, cluster, {
      ...NODES,
      subResource: 'status',
      object: node(),
    });
  });
});

describe('StorageObjectInUseProtection on Kubernetes 1.36', () => {
  const PVC = { kind: { kind: 'PersistentVolumeClaim' }, resource: { resource: 'persistentvolumeclaims' } };
  const PV = { kind: { kind: 'PersistentVolume' }, resource: { resource: 'persistentvolumes' } };
  const VAC = {
    kind: { group: 'storage.k8s.io', version: 'v1beta1', kind: 'VolumeAttributesClass' },
    resource: { group: 'storage.k8s.io', version: 'v1beta1', resource: 'volumeattributesclasses' },
  };
  const object = (kind: string, namespace: string | undefined, finalizers?: string[]): KubeObject => ({
    kind,
    metadata: { name: 'x', ...(namespace && { namespace }), ...(finalizers && { finalizers }) },
  });
  // TestAdmit: [name, request, finalizers upstream expects]
  const ROWS: [string, ReviewInput, string[] | undefined][] = [
    [
      'create a claim: protected',
      { ...PVC, object: object('PersistentVolumeClaim', 'ns') },
      ['kubernetes.io/pvc-protection'],
    ],
    [
      'create a claim already protected',
      { ...PVC, object: object('PersistentVolumeClaim', 'ns', ['kubernetes.io/pvc-protection']) },
      ['kubernetes.io/pvc-protection'],
    ],
    [
      'create a volume: protected',
      { ...PV, object: object('PersistentVolume', undefined) },
      ['kubernetes.io/pv-protection'],
    ],
    [
      'create a volume with another finalizer',
      { ...PV, object: object('PersistentVolume', undefined, ['example.com/other']) },
      ['example.com/other', 'kubernetes.io/pv-protection'],
    ],
    [
      'create a volume already protected',
      { ...PV, object: object('PersistentVolume', undefined, ['kubernetes.io/pv-protection']) },
      ['kubernetes.io/pv-protection'],
    ],
    [
      'create a volume attributes class: protected',
      { ...VAC, object: object('VolumeAttributesClass', undefined) },
      ['kubernetes.io/vac-protection'],
    ],
    [
      'an update is left alone',
      {
        ...PVC,
        operation: 'UPDATE',
        object: object('PersistentVolumeClaim', 'ns'),
        oldObject: object('PersistentVolumeClaim', 'ns'),
      },
      undefined,
    ],
    [
      'the status subresource is left alone',
      { ...PVC, subResource: 'status', object: object('PersistentVolumeClaim', 'ns') },
      undefined,
    ],
  ];
  const cluster = new NativeCluster(nativeObjectsOf(configured(storageObjectInUseProtection), '1.36'), '1.36');

  it.each(ROWS)('%s', async (_name, input, expected) => {
    const { webhook } = await expectSameAdmission(storageObjectInUseProtection, undefined, cluster, input);
    expect(webhook.patchedObject?.metadata?.finalizers).toEqual(expected);
  });
});

describe.each([taintNodesByCondition, storageObjectInUseProtection])('$metadata.upstreamName before 1.36', (plugin) => {
  it.each(['1.30', '1.34'] as const)('stays a webhook on %s', (version) => {
    expect(planPlugin(configured(plugin), version).objects).toBeUndefined();
  });
});
