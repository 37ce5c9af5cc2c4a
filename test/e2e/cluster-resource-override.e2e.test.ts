// cluster-resource-override through a real kube-apiserver (OpenShift's plugin: this apiserver has
// no built-in to compare with), with config/examples/cluster-resource-override.yaml (CPU limit 200%
// of memory, requests 25% of the CPU and 50% of the memory limit): pods in opted-in namespaces get
// OpenShift's overridden resources, others keep theirs; a dry run, and the webhooks'
// failurePolicies (mutation Ignore, validation Fail) during an outage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling, namespaceWithServiceAccount } from './support/cluster-setup.js';
import type { KubeObject } from './support/kube.js';
import { create, get, pod } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = readFileSync(join(import.meta.dirname, '../../config/examples/cluster-resource-override.yaml'), 'utf8');
const OPT_IN = { 'clusterresourceoverrides.admission.autoscaling.openshift.io/enabled': 'true' };

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  // Created once the webhooks are in place, so the webhook learns which namespaces opted in.
  await Promise.all([
    namespaceWithServiceAccount(webhook.cluster, 'overridden', { labels: OPT_IN }),
    namespaceWithServiceAccount(webhook.cluster, 'opted-out', {
      labels: OPT_IN,
      annotations: { 'autoscaling.openshift.io/cluster-resource-override-enabled': 'false' },
    }),
    namespaceWithServiceAccount(webhook.cluster, 'plain'),
  ]);
});
afterAll(async () => {
  await webhook?.stop();
});

const sized = (namespace: string, name: string) =>
  pod(namespace, name, {
    containers: [{ name: 'c', image: 'registry.example/app:1', resources: { limits: { memory: '1Gi' } } }],
  });
const resources = (object: KubeObject | undefined) =>
  (object?.spec as { containers: { resources: unknown }[] } | undefined)?.containers[0].resources;
// What the apiserver stores for a memory limit alone: the request defaults to the limit.
const AS_WRITTEN = { limits: { memory: '1Gi' }, requests: { memory: '1Gi' } };
const OVERRIDDEN = { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '500m', memory: '512Mi' } };

describe('cluster-resource-override', () => {
  it.each([
    ['overrides the resources of a pod in an opted-in namespace', 'overridden', OVERRIDDEN],
    ['leaves a pod alone in a namespace that opted out by annotation', 'opted-out', AS_WRITTEN],
    ['leaves a pod alone in a namespace without the label', 'plain', AS_WRITTEN],
  ])('%s', async (_, namespace, expected) => {
    const object = sized(namespace, 'app');
    const answer = await create(webhook.cluster, object);
    expect(answer.status, answer.message).toBe(201);
    expect(resources(await get(webhook.cluster, object))).toEqual(expected);
  });

  it('mutates a dry run and stores nothing', async () => {
    const dry = await create(webhook.cluster, sized('overridden', 'dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(resources(dry.object)).toEqual(OVERRIDDEN);
    expect(await get(webhook.cluster, sized('overridden', 'dry'))).toBeUndefined();
  });

  it('during an outage the mutation is skipped (Ignore) and the validation refuses (Fail)', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, sized('overridden', 'outage'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling(
          'cluster-resource-override.validate.serverless-admission.io',
          '/cluster-resource-override/validate',
        ),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, sized('overridden', 'after'));
    expect(resources(after.object)).toEqual(OVERRIDDEN);
  });
});
