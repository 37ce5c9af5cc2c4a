// event-rate-limit through a real kube-apiserver, beside the built-in EventRateLimit configured with
// the same upstream Configuration: Events created back to back until the namespace's bucket runs
// dry, refused as the built-in refuses (429, its text behind the webhook prefix); dry runs take no
// tokens; the webhook fails open in an outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, get } from './support/kube.js';
import { duringOutage, expectSameRefusal, namespaceWithAccount } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

// One token a second per namespace, three at most: creates sent back to back run out at once.
const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: EventRateLimit
    configuration:
      apiVersion: eventratelimit.admission.k8s.io/v1alpha1
      kind: Configuration
      limits:
        - type: Namespace
          qps: 1
          burst: 3
`;
const VALIDATE = 'event-rate-limit.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;

const event = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace },
  involvedObject: { kind: 'Pod', name: 'web', namespace },
  reason: 'Probe',
  message: 'probe',
});

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } }),
    startControlPlane({
      enableAdmissionPlugins: ['EventRateLimit'],
      admissionConfiguration: CONFIG,
      controllerManager: false,
    }),
  ]);
  await Promise.all(
    [webhooks.cluster, builtin].flatMap((c) => ['busy', 'dry', 'outage'].map((ns) => namespaceWithAccount(c, ns))),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

/** Creates Events until one is refused (a slow machine may see a token come back first). */
async function firstRefusal(cluster: ControlPlane, namespace: string): Promise<{ refused: Answer; name: string }> {
  for (let i = 0; i < 50; i++) {
    const answer = await create(cluster, event(namespace, `e-${i}`));
    if (answer.status !== 201) return { refused: answer, name: `e-${i}` };
  }
  throw new Error(`50 Events in a row were admitted in ${namespace}: the limit is not in force`);
}

describe('event-rate-limit', () => {
  it('refuses the Event that finds the bucket empty with 429 and the built-in text', async () => {
    const [webhook, reference] = await Promise.all([
      firstRefusal(webhooks.cluster, 'busy'),
      firstRefusal(builtin, 'busy'),
    ]);
    expect(reference.refused.status).toBe(429);
    expect(reference.refused.reason).toBe('TooManyRequests');
    expect(reference.refused.message).toBe('Too many requests: limit reached on type Namespace for key busy');
    expect(webhook.refused.reason).toBe('TooManyRequests');
    expectSameRefusal(webhook.refused, reference.refused, VALIDATE);
    expect(await get(webhooks.cluster, event('busy', webhook.name))).toBeUndefined();
  });

  it('admits dry runs without taking tokens: the bucket is still full afterwards', async () => {
    for (let i = 0; i < 6; i++) {
      const dry = await create(webhooks.cluster, event('dry', `dry-${i}`), { dryRun: true });
      expect(dry.status, dry.message).toBe(201);
      expect(await get(webhooks.cluster, event('dry', `dry-${i}`))).toBeUndefined();
    }
    // Had the six dry runs taken tokens, the bucket of three would be empty now.
    for (let i = 0; i < 3; i++) {
      const real = await create(webhooks.cluster, event('dry', `real-${i}`));
      expect(real.status, real.message).toBe(201);
    }
  });

  it('during an outage the webhook (Ignore) is skipped: Events beyond the limit are stored', async () => {
    const answers = await duringOutage(webhooks, async () => {
      const all: Answer[] = [];
      for (let i = 0; i < 6; i++) all.push(await create(webhooks.cluster, event('outage', `o-${i}`)));
      return all;
    });
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
  });
});
