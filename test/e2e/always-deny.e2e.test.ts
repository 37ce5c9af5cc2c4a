// always-deny through a real kube-apiserver. The built-in AlwaysDeny cannot be set beside it: a
// v1.36 kube-apiserver with it enabled refuses its own bootstrap writes and exits, which the first
// test shows, with the built-in's refusal in the apiserver's last words. The webhook refuses a
// namespaced write with the same text, and a dry run alike; it does not see cluster-scoped objects
// or kube-system (docs/design/e2e-exceptions.md); in an outage it fails closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { create, get, webhookDenial } from './support/kube.js';
import { duringOutage, failedCallingWebhook } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysDeny
    configuration: {}
`;
const VALIDATE = 'always-deny.validate.serverless-admission.io';

let webhooks: WebhookCluster;

const configMap = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { k: 'v' },
});
const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

beforeAll(async () => {
  webhooks = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
});
afterAll(async () => {
  await webhooks?.stop();
});

describe('always-deny', () => {
  it('cannot run built in: the apiserver refuses its own system PriorityClasses and exits', async () => {
    await expect(
      startControlPlane({ controllerManager: false, enableAdmissionPlugins: ['AlwaysDeny'] }),
    ).rejects.toThrow(
      /PostStartHook "scheduling\/bootstrap-system-priority-classes" failed: unable to add default system priority classes: priorityclasses\.scheduling\.k8s\.io "system-[a-z-]+-critical" is forbidden: admission control is denying all modifications/,
    );
  });

  it("refuses a namespaced write with the built-in's text, 403 Forbidden", async () => {
    const cm = configMap('default', 'settings');
    const answer = await create(webhooks.cluster, cm);
    expect([answer.status, answer.reason]).toEqual([403, 'Forbidden']);
    expect(webhookDenial(answer.message)).toEqual({
      webhook: VALIDATE,
      message: 'configmaps "settings" is forbidden: admission control is denying all modifications',
    });
    expect(await get(webhooks.cluster, cm)).toBeUndefined();
  });

  it('refuses a dry run alike', async () => {
    const answer = await create(webhooks.cluster, configMap('default', 'dry'), { dryRun: true });
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)).toEqual({
      webhook: VALIDATE,
      message: 'configmaps "dry" is forbidden: admission control is denying all modifications',
    });
  });

  it('does not see cluster-scoped objects or kube-system', async () => {
    for (const object of [namespace('team'), configMap('kube-system', 'settings')]) {
      const answer = await create(webhooks.cluster, object);
      expect(answer.status, answer.message).toBe(201);
    }
  });

  it('during an outage the webhook (Fail) refuses', async () => {
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, configMap('default', 'outage')));
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'always-deny', 'validate'));
  });
});
