// runtime-class through a real kube-apiserver (its own RuntimeClass disabled, so the webhooks alone
// apply the classes), beside the built-in RuntimeClass (on by default): a class's overhead and
// scheduling set on a pod, an unknown class refused, a dry run, and an outage (the mutation fails
// open, the validating webhook closed).
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, pod } from './support/kube.js';
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
  - name: RuntimeClass
`;
const MUTATE = 'runtime-class.mutate.serverless-admission.io';
const VALIDATE = 'runtime-class.validate.serverless-admission.io';

const kata: KubeObject = {
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name: 'kata' },
  handler: 'kata',
  overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
  scheduling: {
    nodeSelector: { runtime: 'kata' },
    tolerations: [{ key: 'runtime', operator: 'Equal', value: 'kata', effect: 'NoSchedule' }],
  },
};

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['RuntimeClass'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns RuntimeClasses from its learning webhook.
  await Promise.all(
    both.map(async (c) => {
      await namespaceWithAccount(c, 'apps');
      const answer = await create(c, kata);
      if (answer.status !== 201) throw new Error(`RuntimeClass: ${answer.status} ${answer.message}`);
    }),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const placementOf = (o: KubeObject | undefined) => {
  const { overhead, nodeSelector, tolerations } = o!.spec as Record<string, unknown>;
  return { overhead, nodeSelector, tolerations };
};

describe('runtime-class', () => {
  it("sets the class's overhead, node selector and tolerations on a pod, as the built-in does", async () => {
    const p = pod('apps', 'kata', { runtimeClassName: 'kata', nodeSelector: { disk: 'ssd' } });
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    const placement = placementOf(stored);
    expect(placement.overhead).toEqual({ cpu: '250m', memory: '64Mi' });
    expect(placement.nodeSelector).toEqual({ disk: 'ssd', runtime: 'kata' });
    expect(placement.tolerations).toContainEqual({
      key: 'runtime',
      operator: 'Equal',
      value: 'kata',
      effect: 'NoSchedule',
    });
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it("refuses a pod naming an unknown class with the built-in's message", async () => {
    const p = pod('apps', 'unknown', { runtimeClassName: 'missing' });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe('pods "unknown" is forbidden: pod rejected: RuntimeClass "missing" not found');
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, MUTATE);
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it("refuses a pod whose node selector conflicts with the class's, with the built-in's message", async () => {
    const p = pod('apps', 'conflict', { runtimeClassName: 'kata', nodeSelector: { runtime: 'runc' } });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect([reference.status, reference.reason, reference.message]).toEqual([
      403,
      'Forbidden',
      'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc',
    ]);
    expectSameRefusal(webhook, reference, MUTATE);
  });

  it('shows the placement on a dry run and stores nothing', async () => {
    const p = pod('apps', 'dry', { runtimeClassName: 'kata' });
    const [webhook, reference] = await onBoth((c) => create(c, p, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect(placementOf(webhook.object)).toEqual(placementOf(reference.object));
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('during an outage the mutation is skipped (Ignore) and the validating webhook (Fail) refuses', async () => {
    const answer = await duringOutage(webhooks, () =>
      create(webhooks.cluster, pod('apps', 'outage', { runtimeClassName: 'kata' })),
    );
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'runtime-class', 'validate'));
  });
});
