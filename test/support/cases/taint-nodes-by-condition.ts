// Upstream's TaintNodesByCondition table (plugin/pkg/admission/nodetaint/admission_test.go,
// Test_nodeTaints), held once for the plugin's tests and the native policies' proof.
import type { KubeObject } from '../../../lib/admission/types.js';

/** A review of a Node, by the node itself. */
export const NODES = { kind: { kind: 'Node' }, resource: { resource: 'nodes' } };
export const mynode = { username: 'system:node:mynode', groups: ['system:nodes'] };
export const notReadyTaint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

export const node = (extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'mynode' },
  ...extra,
});
export const myNodeObj = node();
export const myTaintedNodeObj = node({ spec: { taints: [notReadyTaint] } });
export const myUnreadyNodeObj = node({ status: { conditions: [{ type: 'Ready', status: 'False' }] } });

export interface NodeTaintsCase {
  readonly name: string;
  readonly node: KubeObject;
  readonly expectedTaints: readonly unknown[];
}

export const NODE_TAINTS_CASES: readonly NodeTaintsCase[] = [
  { name: 'notReady taint is added on creation', node: myNodeObj, expectedTaints: [notReadyTaint] },
  { name: 'already tainted node is not tainted again', node: myTaintedNodeObj, expectedTaints: [notReadyTaint] },
  {
    name: 'NotReady taint is added to an unready node as well',
    node: myUnreadyNodeObj,
    expectedTaints: [notReadyTaint],
  },
];
