// pod-node-selector through a real kube-apiserver, beside the built-in PodNodeSelector configured
// with the same podNodeSelectorPluginConfig: the cluster default merged into a pod, a namespace's
// own selector conflicting with the pod's, a whitelist refusal, a dry run, and an outage.
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

const PLUGIN = `  - name: PodNodeSelector
    configuration:
      podNodeSelectorPluginConfig:
        clusterDefaultNodeSelector: "env=dev"
        team-a: "env=dev, infra=false"
`;
const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
${PLUGIN}`;
const VALIDATE = 'pod-node-selector.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({
      enableAdmissionPlugins: ['PodNodeSelector'],
      admissionConfiguration: CONFIG,
      controllerManager: false,
    }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns namespaces from its learning webhook.
  await Promise.all(
    both.flatMap((c) => [
      namespaceWithAccount(c, 'team-a'),
      namespaceWithAccount(c, 'team-b', {
        annotations: { 'scheduler.alpha.kubernetes.io/node-selector': 'env=prod' },
      }),
    ]),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);

describe('pod-node-selector', () => {
  it('merges the cluster default into a pod of a namespace without the annotation, as the built-in', async () => {
    const p = pod('team-a', 'merged', { nodeSelector: { infra: 'false' } });
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    expect((stored!.spec as { nodeSelector: object }).nodeSelector).toEqual({ env: 'dev', infra: 'false' });
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it("refuses a pod whose selector conflicts with its namespace's annotation, with the built-in's message", async () => {
    const p = pod('team-b', 'conflict', { nodeSelector: { env: 'dev' } });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe(
      'pods "conflict" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, 'pod-node-selector.mutate.serverless-admission.io');
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it("refuses a pod outside its namespace's whitelist, with the built-in's message", async () => {
    const p = pod('team-a', 'outside', { nodeSelector: { infra: 'true' } });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe(
      'pods "outside" is forbidden: pod node label selector labels conflict with its namespace whitelist',
    );
    // Upstream's Admit ends by running Validate, so the mutating webhook already refuses.
    expectSameRefusal(webhook, reference, 'pod-node-selector.mutate.serverless-admission.io');
  });

  it('shows the merged selector on a dry run and stores nothing', async () => {
    const p = pod('team-a', 'dry');
    const [webhook, reference] = await onBoth((c) => create(c, p, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect((webhook.object!.spec as { nodeSelector: object }).nodeSelector).toEqual({ env: 'dev' });
    expect((reference.object!.spec as { nodeSelector: object }).nodeSelector).toEqual({ env: 'dev' });
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('during an outage: the merge is skipped (Ignore) and the validating webhook (Fail) refuses', async () => {
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, pod('team-a', 'outage')));
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'pod-node-selector', 'validate'));
    const p = pod('team-a', 'after');
    onTestFinished(() => removeEverywhere(both, [p]));
    const after = await create(webhooks.cluster, p);
    expect(after.status, after.message).toBe(201);
    expect((after.object!.spec as { nodeSelector: object }).nodeSelector).toEqual({ env: 'dev' });
  });
});
