// run-once-duration through a real kube-apiserver (OpenShift's plugin: this apiserver has no
// built-in to compare with), with config/examples/run-once-duration.yaml (a 3600 s limit): run-once
// pods get OpenShift's activeDeadlineSeconds, a project annotation overrides it, an unreadable one
// refuses; a dry run, and failurePolicy Ignore during an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling, namespaceWithServiceAccount } from './support/cluster-setup.js';
import type { KubeObject } from './support/kube.js';
import { create, get, pod, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(join(import.meta.dirname, '../../config/examples/run-once-duration.yaml'), 'utf8');
const OVERRIDE = 'openshift.io/active-deadline-seconds-override';

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  // Created once the webhooks are in place, so the webhook learns their annotations.
  await Promise.all([
    namespaceWithServiceAccount(webhook.cluster, 'batch'),
    namespaceWithServiceAccount(webhook.cluster, 'short', { annotations: { [OVERRIDE]: '600' } }),
    namespaceWithServiceAccount(webhook.cluster, 'broken', { annotations: { [OVERRIDE]: 'soon' } }),
  ]);
});
afterAll(async () => {
  await webhook?.stop();
});

const deadline = (object: KubeObject | undefined) =>
  (object?.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds;

describe('run-once-duration', () => {
  it.each([
    ['a run-once pod gets the configured limit', pod('batch', 'never', { restartPolicy: 'Never' }), 3600],
    ['an OnFailure pod gets it too', pod('batch', 'on-failure', { restartPolicy: 'OnFailure' }), 3600],
    [
      'a lower deadline of its own is kept',
      pod('batch', 'own', { restartPolicy: 'Never', activeDeadlineSeconds: 100 }),
      100,
    ],
    ['a long-running pod is left alone', pod('batch', 'always', { restartPolicy: 'Always' }), undefined],
    ['the project’s annotation overrides the limit', pod('short', 'project', { restartPolicy: 'Never' }), 600],
  ])('%s', async (_, object, expected) => {
    const answer = await create(webhook.cluster, object);
    expect(answer.status, answer.message).toBe(201);
    expect(deadline(await get(webhook.cluster, object))).toBe(expected);
  });

  it('refuses a run-once pod in a project whose limit does not parse, with OpenShift’s message', async () => {
    const object = pod('broken', 'p', { restartPolicy: 'Never' });
    const answer = await create(webhook.cluster, object);
    expect(answer.status).toBe(403);
    expect(webhookDenial(answer.message)?.message).toBe(
      'pods "p" is forbidden: cannot parse the ActiveDeadlineSeconds limit (soon) for project broken: ' +
        'strconv.ParseInt: parsing "soon": invalid syntax',
    );
    expect(await get(webhook.cluster, object)).toBeUndefined();
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, pod('batch', 'dry', { restartPolicy: 'Never' }), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(deadline(dry.object)).toBe(3600);
    expect(await get(webhook.cluster, pod('batch', 'dry'))).toBeUndefined();
  });

  it('during an outage refuses run-once pods (the capping twin fails closed) and admits the others', async () => {
    await webhook.stopServer();
    try {
      const runOnce = await create(webhook.cluster, pod('batch', 'outage', { restartPolicy: 'Never' }));
      expect(runOnce.status).toBe(500);
      expect(runOnce.message).toMatch(
        failedCalling('run-once-duration.validate.serverless-admission.io', '/run-once-duration/validate'),
      );
      // The twin's matchCondition leaves pods that are not run-once to the fail-open mutation.
      const service = await create(webhook.cluster, pod('batch', 'outage-always', { restartPolicy: 'Always' }));
      expect(service.status, service.message).toBe(201);
      expect(deadline(service.object)).toBeUndefined();
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, pod('batch', 'after', { restartPolicy: 'Never' }));
    expect(deadline(after.object)).toBe(3600);
  });
});
