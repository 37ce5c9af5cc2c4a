// priority through a real kube-apiserver (its own Priority disabled, so the webhooks alone resolve
// classes), beside the built-in Priority (on by default): a pod's priority from its PriorityClass,
// an unknown class refused, a second global default refused, dry runs that teach nothing, and an
// outage (pods fail open, PriorityClasses fail closed).
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
  - name: Priority
`;
const MUTATE = 'priority.mutate.serverless-admission.io';
const VALIDATE = 'priority.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

const priorityClass = (name: string, value: number, globalDefault = false): KubeObject => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  globalDefault,
});

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['Priority'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns PriorityClasses from its learning webhook.
  await Promise.all(
    both.map(async (c) => {
      await namespaceWithAccount(c, 'apps');
      for (const pc of [priorityClass('high', 1000), priorityClass('fallback', 10, true)]) {
        const answer = await create(c, pc);
        if (answer.status !== 201)
          throw new Error(`PriorityClass ${pc.metadata.name}: ${answer.status} ${answer.message}`);
      }
    }),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const priorityOf = (o: KubeObject | undefined) => {
  const spec = o!.spec as { priority?: number; priorityClassName?: string; preemptionPolicy?: string };
  return {
    priority: spec.priority,
    priorityClassName: spec.priorityClassName,
    preemptionPolicy: spec.preemptionPolicy,
  };
};

describe('priority', () => {
  it("sets a pod's priority from its class, and from the global default without one, as the built-in does", async () => {
    const named = pod('apps', 'named', { priorityClassName: 'high' });
    const unnamed = pod('apps', 'unnamed');
    onTestFinished(() => removeEverywhere(both, [named, unnamed]));
    for (const p of [named, unnamed]) {
      const [webhook, reference] = await onBoth((c) => create(c, p));
      expect(webhook.status, webhook.message).toBe(201);
      expect(reference.status, reference.message).toBe(201);
      expect(admittedShape(await get(webhooks.cluster, p))).toEqual(admittedShape(await get(builtin, p)));
    }
    expect(priorityOf(await get(webhooks.cluster, named))).toEqual({
      priority: 1000,
      priorityClassName: 'high',
      preemptionPolicy: 'PreemptLowerPriority',
    });
    expect(priorityOf(await get(webhooks.cluster, unnamed))).toEqual({
      priority: 10,
      priorityClassName: 'fallback',
      preemptionPolicy: 'PreemptLowerPriority',
    });
  });

  it("refuses a pod naming an unknown class with the built-in's message", async () => {
    const p = pod('apps', 'unknown', { priorityClassName: 'missing' });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe('pods "unknown" is forbidden: no PriorityClass with name missing was found');
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, MUTATE);
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it("refuses a second global default PriorityClass with the built-in's message", async () => {
    const second = priorityClass('second-default', 20, true);
    const [webhook, reference] = await onBoth((c) => create(c, second));
    expect(reference.message).toBe(
      'priorityclasses.scheduling.k8s.io "second-default" is forbidden: PriorityClass fallback is already marked as default. Only one default can exist',
    );
    expectSameRefusal(webhook, reference, VALIDATE);
  });

  it('teaches nothing on a dry run: a class created dry is still unknown to the next pod', async () => {
    const dryClass = priorityClass('dry-class', 500);
    const created = await create(webhooks.cluster, dryClass, { dryRun: true });
    expect(created.status, created.message).toBe(201);
    expect(await get(webhooks.cluster, dryClass)).toBeUndefined();
    const dryPod = await create(webhooks.cluster, pod('apps', 'dry', { priorityClassName: 'high' }), { dryRun: true });
    expect(dryPod.status, dryPod.message).toBe(201);
    expect(priorityOf(dryPod.object).priority).toBe(1000);
    expect(await get(webhooks.cluster, pod('apps', 'dry'))).toBeUndefined();
    const [webhook, reference] = await onBoth((c) =>
      create(c, pod('apps', 'after-dry', { priorityClassName: 'dry-class' })),
    );
    expect(reference.message).toBe('pods "after-dry" is forbidden: no PriorityClass with name dry-class was found');
    expectSameRefusal(webhook, reference, MUTATE);
  });

  it('during an outage: pods are stored without a priority (Ignore), PriorityClasses are refused (Fail)', async () => {
    const p = pod('apps', 'outage', { priorityClassName: 'high' });
    onTestFinished(() => removeEverywhere([webhooks.cluster], [p]));
    const [podAnswer, classAnswer] = await duringOutage(webhooks, () =>
      Promise.all([create(webhooks.cluster, p), create(webhooks.cluster, priorityClass('in-outage', 5))]),
    );
    expect(podAnswer.status, podAnswer.message).toBe(201);
    expect(priorityOf(podAnswer.object).priority).toBeUndefined();
    expect(classAnswer.status).toBe(500);
    expect(classAnswer.message).toMatch(failedCallingWebhook(VALIDATE, 'priority', 'validate'));
  });
});
