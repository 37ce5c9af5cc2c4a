// always-pull-images natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy that
// `emit --native` compiles, applied to a real apiserver, store the same pods as the webhooks do on
// another, and the apiserver type-checks them without a warning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from './support/kube.js';
import { create, createNamespace, eventually, pod } from './support/kube.js';
import type { NativeCluster } from './support/native.js';
import { expectSameAnswer, startNativeCluster, typeCheckingWarnings } from './support/native.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysPullImages
`;

let webhooks: WebhookCluster;
let native: NativeCluster;
beforeAll(async () => {
  [webhooks, native] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG }),
    startNativeCluster(CONFIG),
  ]);
  await Promise.all([webhooks.cluster, native.cluster].map((c) => createNamespace(c, 'team-a')));
  // The policies are in force once the apiserver's informer has them.
  await eventually('the mutating policy is in force', async () => {
    const answer = await create(native.cluster, pod('team-a', 'probe'), { dryRun: true });
    const policy = (answer.object?.spec as { containers: { imagePullPolicy: string }[] } | undefined)?.containers[0]
      .imagePullPolicy;
    return policy === 'Always' ? true : undefined;
  });
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), native?.stop()]);
});

const cases: { name: string; object: KubeObject }[] = [
  { name: 'a pod without a policy', object: pod('team-a', 'plain') },
  {
    name: 'every kind of container with IfNotPresent and Never',
    object: pod('team-a', 'all', {
      initContainers: [{ name: 'i', image: 'registry.example/init:1', imagePullPolicy: 'IfNotPresent' }],
      containers: [
        { name: 'c', image: 'registry.example/app:1', imagePullPolicy: 'Never' },
        { name: 'd', image: 'registry.example/app:2', imagePullPolicy: 'Always' },
      ],
    }),
  },
];

describe('always-pull-images (native)', () => {
  it('is type-checked without a warning', () => {
    expect(native.objects.map((o) => o.kind).sort()).toEqual([
      'MutatingAdmissionPolicy',
      'MutatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    expect(typeCheckingWarnings(native)).toEqual([]);
  });

  for (const { name, object } of cases) {
    it(`stores what the webhooks store: ${name}`, async () => {
      const [webhook, policy] = await Promise.all([create(webhooks.cluster, object), create(native.cluster, object)]);
      expect(webhook.status, webhook.message).toBe(201);
      expectSameAnswer(webhook, policy);
    });

    it(`answers a dry run as the webhooks do: ${name}`, async () => {
      const dry = { ...object, metadata: { ...object.metadata, name: `${object.metadata.name}-dry` } };
      const [webhook, policy] = await Promise.all([
        create(webhooks.cluster, dry, { dryRun: true }),
        create(native.cluster, dry, { dryRun: true }),
      ]);
      expectSameAnswer(webhook, policy);
    });
  }
});
