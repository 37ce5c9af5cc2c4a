// taint-nodes-by-condition through a real kube-apiserver (its own TaintNodesByCondition disabled, so
// the webhook alone taints), beside the built-in (on by default): a new Node tainted not-ready, a
// Node's own taints kept, a dry run, and an outage (both webhooks fail open).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get } from './support/kube.js';
import { duringOutage } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: TaintNodesByCondition
`;

let webhooks: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['TaintNodesByCondition'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const node = (name: string, taints?: object[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  ...(taints && { spec: { taints } }),
});
const taintsOf = (o: KubeObject | undefined) => (o!.spec as { taints?: object[] }).taints;
const NOT_READY = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);

describe('taint-nodes-by-condition', () => {
  it('taints a new Node not-ready, as the built-in does', async () => {
    const n = node('n1');
    const [webhook, reference] = await onBoth((c) => create(c, n));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, n);
    expect(taintsOf(stored)).toEqual([NOT_READY]);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, n)));
  });

  it("keeps a Node's own taints and adds not-ready after them, as the built-in does", async () => {
    const n = node('n2', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
    const [webhook, reference] = await onBoth((c) => create(c, n));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, n);
    expect(taintsOf(stored)).toEqual([{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, NOT_READY]);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, n)));
  });

  it('shows the taint on a dry run and stores nothing', async () => {
    const n = node('dry');
    const [webhook, reference] = await onBoth((c) => create(c, n, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect(taintsOf(webhook.object)).toEqual([NOT_READY]);
    expect(taintsOf(webhook.object)).toEqual(taintsOf(reference.object));
    expect(await get(webhooks.cluster, n)).toBeUndefined();
  });

  it('during an outage both webhooks (Ignore) are skipped: the Node is stored untainted', async () => {
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, node('outage')));
    expect(answer.status, answer.message).toBe(201);
    expect(taintsOf(answer.object)).toBeUndefined();
  });
});
