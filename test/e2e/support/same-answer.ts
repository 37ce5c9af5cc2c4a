// What the per-plugin end-to-end files compare between a webhook cluster and a built-in one: a
// refusal's status, reason and text (the webhook's without the apiserver's prefix), an outage
// of the webhook server, and removing what a test made on both control planes.
import { expect } from 'vitest';
import type { ControlPlane } from './control-plane.js';
import type { Answer, KubeObject } from './kube.js';
import { objectPath, webhookDenial } from './kube.js';
import type { WebhookCluster } from './webhook-cluster.js';

/**
 * The webhook refused as the built-in refused: the same status code and the same text after the
 * apiserver's `admission webhook "<name>" denied the request: ` prefix; `webhook` names the refuser.
 */
export function expectSameRefusal(webhook: Answer, builtin: Answer, name: string): void {
  expect(builtin.status, builtin.message).toBeGreaterThanOrEqual(400);
  expect(webhook.status, webhook.message).toBe(builtin.status);
  const denial = webhookDenial(webhook.message);
  expect(denial, webhook.message).toBeDefined();
  expect(denial!.webhook).toBe(name);
  expect(denial!.message).toBe(builtin.message);
}

/** The whole message an outage of a Fail webhook gives: the apiserver could not connect. */
export function failedCallingWebhook(name: string, plugin: string, phase: string): RegExp {
  const escaped = name.replace(/\./g, '\\.');
  return new RegExp(
    `^Internal error occurred: failed calling webhook "${escaped}": failed to call webhook: Post ` +
      `"https://127\\.0\\.0\\.1:\\d+/${plugin}/${phase}\\?timeout=\\d+s": dial tcp 127\\.0\\.0\\.1:\\d+: ` +
      'connect: connection refused$',
  );
}

/** Runs `during` with the webhook server stopped, and starts it again whatever happens. */
export async function duringOutage<T>(webhooks: WebhookCluster, during: () => Promise<T>): Promise<T> {
  await webhooks.stopServer();
  try {
    return await during();
  } finally {
    await webhooks.startServer();
  }
}

/** Deletes the objects at once (pods without grace) on every control plane; missing ones are fine. */
export async function removeEverywhere(clusters: readonly ControlPlane[], objects: readonly KubeObject[]) {
  await Promise.all(
    clusters.flatMap((cluster) =>
      objects.map((object) => cluster.request('DELETE', `${objectPath(object)}?gracePeriodSeconds=0`)),
    ),
  );
}

/**
 * A namespace and its `default` ServiceAccount, made here: for control planes started without a
 * controller-manager (the ServiceAccount admission plugin refuses pods without it); with one, its
 * token controller may have made it first.
 */
export async function namespaceWithAccount(
  cluster: ControlPlane,
  name: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<void> {
  const namespace = await cluster.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, ...metadata },
  });
  if (namespace.status !== 201) throw new Error(`namespace ${name}: ${namespace.status} ${namespace.body}`);
  const account = await cluster.request('POST', `/api/v1/namespaces/${name}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'default', namespace: name },
  });
  if (account.status !== 201 && account.status !== 409)
    throw new Error(`serviceaccount ${name}/default: ${account.status} ${account.body}`);
}
