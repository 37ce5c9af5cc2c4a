// limit-pod-hard-anti-affinity-topology through a real kube-apiserver, beside the built-in
// LimitPodHardAntiAffinityTopology: a required pod anti-affinity on kubernetes.io/hostname admitted,
// one on a zone refused with the built-in's text, a dry run, and an outage (the webhook fails closed).
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
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
  - name: LimitPodHardAntiAffinityTopology
`;
const VALIDATE = 'limit-pod-hard-anti-affinity-topology.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({ controllerManager: false, enableAdmissionPlugins: ['LimitPodHardAntiAffinityTopology'] }),
  ]);
  both = [webhooks.cluster, builtin];
  await Promise.all(both.map((c) => namespaceWithAccount(c, 'apps')));
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const spread = (name: string, topologyKey: string) =>
  pod('apps', name, {
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: 'web' } }, topologyKey },
        ],
      },
    },
  });

describe('limit-pod-hard-anti-affinity-topology', () => {
  it('admits a required anti-affinity on kubernetes.io/hostname, as the built-in does', async () => {
    const p = spread('per-host', 'kubernetes.io/hostname');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(admittedShape(await get(webhooks.cluster, p))).toEqual(admittedShape(await get(builtin, p)));
  });

  it("refuses a required anti-affinity on any other key with the built-in's message", async () => {
    const p = spread('per-zone', 'topology.kubernetes.io/zone');
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe(
      'pods "per-zone" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed',
    );
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, VALIDATE);
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('refuses a dry run alike and stores nothing of an admitted one', async () => {
    const [webhook, reference] = await onBoth((c) =>
      create(c, spread('dry', 'topology.kubernetes.io/zone'), { dryRun: true }),
    );
    expectSameRefusal(webhook, reference, VALIDATE);
    const admitted = await create(webhooks.cluster, spread('dry', 'kubernetes.io/hostname'), { dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(await get(webhooks.cluster, spread('dry', 'kubernetes.io/hostname'))).toBeUndefined();
  });

  it('during an outage the webhook (Fail) refuses', async () => {
    const answer = await duringOutage(webhooks, () =>
      create(webhooks.cluster, spread('outage', 'kubernetes.io/hostname')),
    );
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'limit-pod-hard-anti-affinity-topology', 'validate'));
  });
});
