// pod-toleration-restriction through a real kube-apiserver, beside the built-in
// PodTolerationRestriction configured with the same upstream Configuration: default tolerations
// merged into a pod, a toleration outside the whitelist refused with the built-in's text, a
// namespace's own annotations, a dry run, and an outage.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { admittedShape, create, get, pod, webhookDenial } from './support/kube.js';
import { duringOutage, failedCallingWebhook, namespaceWithAccount, removeEverywhere } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodTolerationRestriction
    configuration:
      apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
      kind: Configuration
      default:
        - key: dedicated
          operator: Equal
          value: shared
          effect: NoSchedule
      whitelist:
        - key: dedicated
          operator: Exists
        - key: node.kubernetes.io/not-ready
          operator: Exists
          effect: NoExecute
        - key: node.kubernetes.io/unreachable
          operator: Exists
          effect: NoExecute
`;
const MUTATE = 'pod-toleration-restriction.mutate.serverless-admission.io';
const VALIDATE = 'pod-toleration-restriction.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({
      enableAdmissionPlugins: ['PodTolerationRestriction'],
      admissionConfiguration: CONFIG,
      controllerManager: false,
    }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns namespaces from its learning webhook.
  await Promise.all(
    both.flatMap((c) => [
      namespaceWithAccount(c, 'shared'),
      namespaceWithAccount(c, 'gpu', {
        annotations: {
          'scheduler.alpha.kubernetes.io/defaultTolerations':
            '[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}]',
          'scheduler.alpha.kubernetes.io/tolerationsWhitelist': JSON.stringify([
            { key: 'gpu', operator: 'Exists' },
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
            { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
          ]),
        },
      }),
    ]),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const tolerationsOf = (o: KubeObject | undefined) => (o!.spec as { tolerations?: { key: string }[] }).tolerations;

/**
 * Upstream refuses with an untyped error, which the apiserver answers as a 500 without a reason;
 * the webhook refuses with 403 Forbidden and the same text (docs/design/e2e-exceptions.md).
 */
function expectUntypedRefusal(webhook: Answer, reference: Answer, message: string) {
  expect([reference.status, reference.reason, reference.message]).toEqual([500, undefined, message]);
  expect([webhook.status, webhook.reason]).toEqual([403, 'Forbidden']);
  expect(webhookDenial(webhook.message)).toEqual({ webhook: MUTATE, message });
}

describe('pod-toleration-restriction', () => {
  it('merges the default tolerations into a pod, as the built-in does', async () => {
    const p = pod('shared', 'merged');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    expect(tolerationsOf(stored)!.map((t) => t.key)).toEqual([
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
      'dedicated',
    ]);
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));
  });

  it("merges a namespace's own default tolerations and refuses what its own whitelist leaves out", async () => {
    const p = pod('gpu', 'own');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    const stored = await get(webhooks.cluster, p);
    expect(tolerationsOf(stored)!.map((t) => t.key)).toContain('gpu');
    expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, p)));

    const outside = pod('gpu', 'outside', { tolerations: [{ key: 'dedicated', operator: 'Exists' }] });
    const [webhookOutside, builtinOutside] = await onBoth((c) => create(c, outside));
    expectUntypedRefusal(
      webhookOutside,
      builtinOutside,
      'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
    );
  });

  it("refuses a toleration outside the whitelist with the built-in's message", async () => {
    const p = pod('shared', 'outside', {
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
    });
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expectUntypedRefusal(
      webhook,
      reference,
      'pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist',
    );
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('shows the merged tolerations on a dry run and stores nothing', async () => {
    const p = pod('shared', 'dry');
    const [webhook, reference] = await onBoth((c) => create(c, p, { dryRun: true }));
    expect(webhook.status, webhook.message).toBe(201);
    expect(tolerationsOf(webhook.object)).toEqual(tolerationsOf(reference.object));
    expect(tolerationsOf(webhook.object)!.map((t) => t.key)).toContain('dedicated');
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it('during an outage the merge is skipped (Ignore) and the validating webhook (Fail) refuses', async () => {
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, pod('shared', 'outage')));
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'pod-toleration-restriction', 'validate'));
  });
});
