// Upstream's table (plugin/pkg/admission/nodetaint/admission_test.go) ported: Test_nodeTaints; plus
// the validating twin, other resources and subresources, the operations it handles, a non-Node
// object, and v1beta1. Every mutation goes through mutateIdempotently.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/taint-nodes-by-condition/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { itHandles, itLeavesAlone, otherResources } from '../support/handles.js';
import {
  NODES,
  NODE_TAINTS_CASES,
  mynode,
  myNodeObj,
  myTaintedNodeObj,
  node,
  notReadyTaint,
} from '../support/cases/taint-nodes-by-condition.js';

const taintsOf = (object: KubeObject | null) => (object!.spec as { taints?: unknown[] } | undefined)?.taints;

const admit = (input: ReviewInput) => mutateIdempotently(plugin, { ...NODES, userInfo: mynode, ...input });

describe('Test_nodeTaints', () => {
  it.each(NODE_TAINTS_CASES)('$name', async ({ node: requested, expectedTaints }) => {
    const result = await admit({ object: requested });
    expect(taintsOf(result.patchedObject)).toEqual(expectedTaints);
    if (requested === myTaintedNodeObj)
      expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { ...NODES, object: result.patchedObject })),
    ).toBeUndefined();
  });

  it('keeps other taints and appends in one operation', async () => {
    const other = { key: 'example.com/dedicated', value: 'gpu', effect: 'NoSchedule' };
    const result = await admit({ object: node({ spec: { taints: [other] } }) });
    expect(result.patch).toEqual([{ op: 'add', path: '/spec/taints/1', value: notReadyTaint }]);
  });

  it('a not-ready taint with a value or another effect: the value does not matter, the effect does (Taint.MatchTaint)', async () => {
    const withValue = { ...notReadyTaint, value: 'x' };
    expect((await admit({ object: node({ spec: { taints: [withValue] } }) })).patch).toEqual([]);
    const noExecute = { key: notReadyTaint.key, effect: 'NoExecute' };
    expect(taintsOf((await admit({ object: node({ spec: { taints: [noExecute] } }) })).patchedObject)).toEqual([
      noExecute,
      notReadyTaint,
    ]);
  });
});

describe('the validating twin refuses a new Node that lost the taint after the mutation', () => {
  it('names the field', async () => {
    const result = await runPhase(plugin, 'validate', { ...NODES, object: myNodeObj });
    expect(deniedMessage(result)).toBe(
      'nodes "mynode" is forbidden: spec.taints: Required value: a new Node must carry the taint node.kubernetes.io/not-ready:NoSchedule until the node controller sees it Ready',
    );
    expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('never sees the UPDATE in which the node controller removes the taint', async () => {
    const result = await runPhase(plugin, 'validate', {
      ...NODES,
      operation: 'UPDATE',
      object: myNodeObj,
      oldObject: myTaintedNodeObj,
    });
    expect(result.wire.response!.allowed).toBe(true);
  });
});

describe('other resources and subresources are ignored', () => {
  itLeavesAlone(plugin, otherResources('Node', 'nodes', 'status'), { object: myNodeObj });

  it('a non-Node object sent as a Node is Forbidden, as upstream', async () => {
    const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mynode' }, spec: {} };
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, { ...NODES, object: pod });
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        message: 'nodes "mynode" is forbidden: unexpected type *core.Pod',
      });
    }
  });
});

describe('handles CREATE only', () => {
  itHandles(plugin, ['CREATE'], { object: myNodeObj, input: NODES });

  it('declares CREATE on cluster-scoped nodes: mutating Ignore/IfNeeded, validating twin failing open (Ignore)', () => {
    const rules = [
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'], scope: 'Cluster' },
    ];
    expect(plugin.metadata.mutating).toMatchObject({
      rules,
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      timeoutSeconds: 3,
    });
    expect(plugin.metadata.validating).toMatchObject({ rules, failurePolicy: 'Ignore', timeoutSeconds: 3 });
  });

  it('answers a v1beta1 review in kind, with the same uid and a patch', async () => {
    const result = await admit({ apiVersion: 'admission.k8s.io/v1beta1', object: myNodeObj, uid: 'beta-uid' });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: true, patchType: 'JSONPatch' });
  });
});
