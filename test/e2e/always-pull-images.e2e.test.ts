// always-pull-images through a real kube-apiserver: the webhooks `npm run emit` writes, applied
// unchanged (mTLS and capability URLs), against the built-in AlwaysPullImages on a second
// apiserver: the same stored pods, dry runs that store nothing, and each failurePolicy in an outage.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import { admittedShape, create, createNamespace, get, pod } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysPullImages
`;

let mtls: WebhookCluster;
let capability: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [mtls, capability, builtin] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG }),
    startWebhookCluster({ admissionConfiguration: CONFIG, auth: 'url-secret' }),
    startControlPlane({ enableAdmissionPlugins: ['AlwaysPullImages'] }),
  ]);
  await Promise.all([mtls.cluster, capability.cluster, builtin].map((c) => createNamespace(c, 'team-a')));
});
afterAll(async () => {
  await Promise.all([mtls?.stop(), capability?.stop(), builtin?.stop()]);
});

const withPolicies = pod('team-a', 'p', {
  initContainers: [{ name: 'init', image: 'registry.example/init:1', imagePullPolicy: 'IfNotPresent' }],
  containers: [
    { name: 'c', image: 'registry.example/app:1', imagePullPolicy: 'Never' },
    { name: 'd', image: 'registry.example/app:2' },
  ],
});

describe('always-pull-images', () => {
  for (const [mode, of] of [
    ['mTLS', () => mtls],
    ['capability URLs', () => capability],
  ] as const) {
    it(`stores every container with imagePullPolicy Always, as the built-in does (${mode})`, async () => {
      const { cluster } = of();
      const [webhook, reference] = await Promise.all([create(cluster, withPolicies), create(builtin, withPolicies)]);
      onTestFinished(() =>
        Promise.all(
          [cluster, builtin].map((c) => c.request('DELETE', '/api/v1/namespaces/team-a/pods/p?gracePeriodSeconds=0')),
        ).then(() => {}),
      );
      expect(webhook.status, webhook.message).toBe(201);
      expect(reference.status, reference.message).toBe(201);
      const stored = await get(cluster, withPolicies);
      const images = (o: typeof stored) =>
        [
          ...(o!.spec as { initContainers: object[]; containers: object[] }).initContainers,
          ...(o!.spec as { containers: object[] }).containers,
        ].map((c) => (c as { imagePullPolicy: string }).imagePullPolicy);
      expect(images(stored)).toEqual(['Always', 'Always', 'Always']);
      expect(admittedShape(stored)).toEqual(admittedShape(await get(builtin, withPolicies)));
    });
  }

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(mtls.cluster, pod('team-a', 'dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect((dry.object!.spec as { containers: { imagePullPolicy: string }[] }).containers[0].imagePullPolicy).toBe(
      'Always',
    );
    expect(await get(mtls.cluster, pod('team-a', 'dry'))).toBeUndefined();
  });

  it('during an outage: the mutation is skipped (Ignore), and the validating twin (Fail) refuses', async () => {
    await capability.stopServer();
    try {
      const answer = await create(capability.cluster, pod('team-a', 'outage'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        /^Internal error occurred: failed calling webhook "always-pull-images\.validate\.serverless-admission\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/always-pull-images\/validate\?timeout=\d+s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
    } finally {
      await capability.startServer();
    }
    const after = await create(capability.cluster, pod('team-a', 'after'));
    expect(after.status, after.message).toBe(201);
  });
});
