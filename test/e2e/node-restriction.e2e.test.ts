// node-restriction through a real kube-apiserver, beside the built-in NodeRestriction. Requests are
// made as the node n1 (the admin impersonates system:node:n1 in group system:nodes; a binding of
// the system:node ClusterRole stands in for the Node authorizer, which neither control plane runs):
// a node registering itself, and refusals for a restricted label, another node, a non-mirror pod;
// dry runs; an outage (the webhook fails closed for nodes, and never sees anyone else's requests).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject, WriteOptions } from './support/kube.js';
import { admittedShape, create, get, pod, update } from './support/kube.js';
import {
  duringOutage,
  expectSameRefusal,
  failedCallingWebhook,
  namespaceWithAccount,
  removeEverywhere,
} from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: NodeRestriction
`;
const VALIDATE = 'node-restriction.validate.serverless-admission.io';
const AS_N1: WriteOptions = { as: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

const nodesMayAct: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'e2e-system-nodes' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
} as KubeObject;

const node = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
});

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({ controllerManager: false, enableAdmissionPlugins: ['NodeRestriction'] }),
  ]);
  both = [webhooks.cluster, builtin];
  await Promise.all(
    both.map(async (c) => {
      await namespaceWithAccount(c, 'apps');
      for (const object of [nodesMayAct, node('n2')]) {
        const answer = await create(c, object);
        if (answer.status !== 201) throw new Error(`${object.kind}: ${answer.status} ${answer.message}`);
      }
    }),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);

/** n2 as stored, with one more label: what n1 would write over it. */
async function relabelled(cluster: ControlPlane, name: string, labels: Record<string, string>): Promise<KubeObject> {
  const stored = (await get(cluster, node(name)))!;
  return { ...stored, metadata: { ...stored.metadata, labels: { ...(stored.metadata.labels as object), ...labels } } };
}

describe('node-restriction', () => {
  it("refuses a node registering itself with a node-restriction label, with the built-in's message", async () => {
    const n = node('n1', { 'node-restriction.kubernetes.io/pool': 'a' });
    const [webhook, reference] = await onBoth((c) => create(c, n, AS_N1));
    expect(reference.message).toBe(
      'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/pool',
    );
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, VALIDATE);
  });

  it('admits a node registering itself, as the built-in does', async () => {
    const n = node('n1');
    const [webhook, reference] = await onBoth((c) => create(c, n, AS_N1));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(admittedShape(await get(webhooks.cluster, n))).toEqual(admittedShape(await get(builtin, n)));
  });

  it("refuses a node modifying another node, with the built-in's message", async () => {
    const [webhook, reference] = await onBoth(async (c) => update(c, await relabelled(c, 'n2', { team: 'a' }), AS_N1));
    expect(reference.message).toBe('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    expectSameRefusal(webhook, reference, VALIDATE);
  });

  it("refuses a node creating a pod that is not a mirror pod, with the built-in's message", async () => {
    const p = pod('apps', 'from-node', { nodeName: 'n1' });
    const [webhook, reference] = await onBoth((c) => create(c, p, AS_N1));
    expect(reference.message).toBe(
      'pods "from-node" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
    expectSameRefusal(webhook, reference, VALIDATE);
    await removeEverywhere(both, [p]);
  });

  it('judges dry runs alike: a refused one refused, an admitted one stores nothing', async () => {
    const [webhook, reference] = await onBoth(async (c) =>
      update(c, await relabelled(c, 'n2', { team: 'b' }), { ...AS_N1, dryRun: true }),
    );
    expectSameRefusal(webhook, reference, VALIDATE);
    const own = await update(webhooks.cluster, await relabelled(webhooks.cluster, 'n1', { team: 'c' }), {
      ...AS_N1,
      dryRun: true,
    });
    expect(own.status, own.message).toBe(200);
    expect((await get(webhooks.cluster, node('n1')))!.metadata.labels).not.toHaveProperty('team');
  });

  it("during an outage the node's writes are refused (Fail), and the admin's are never sent", async () => {
    const [nodeWrite, adminWrite] = await duringOutage(webhooks, async () => [
      await update(webhooks.cluster, await relabelled(webhooks.cluster, 'n1', { team: 'd' }), AS_N1),
      await update(webhooks.cluster, await relabelled(webhooks.cluster, 'n2', { team: 'e' })),
    ]);
    expect(nodeWrite.status).toBe(500);
    expect(nodeWrite.message).toMatch(failedCallingWebhook(VALIDATE, 'node-restriction', 'validate'));
    expect(adminWrite.status, adminWrite.message).toBe(200);
  });
});
