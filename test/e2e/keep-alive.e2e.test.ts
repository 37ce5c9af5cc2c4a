// Idle keep-alive as the apiserver's Go client uses it: it keeps an idle connection to a webhook
// host for 90 s and does not retry a POST on a connection the server closed under it. A server
// that drops idle connections sooner makes some admission call fail with "connection reset by
// peer" (a refusal under failurePolicy Fail). The local server outlasts Go's pool, so a webhook
// call after 95 s of silence goes through on the connection the apiserver kept.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, createNamespace, pod } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const GO_IDLE_CONNECTION_TIMEOUT_S = 90;

let webhooks: WebhookCluster;
beforeAll(async () => {
  webhooks = await startWebhookCluster({
    admissionConfiguration:
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  - name: AlwaysPullImages\n',
  });
  await createNamespace(webhooks.cluster, 'idle');
});
afterAll(() => webhooks?.stop());

/** The apiserver's count of failed calls to the webhooks (connection errors among them). */
async function callingErrors(): Promise<number> {
  const metrics = (await webhooks.cluster.request('GET', '/metrics')).body;
  return metrics
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('apiserver_admission_webhook_rejection_count{') && line.includes('calling_webhook_error'),
    )
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** The apiserver's established connections to the webhook server, by their client-side ports. */
function connectionsToServer(): string[] {
  const port = new URL(webhooks.serverUrl).port;
  const lines = execFileSync('ss', ['-Htn', 'state', 'established', `( dport = :${port} )`], { encoding: 'utf8' });
  return lines
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/)[2])
    .sort();
}

describe('keep-alive', () => {
  it(`answers on a connection left idle for longer than Go's ${GO_IDLE_CONNECTION_TIMEOUT_S} s`, async () => {
    const first = await create(webhooks.cluster, pod('idle', 'before'));
    expect(first.status, first.message).toBe(201);
    const kept = connectionsToServer();
    expect(kept.length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, (GO_IDLE_CONNECTION_TIMEOUT_S - 5) * 1000));
    // Still open near the end of Go's idle window: the server never closes first.
    expect(connectionsToServer()).toEqual(kept);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    for (const name of ['after-1', 'after-2', 'after-3']) {
      const answer = await create(webhooks.cluster, pod('idle', name));
      expect(answer.status, answer.message).toBe(201);
    }
    expect(await callingErrors()).toBe(0);
  }, 240_000);
});
