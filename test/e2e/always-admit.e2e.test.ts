// always-admit through a real kube-apiserver, beside the built-in AlwaysAdmit: writes admitted and
// stored as the built-in stores them, the apiserver's own metrics showing the webhook was called
// (and, in an outage, that it failed open), and a dry run that stores nothing.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, pod, remove } from './support/kube.js';
import { webhookCounter } from './support/metrics.js';
import { duringOutage, namespaceWithAccount, removeEverywhere } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysAdmit
    configuration: {}
`;
const VALIDATE = 'always-admit.validate.serverless-admission.io';
const CALLS = 'apiserver_admission_webhook_admission_duration_seconds_count';
const FAILED_OPEN = 'apiserver_admission_webhook_fail_open_count';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'apps' },
  data: { k: 'v' },
});

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({ controllerManager: false, enableAdmissionPlugins: ['AlwaysAdmit'] }),
  ]);
  both = [webhooks.cluster, builtin];
  await Promise.all(both.map((c) => namespaceWithAccount(c, 'apps')));
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);

describe('always-admit', () => {
  it('admits creates and deletes through the webhook, storing what the built-in stores', async () => {
    const p = pod('apps', 'p');
    const cm = configMap('settings');
    onTestFinished(() => removeEverywhere(both, [p, cm]));
    const before = await webhookCounter(webhooks.cluster, CALLS, VALIDATE);
    for (const object of [p, cm]) {
      const [webhook, reference] = await onBoth((c) => create(c, object));
      expect(webhook.status, webhook.message).toBe(201);
      expect(reference.status, reference.message).toBe(201);
      expect(admittedShape(await get(webhooks.cluster, object))).toEqual(admittedShape(await get(builtin, object)));
    }
    const [webhookDelete, builtinDelete] = await onBoth((c) => remove(c, cm));
    expect(webhookDelete.status, webhookDelete.message).toBe(200);
    expect(builtinDelete.status, builtinDelete.message).toBe(200);
    // Two creates and a delete, each judged by the webhook.
    expect((await webhookCounter(webhooks.cluster, CALLS, VALIDATE)) - before).toBeGreaterThanOrEqual(3);
  });

  it('admits a dry run and stores nothing', async () => {
    const dry = await create(webhooks.cluster, configMap('dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(await get(webhooks.cluster, configMap('dry'))).toBeUndefined();
  });

  it('during an outage the webhook (Ignore) fails open, as the apiserver counts', async () => {
    const cm = configMap('outage');
    onTestFinished(() => removeEverywhere([webhooks.cluster], [cm]));
    const before = await webhookCounter(webhooks.cluster, FAILED_OPEN, VALIDATE);
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, cm));
    expect(answer.status, answer.message).toBe(201);
    expect((await webhookCounter(webhooks.cluster, FAILED_OPEN, VALIDATE)) - before).toBe(1);
  });
});
