// TaintNodesByCondition and StorageObjectInUseProtection natively (Kubernetes 1.36+): upstream's
// Test_nodeTaints (plugin/pkg/admission/nodetaint) and TestAdmit (plugin/pkg/admission/storage/
// storageobjectinuseprotection), as test/support/cases holds them: the mutation leaves the object
// as the webhook's patch does, and the validating twin answers as the webhook's, before and after
// the mutation.
import { describe, expect, it } from 'vitest';
import storageObjectInUseProtection from '../../functions/storage-object-in-use-protection/plugin.js';
import taintNodesByCondition from '../../functions/taint-nodes-by-condition/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import {
  ADMIT_CASES,
  PV,
  PVC,
  VAC,
  claim,
  pv,
  vac,
  withFinalizers,
} from '../support/cases/storage-object-in-use-protection.js';
import { NODES, NODE_TAINTS_CASES, mynode, node, notReadyTaint } from '../support/cases/taint-nodes-by-condition.js';
import { titled } from '../support/titled.js';
import { NativeCluster, configured, expectSameAdmission, nativeObjectsOf } from './support/proof.js';

describe('TaintNodesByCondition on Kubernetes 1.36', () => {
  const NODE_BY_ITSELF = { ...NODES, userInfo: mynode };
  interface Row {
    readonly name: string;
    readonly node: KubeObject;
    readonly operation?: 'UPDATE';
    readonly expectedTaints: readonly unknown[] | undefined;
  }
  // Beyond Test_nodeTaints.
  const MORE: Row[] = [
    {
      name: 'other taints are kept',
      node: node({ spec: { taints: [{ key: 'a', effect: 'NoExecute' }] } }),
      expectedTaints: [{ key: 'a', effect: 'NoExecute' }, notReadyTaint],
    },
    { name: 'an update is left alone', node: node(), operation: 'UPDATE', expectedTaints: undefined },
  ];
  const cluster = new NativeCluster(nativeObjectsOf(configured(taintNodesByCondition), '1.36'), '1.36');

  it.each(titled<Row>([...NODE_TAINTS_CASES, ...MORE], (row) => row.name))('%s', async (_title, row) => {
    const { node: object, operation, expectedTaints } = row;
    const input: ReviewInput = {
      ...NODE_BY_ITSELF,
      operation: operation ?? 'CREATE',
      object,
      oldObject: operation === 'UPDATE' ? node() : null,
    };
    const { webhook } = await expectSameAdmission(taintNodesByCondition, undefined, cluster, input);
    expect((webhook.patchedObject?.spec as { taints?: unknown[] } | undefined)?.taints).toEqual(expectedTaints);
  });

  it('the status subresource is left alone', async () => {
    await expectSameAdmission(taintNodesByCondition, undefined, cluster, {
      ...NODE_BY_ITSELF,
      subResource: 'status',
      object: node(),
    });
  });
});

describe('StorageObjectInUseProtection on Kubernetes 1.36', () => {
  interface Row {
    readonly name: string;
    readonly input: ReviewInput;
    readonly finalizers: readonly unknown[] | undefined;
  }
  // Beyond TestAdmit.
  const MORE: Row[] = [
    {
      name: 'create a volume with another finalizer',
      input: { ...PV, object: withFinalizers(pv, 'example.com/other') },
      finalizers: ['example.com/other', 'kubernetes.io/pv-protection'],
    },
    {
      name: 'create a volume attributes class of v1beta1',
      input: {
        kind: { ...VAC.kind, version: 'v1beta1' },
        resource: { ...VAC.resource, version: 'v1beta1' },
        object: { ...vac, apiVersion: 'storage.k8s.io/v1beta1' },
      },
      finalizers: ['kubernetes.io/vac-protection'],
    },
    {
      name: 'an update is left alone',
      input: { ...PVC, operation: 'UPDATE', object: claim, oldObject: claim },
      finalizers: undefined,
    },
    {
      name: 'the status subresource is left alone',
      input: { ...PVC, subResource: 'status', object: claim },
      finalizers: undefined,
    },
  ];
  const ROWS: Row[] = [
    ...ADMIT_CASES.map(({ name, target, object, expected }) => ({
      name,
      input: { ...target, object },
      finalizers: expected.metadata?.finalizers as readonly unknown[] | undefined,
    })),
    ...MORE,
  ];
  const cluster = new NativeCluster(nativeObjectsOf(configured(storageObjectInUseProtection), '1.36'), '1.36');

  it.each(titled(ROWS, (row) => row.name))('%s', async (_title, { input, finalizers }) => {
    const { webhook } = await expectSameAdmission(storageObjectInUseProtection, undefined, cluster, input);
    expect(webhook.patchedObject?.metadata?.finalizers).toEqual(finalizers);
  });
});

describe.each([taintNodesByCondition, storageObjectInUseProtection])('$metadata.upstreamName before 1.36', (plugin) => {
  it.each(['1.30', '1.34'] as const)('stays a webhook on %s', (version) => {
    expect(planPlugin(configured(plugin), version).objects).toBeUndefined();
  });
});
