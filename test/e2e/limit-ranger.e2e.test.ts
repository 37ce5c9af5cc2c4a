// limit-ranger through a real kube-apiserver (its own LimitRanger disabled, so the webhooks alone
// apply the LimitRange), beside the built-in LimitRanger (on by default): defaults set on a pod,
// a maximum refused with the built-in's text, a dry run, and an outage (both webhooks fail open).
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, pod } from './support/kube.js';
import { duringOutage, expectSameRefusal, namespaceWithAccount, removeEverywhere } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: LimitRanger
`;

const limitRange: KubeObject = {
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'cpu', namespace: 'limited' },
  spec: {
    limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, max: { cpu: '1' } }],
  },
};

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['LimitRanger'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns LimitRanges from its learning webhook.
  await Promise.all(
    both.map(async (c) => {
      await namespaceWithAccount(c, 'limited');
      const answer = await create(c, limitRange);
      if (answer.status !== 201) throw new Error(`LimitRange: ${answer.status} ${answer.message}`);
    }),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const resourcesOf = (o: KubeObject | undefined) =>
  (o!.spec as { containers: { resources: object }[] }).containers[0].resources;

describe('limit-ranger', () => {
  it("sets the LimitRange's default request and limit, and the annotation, as the built-in does", async () => {
    const p = pod('limited', 'defaulted');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    expect(resourcesOf(stored)).toEqual({ limits: { cpu: '500m' }, requests: { cpu: '100m' } });
    expect((stored!.metadata.annotations as Record<string, string>)['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu request for container c; cpu limit for container c',
    );
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it("refuses a container above the LimitRange's maximum with the built-in's message", async () => {
    const p = pod('limited', 'big', {
      containers: [{ name: 'c', image: 'registry.example/app:1', resources: { limits: { cpu: '2' } } }],
    });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe('pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, 'limit-ranger.validate.serverless-admission.io');
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('shows the defaults on a dry run and stores nothing', async () => {
    const p = pod('limited', 'dry');
    const [webhook, reference] = await onBoth((c) => create(c, p, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect(resourcesOf(webhook.object)).toEqual(resourcesOf(reference.object));
    expect(resourcesOf(webhook.object)).toEqual({ limits: { cpu: '500m' }, requests: { cpu: '100m' } });
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('during an outage both webhooks (Ignore) are skipped: the pod is stored without defaults', async () => {
    const p = pod('limited', 'outage');
    onTestFinished(() => removeEverywhere(both, [p]));
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, p));
    expect(answer.status, answer.message).toBe(201);
    expect(resourcesOf(answer.object)).toEqual({});
  });
});
