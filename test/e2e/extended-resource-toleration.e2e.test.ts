// extended-resource-toleration through a real kube-apiserver, beside the built-in
// ExtendedResourceToleration: a pod requesting an extended resource gets the toleration of the
// taint that nodes with that resource carry (the plugin reads only the pod's requests, so no Node
// is needed), a pod without one is left alone, a dry run, and an outage (both webhooks fail open).
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
  - name: ExtendedResourceToleration
`;

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({ controllerManager: false, enableAdmissionPlugins: ['ExtendedResourceToleration'] }),
  ]);
  both = [webhooks.cluster, builtin];
  await Promise.all(both.map((c) => namespaceWithAccount(c, 'apps')));
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const tolerationsOf = (o: KubeObject | undefined) => (o!.spec as { tolerations?: object[] }).tolerations;
const gpuPod = (name: string) =>
  pod('apps', name, {
    containers: [
      { name: 'c', image: 'registry.example/app:1', resources: { limits: { 'example.com/gpu': '1' } } },
      { name: 'd', image: 'registry.example/app:1', resources: { limits: { 'example.com/fpga': '2' } } },
    ],
  });
const TOLERATIONS = [
  { key: 'example.com/fpga', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
];

describe('extended-resource-toleration', () => {
  it('adds a toleration per extended resource requested, as the built-in does', async () => {
    const p = gpuPod('gpu');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    // DefaultTolerationSeconds (built in, on in both) adds its two first.
    expect(tolerationsOf(stored)!.slice(2)).toEqual(TOLERATIONS);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it('leaves a pod without extended resources as the built-in does', async () => {
    const p = pod('apps', 'plain');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(admittedShape(await get(webhooks.cluster, p))).toEqual(admittedShape(await get(builtin, p)));
  });

  it('shows the tolerations on a dry run and stores nothing', async () => {
    const p = gpuPod('dry');
    const [webhook, reference] = await onBoth((c) => create(c, p, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect(tolerationsOf(webhook.object)!.slice(2)).toEqual(TOLERATIONS);
    expect(tolerationsOf(webhook.object)).toEqual(tolerationsOf(reference.object));
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('during an outage both webhooks (Ignore) are skipped: the pod is stored without the tolerations', async () => {
    const p = gpuPod('outage');
    onTestFinished(() => removeEverywhere(both, [p]));
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, p));
    expect(answer.status, answer.message).toBe(201);
    expect(tolerationsOf(answer.object)).toHaveLength(2);
  });
});
