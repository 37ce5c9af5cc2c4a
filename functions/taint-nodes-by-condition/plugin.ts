// TaintNodesByCondition: the node lifecycle controller taints a node that is not Ready with
// node.kubernetes.io/not-ready:NoSchedule, but only after it has seen the node. A node that has just
// registered could receive pods in that window before it can run them. New Nodes therefore start
// tainted; the controller removes the taint once the node reports Ready. Upstream:
// plugin/pkg/admission/nodetaint.
//
// Served as a mutating webhook (upstream Admit: add the taint) and a validating twin that checks the
// taint is still there once every other mutating webhook has run. Both see CREATE only, as upstream:
// the controller removes the taint later with an UPDATE, which must never be refused.

import type { Taint } from 'kubernetes-types/core/v1.js';
import { allowed, forbidden, patched } from '../../lib/admission/decision.js';
import { FieldPath, required } from '../../lib/admission/field.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { goTypeName, ofKind } from '../../lib/kube/objects.js';

interface Node extends KubeObject {
  spec?: { taints?: Taint[]; [key: string]: unknown };
}

export const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
const NODE_CREATES = judgedResource(['CREATE'], '', 'nodes', 'Cluster');

const NODES: ObjectGuard<Node> = {
  // Other operations, resources and subresources (nodes/status, nodes/proxy) are left alone.
  ignore: NODE_CREATES.ignore,
  accepts: ofKind<Node>('Node'),
  // admission.NewForbidden, as upstream answers an object that is not a Node.
  otherwise: (request) => forbidden(request, [`unexpected type ${goTypeName(request.object)}`]),
};

function taintsOf(node: Node): unknown[] {
  return Array.isArray(node.spec?.taints) ? node.spec.taints : [];
}

/** Taint.MatchTaint: the same key and effect, whatever the value. */
function hasNotReadyTaint(node: Node): boolean {
  return taintsOf(node).some((t) => {
    if (typeof t !== 'object' || t === null) return false;
    const taint = t as Taint;
    return (taint.key ?? '') === NOT_READY_TAINT.key && (taint.effect ?? '') === NOT_READY_TAINT.effect;
  });
}

export default definePlugin({
  metadata: {
    upstreamName: 'TaintNodesByCondition',
    name: 'taint-nodes-by-condition',
    summary: 'Taints every new Node node.kubernetes.io/not-ready:NoSchedule until the node controller sees it Ready.',
    // The twin fails open: with Fail, a webhook outage would stop new objects of this kind (Nodes
    // could not register), while the in-cluster controller adds the same taint or finalizer anyway.
    ...mutatingWithTwin(NODE_CREATES.rules, { twinFailurePolicy: 'Ignore' }),
    writes: false,
    needs: [],
    // Nodes are cluster-scoped: a namespaceSelector never applies to them, so there is no system
    // namespace to leave out, and every new Node must be seen.
    systemNamespaces: 'include',
  },

  admit: guardedPhase(NODES, (node) => {
    if (hasNotReadyTaint(node)) return allowed();
    // Copies only the path that changes.
    return patched({ ...node, spec: { ...node.spec, taints: [...taintsOf(node), { ...NOT_READY_TAINT }] as Taint[] } });
  }),

  validate: guardedPhase(NODES, (node, request) => {
    if (hasNotReadyTaint(node)) return allowed();
    const detail = `a new Node must carry the taint ${NOT_READY_TAINT.key}:${NOT_READY_TAINT.effect} until the node controller sees it Ready`;
    return forbidden(request, [required(FieldPath.of('spec', 'taints'), detail)]);
  }),
});
