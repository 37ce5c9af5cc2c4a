// cluster-resource-quota through a real kube-apiserver (OpenShift's plugin: this apiserver has no
// built-in to compare with): a ClusterResourceQuota (its CRD served here as OpenShift serves the
// API) bounds the configmaps of every namespace its selector picks, across namespaces, with
// OpenShift's message; a dry run consumes nothing, a delete releases, and failurePolicy Fail
// refuses during an outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedCalling } from './support/cluster-setup.js';
import type { KubeObject } from './support/kube.js';
import { create, get, remove, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: quota.openshift.io/ClusterResourceQuota
`;

// OpenShift's API, as far as this test writes it: the webhook judges what the apiserver sends.
const CLUSTER_RESOURCE_QUOTA_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterresourcequotas.quota.openshift.io
spec:
  group: quota.openshift.io
  scope: Cluster
  names: { plural: clusterresourcequotas, singular: clusterresourcequota, kind: ClusterResourceQuota }
  versions:
  - name: v1
    served: true
    storage: true
    subresources: { status: {} }
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: { type: object, x-kubernetes-preserve-unknown-fields: true }
          status: { type: object, x-kubernetes-preserve-unknown-fields: true }
`;

let webhook: WebhookCluster;

beforeAll(async () => {
  webhook = await startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false } });
  const { cluster } = webhook;
  const crd = await cluster.kubectl(['apply', '-f', '-'], CLUSTER_RESOURCE_QUOTA_CRD);
  if (crd.code !== 0) throw new Error(`CRD: ${crd.stderr}`);
  await cluster.kubectl(['wait', '--for=condition=Established', 'crd/clusterresourcequotas.quota.openshift.io']);
  // Created once the webhooks are in place, so the webhook learns the quota and the namespaces.
  for (const [name, labels] of [
    ['blue-a', { team: 'blue' }],
    ['blue-b', { team: 'blue' }],
    ['red', { team: 'red' }],
  ] as const) {
    const answer = await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    if (answer.status !== 201) throw new Error(`namespace ${name}: ${answer.message}`);
  }
  const quota = await cluster.kubectl(
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'blue' },
      spec: { selector: { labels: { matchLabels: { team: 'blue' } } }, quota: { hard: { configmaps: '2' } } },
    }),
  );
  if (quota.code !== 0) throw new Error(`ClusterResourceQuota: ${quota.stderr}`);
});
afterAll(async () => {
  await webhook?.stop();
});

const configMap = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { key: 'value' },
});

describe('cluster-resource-quota', () => {
  it('counts across the namespaces it selects: a dry run consumes nothing, the third create is refused', async () => {
    const { cluster } = webhook;
    expect((await create(cluster, configMap('blue-a', 'one'))).status).toBe(201);
    const dry = await create(cluster, configMap('blue-b', 'dry'), { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(await get(cluster, configMap('blue-b', 'dry'))).toBeUndefined();
    // The dry run reserved nothing: the quota's second configmap is still free.
    expect((await create(cluster, configMap('blue-b', 'two'))).status).toBe(201);

    const over = await create(cluster, configMap('blue-a', 'three'));
    expect(over.status).toBe(403);
    expect(webhookDenial(over.message)).toEqual({
      webhook: 'cluster-resource-quota.validate.serverless-admission.io',
      message:
        'configmaps "three" is forbidden: exceeded quota: blue, requested: configmaps=1, used: configmaps=2, ' +
        'limited: configmaps=2',
    });
    const overDry = await create(cluster, configMap('blue-b', 'three'), { dryRun: true });
    expect(overDry.status).toBe(403);
    expect(await get(cluster, configMap('blue-a', 'three'))).toBeUndefined();
  });

  it('leaves namespaces it does not select alone', async () => {
    for (const name of ['r1', 'r2', 'r3']) {
      const answer = await create(webhook.cluster, configMap('red', name));
      expect(answer.status, answer.message).toBe(201);
    }
  });

  it('releases what a delete frees', async () => {
    const gone = await remove(webhook.cluster, configMap('blue-a', 'one'));
    expect(gone.status, gone.message).toBe(200);
    const answer = await create(webhook.cluster, configMap('blue-a', 'again'));
    expect(answer.status, answer.message).toBe(201);
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, configMap('red', 'outage'));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        failedCalling('cluster-resource-quota.validate.serverless-admission.io', '/cluster-resource-quota/validate'),
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, configMap('red', 'after'));
    expect(after.status, after.message).toBe(201);
  });
});
