// default-toleration-seconds through a real kube-apiserver (its own DefaultTolerationSeconds
// disabled, so the webhook alone adds the tolerations), beside the built-in with the same seconds
// given by its flags: the tolerations a pod gets, one the pod set itself kept, a dry run, and an
// outage (both webhooks fail open).
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, pod } from './support/kube.js';
import { duringOutage, namespaceWithAccount, removeEverywhere } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: DefaultTolerationSeconds
    configuration:
      defaultNotReadyTolerationSeconds: 120
      defaultUnreachableTolerationSeconds: 60
`;

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['DefaultTolerationSeconds'] },
    }),
    startControlPlane({
      controllerManager: false,
      extraApiserverArgs: ['--default-not-ready-toleration-seconds=120', '--default-unreachable-toleration-seconds=60'],
    }),
  ]);
  both = [webhooks.cluster, builtin];
  await Promise.all(both.map((c) => namespaceWithAccount(c, 'apps')));
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const tolerationsOf = (o: KubeObject | undefined) => (o!.spec as { tolerations?: object[] }).tolerations;

describe('default-toleration-seconds', () => {
  it('adds the not-ready and unreachable tolerations with the configured seconds, as the built-in does', async () => {
    const p = pod('apps', 'plain');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    expect(tolerationsOf(stored)).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it("keeps a pod's own toleration of one taint and adds only the other, as the built-in does", async () => {
    const p = pod('apps', 'own', {
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
      ],
    });
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    expect(tolerationsOf(stored)).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it('shows the tolerations on a dry run and stores nothing', async () => {
    const p = pod('apps', 'dry');
    const [webhook, reference] = await onBoth((c) => create(c, p, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect(tolerationsOf(webhook.object)).toHaveLength(2);
    expect(tolerationsOf(webhook.object)).toEqual(tolerationsOf(reference.object));
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('during an outage both webhooks (Ignore) are skipped: the pod is stored without the tolerations', async () => {
    const p = pod('apps', 'outage');
    onTestFinished(() => removeEverywhere(both, [p]));
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, p));
    expect(answer.status, answer.message).toBe(201);
    expect(tolerationsOf(answer.object)).toBeUndefined();
  });
});
