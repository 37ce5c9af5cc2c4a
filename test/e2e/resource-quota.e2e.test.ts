// resource-quota through a real kube-apiserver (its own ResourceQuota plugin disabled, so the webhook
// alone counts), beside the built-in ResourceQuota with the same ResourceQuotaConfiguration and a
// controller-manager to fill quotas' status: a `pods: 2` quota admits 2 of 3 concurrent creates,
// a limited resource needs a covering quota, a dry run consumes nothing, and an outage refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, eventually, get, pod, remove, webhookDenial } from './support/kube.js';
import { duringOutage, expectSameRefusal, failedCallingWebhook, namespaceWithAccount } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ResourceQuota
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: ResourceQuotaConfiguration
      limitedResources:
        - resource: pods
          matchContains: ["requests.cpu"]
`;
const VALIDATE = 'resource-quota.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;

const quota = (namespace: string, pods: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: `pods-${pods}`, namespace },
  spec: { hard: { pods } },
});

/** A quota, created once the webhooks are in place; on the built-in, waited for until the controller sets its status. */
async function quotaIn(cluster: ControlPlane, namespace: string, pods: string, waitForStatus: boolean) {
  await namespaceWithAccount(cluster, namespace);
  const answer = await create(cluster, quota(namespace, pods));
  if (answer.status !== 201) throw new Error(`quota in ${namespace}: ${answer.status} ${answer.message}`);
  if (waitForStatus)
    await eventually(`quota in ${namespace} has its status`, async () => {
      const stored = await get(cluster, quota(namespace, pods));
      return (stored?.status as { hard?: { pods?: string } } | undefined)?.hard?.pods === pods ? true : undefined;
    });
}

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['ResourceQuota'] },
    }),
    startControlPlane({ admissionConfiguration: CONFIG }),
  ]);
  // The built-in refuses pods until the quota controller has set the quota's status.
  const setUp = (cluster: ControlPlane, waitForStatus: boolean) => [
    quotaIn(cluster, 'burst', '2', waitForStatus),
    quotaIn(cluster, 'dry', '1', waitForStatus),
    namespaceWithAccount(cluster, 'uncovered'),
  ];
  await Promise.all([...setUp(webhooks.cluster, false), ...setUp(builtin, true)]);
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const exceeded = (name: string, used: number, limit: number) =>
  `pods "${name}" is forbidden: exceeded quota: pods-${limit}, requested: pods=1, used: pods=${used}, limited: pods=${limit}`;

/** Three pods created at once; the answers by pod name. */
async function burst(cluster: ControlPlane): Promise<Map<string, Answer>> {
  const names = ['p1', 'p2', 'p3'];
  const answers = await Promise.all(names.map((name) => create(cluster, pod('burst', name))));
  return new Map(names.map((name, i) => [name, answers[i]]));
}

describe('resource-quota', () => {
  it('admits 2 of 3 concurrent creates under `pods: 2` and refuses the third as the built-in does', async () => {
    const [webhook, reference] = await Promise.all([burst(webhooks.cluster), burst(builtin)]);
    for (const answers of [webhook, reference]) {
      const statuses = [...answers.values()].map((a) => a.status).sort();
      expect(statuses, JSON.stringify([...answers.values()].map((a) => a.message))).toEqual([201, 201, 403]);
    }
    const [refusedByWebhook] = [...webhook].find(([, a]) => a.status === 403)!;
    const [refusedByBuiltin, builtinRefusal] = [...reference].find(([, a]) => a.status === 403)!;
    expect(builtinRefusal.message).toBe(exceeded(refusedByBuiltin, 2, 2));
    expect(builtinRefusal.reason).toBe('Forbidden');
    const webhookRefusal = webhook.get(refusedByWebhook)!;
    expect(webhookDenial(webhookRefusal.message)).toEqual({
      webhook: VALIDATE,
      message: exceeded(refusedByWebhook, 2, 2),
    });
    expect(await get(webhooks.cluster, pod('burst', refusedByWebhook))).toBeUndefined();
  });

  it('frees a charge when an admitted pod is deleted: the next create fits again', async () => {
    // The burst above left two pods in each cluster; p4 is refused until one of them goes.
    const admitted = async (cluster: ControlPlane) => {
      const list = await cluster.request('GET', '/api/v1/namespaces/burst/pods');
      return list.json<{ items: KubeObject[] }>().items.map((p) => p.metadata.name!);
    };
    for (const cluster of [webhooks.cluster, builtin]) {
      const [first] = await admitted(cluster);
      const deleted = await remove(cluster, pod('burst', first));
      expect(deleted.status, deleted.message).toBe(200);
    }
    // The webhook's charge is freed by the DELETE itself, through its learning webhook.
    const webhook = await create(webhooks.cluster, pod('burst', 'p4'));
    expect(webhook.status, webhook.message).toBe(201);
    // The built-in admits again once the quota controller has recounted status.used.
    await eventually('the built-in admits p4', async () => {
      const answer = await create(builtin, pod('burst', 'p4'));
      return answer.status === 201 ? true : undefined;
    });
  });

  it('refuses a pod consuming a limited resource in a namespace without a covering quota', async () => {
    const p = pod('uncovered', 'cpu', {
      containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '100m' } } }],
    });
    const [webhook, reference] = await Promise.all([create(webhooks.cluster, p), create(builtin, p)]);
    expect(reference.message).toBe('pods "cpu" is forbidden: insufficient quota to consume: requests.cpu');
    expectSameRefusal(webhook, reference, VALIDATE);
    // Without the limited resource the pod needs no quota.
    const plain = pod('uncovered', 'plain');
    const [webhookPlain, builtinPlain] = await Promise.all([create(webhooks.cluster, plain), create(builtin, plain)]);
    expect(webhookPlain.status, webhookPlain.message).toBe(201);
    expect(builtinPlain.status, builtinPlain.message).toBe(201);
  });

  it('admits a dry run without consuming the quota: the next real create fits, and the one after is refused', async () => {
    for (const cluster of [webhooks.cluster, builtin]) {
      const dry = await create(cluster, pod('dry', 'first'), { dryRun: true });
      expect(dry.status, dry.message).toBe(201);
      expect(await get(cluster, pod('dry', 'first'))).toBeUndefined();
      const real = await create(cluster, pod('dry', 'first'));
      expect(real.status, real.message).toBe(201);
    }
    const second = pod('dry', 'second');
    const [webhook, reference] = await Promise.all([
      create(webhooks.cluster, second, { dryRun: true }),
      create(builtin, second, { dryRun: true }),
    ]);
    expect(reference.message).toBe(exceeded('second', 1, 1));
    expectSameRefusal(webhook, reference, VALIDATE);
  });

  it('during an outage the validating webhook (Fail) refuses every counted create', async () => {
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, pod('uncovered', 'outage')));
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'resource-quota', 'validate'));
    const after = await create(webhooks.cluster, pod('uncovered', 'after'));
    expect(after.status, after.message).toBe(201);
  });
});
