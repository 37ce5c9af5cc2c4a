// namespace-lifecycle through a real kube-apiserver (its own NamespaceLifecycle disabled, so the
// webhook alone decides), beside the built-in NamespaceLifecycle (on by default). Neither control
// plane runs a controller-manager, so a deleted namespace stays Terminating (its `kubernetes`
// finalizer is never removed): new content there is refused, as is deleting default or
// kube-system; a dry-run deletion changes nothing; the webhook fails open in an outage.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { create, get, pod, remove, webhookDenial } from './support/kube.js';
import { duringOutage, expectSameRefusal, namespaceWithAccount, removeEverywhere } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: NamespaceLifecycle
`;
const VALIDATE = 'namespace-lifecycle.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const configMap = (ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { k: 'v' },
});

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['NamespaceLifecycle'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created and deleted once the webhooks are in place: the plugin learns namespaces from its
  // learning webhook. Without a namespace controller a deleted namespace stays Terminating.
  await Promise.all(
    both.map(async (c) => {
      await Promise.all([namespaceWithAccount(c, 'doomed'), namespaceWithAccount(c, 'kept')]);
      const deleted = await remove(c, namespace('doomed'));
      if (deleted.status !== 200) throw new Error(`delete namespace doomed: ${deleted.status} ${deleted.message}`);
    }),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);

describe('namespace-lifecycle', () => {
  it('refuses a pod in a terminating namespace with the built-in message, and stores nothing', async () => {
    const phases = await onBoth(async (c) => (await get(c, namespace('doomed')))?.status);
    expect(phases).toEqual([{ phase: 'Terminating' }, { phase: 'Terminating' }]);
    const p = pod('doomed', 'late');
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe(
      'pods "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, VALIDATE);
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  for (const name of ['default', 'kube-system']) {
    it(`refuses deleting ${name} with the built-in message`, async () => {
      const [webhook, reference] = await onBoth((c) => remove(c, namespace(name)));
      expect(reference.message).toBe(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
      expectSameRefusal(webhook, reference, VALIDATE);
      expect((await get(webhooks.cluster, namespace(name)))?.status).toEqual({ phase: 'Active' });
    });
  }

  it('refuses a dry-run create in the terminating namespace, and a dry-run deletion changes nothing', async () => {
    const [webhook, reference] = await onBoth((c) => create(c, configMap('doomed', 'dry'), { dryRun: true }));
    expect(reference.message).toBe(
      'configmaps "dry" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );
    expectSameRefusal(webhook, reference, VALIDATE);
    // A dry-run deletion of `kept` is admitted; the learning webhook records nothing of it, so
    // content is still admitted there.
    const dryDelete = await remove(webhooks.cluster, namespace('kept'), { dryRun: true });
    expect(dryDelete.status, dryDelete.message).toBe(200);
    expect((await get(webhooks.cluster, namespace('kept')))?.status).toEqual({ phase: 'Active' });
    const cm = configMap('kept', 'after-dry-run');
    onTestFinished(() => removeEverywhere(both, [cm]));
    const created = await create(webhooks.cluster, cm);
    expect(created.status, created.message).toBe(201);
  });

  it('during an outage the webhook (Ignore) is skipped: content in the terminating namespace is stored', async () => {
    const cm = configMap('doomed', 'outage');
    onTestFinished(() => removeEverywhere([webhooks.cluster], [cm]));
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, cm));
    expect(answer.status, answer.message).toBe(201);
    const after = await create(webhooks.cluster, configMap('doomed', 'after'));
    expect(after.status).toBe(403);
    expect(webhookDenial(after.message)?.webhook).toBe(VALIDATE);
  });
});
