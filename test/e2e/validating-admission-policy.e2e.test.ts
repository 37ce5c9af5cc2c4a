// validating-admission-policy through a real kube-apiserver: the Kubernetes page's demo and
// ReplicaLimit policies (config/examples/validating-admission-policy/) served by the webhook, against
// the same objects created natively on a second apiserver (its built-in ValidatingAdmissionPolicy,
// with a ReplicaLimit CRD for the params): the same decisions, status codes and messages.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, eventually, get, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const EXAMPLES = join(import.meta.dirname, '../../config/examples/validating-admission-policy');
const example = (name: string) => readFileSync(join(EXAMPLES, name), 'utf8');

// The params' kind, which a native policy needs the API to serve (the webhook reads them from its file).
const REPLICA_LIMIT_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: replicalimits.rules.example.com
spec:
  group: rules.example.com
  scope: Cluster
  names: { plural: replicalimits, singular: replicalimit, kind: ReplicaLimit }
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          maxReplicas: { type: integer }
`;

function deployment(namespace: string, name: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
      },
    },
  };
}

async function namespaces(cluster: ControlPlane): Promise<void> {
  for (const [name, labels] of [
    ['staging', { environment: 'test' }],
    ['prod', { environment: 'prod' }],
  ] as const) {
    const answer = await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    if (answer.status !== 201) throw new Error(`namespace ${name}: ${answer.message}`);
  }
}

async function applied(cluster: ControlPlane, manifest: string): Promise<void> {
  const answer = await cluster.kubectl(['apply', '-f', '-'], manifest);
  if (answer.code !== 0) throw new Error(`kubectl apply: ${answer.stderr}`);
}

let webhook: WebhookCluster;
let native: ControlPlane;

beforeAll(async () => {
  [webhook, native] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: example('admission.yaml'),
      files: { 'demo-policy.yaml': example('demo-policy.yaml'), 'replica-limit.yaml': example('replica-limit.yaml') },
      controlPlane: { controllerManager: false },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  await Promise.all([namespaces(webhook.cluster), namespaces(native)]);
  await applied(native, REPLICA_LIMIT_CRD);
  await native.kubectl(['wait', '--for=condition=Established', 'crd/replicalimits.rules.example.com']);
  await applied(native, example('demo-policy.yaml'));
  await applied(native, example('replica-limit.yaml'));
  // The apiserver compiles policies and bindings asynchronously: wait until all three bindings judge.
  await eventually('the native policies judge deployments', async () => {
    const [six, four, many] = await Promise.all([
      create(native, deployment('staging', 'probe-6', 6), { dryRun: true }),
      create(native, deployment('staging', 'probe-4', 4), { dryRun: true }),
      create(native, deployment('prod', 'probe-101', 101), { dryRun: true }),
    ]);
    return six.status !== 201 && four.status !== 201 && many.status !== 201 ? true : undefined;
  });
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), native?.stop()]);
});

describe('validating-admission-policy', () => {
  it.each([
    ['staging', 3],
    ['prod', 100],
  ] as const)(
    'admits a deployment within the limit in %s and stores it as the native policy does',
    async (namespace, replicas) => {
      const object = deployment(namespace, `within-${namespace}`, replicas);
      const [served, reference] = await Promise.all([create(webhook.cluster, object), create(native, object)]);
      expect(served.status, served.message).toBe(201);
      expect(reference.status, reference.message).toBe(201);
      expect(admittedShape(await get(webhook.cluster, object))).toEqual(admittedShape(await get(native, object)));
    },
  );

  it.each([
    [
      'the ReplicaLimit params of a test namespace (reason Invalid)',
      deployment('staging', 'four', 4),
      422,
      "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding " +
        "'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3",
    ],
    [
      'the cluster-wide ReplicaLimit elsewhere',
      deployment('prod', 'many', 101),
      422,
      "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding " +
        "'replicalimit-binding-nontest' denied request: object.spec.replicas must be no greater than 100",
    ],
  ])('refuses a deployment over %s, with the native message and code', async (_, object, code, message) => {
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(native, object)]);
    expect(reference.status).toBe(code);
    // A policy's reason sets the code; the text stays admission.NewForbidden's, as upstream's dispatcher leaves it.
    expect(reference.message).toBe(`deployments.apps "${object.metadata.name}" is forbidden: ${message}`);
    expect(served.status).toBe(code);
    expect(webhookDenial(served.message)).toEqual({
      webhook: 'validating-admission-policy.validate.serverless-admission.io',
      message: `deployments.apps "${object.metadata.name}" is forbidden: ${message}`,
    });
    expect(await get(webhook.cluster, object)).toBeUndefined();
  });

  it('refuses over both limits with the first policy’s denial; the native chain names either', async () => {
    const object = deployment('staging', 'six', 6);
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(native, object)]);
    const demo =
      'deployments.apps "six" is forbidden: ValidatingAdmissionPolicy \'demo-policy.example.com\' with binding ' +
      "'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5";
    const replicaLimit =
      'deployments.apps "six" is forbidden: ValidatingAdmissionPolicy \'replicalimit-policy.example.com\' with ' +
      "binding 'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3";
    // The apiserver orders its policies by iterating a Go map (policy_source.go), so which of two
    // denials it reports varies from one apiserver to the next; the webhook keeps the configuration's
    // order (docs/design/e2e-exceptions.md).
    expect(reference.status).toBe(422);
    expect([demo, replicaLimit]).toContain(reference.message);
    expect(served.status).toBe(422);
    expect(webhookDenial(served.message)?.message).toBe(demo);
  });

  it('judges a dry run as a real request and stores nothing', async () => {
    const over = await create(webhook.cluster, deployment('staging', 'dry-over', 4), { dryRun: true });
    expect(over.status).toBe(422);
    const within = await create(webhook.cluster, deployment('staging', 'dry', 2), { dryRun: true });
    expect(within.status, within.message).toBe(201);
    expect(await get(webhook.cluster, deployment('staging', 'dry', 2))).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error, and judges again after', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, deployment('staging', 'outage', 1));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        /^Internal error occurred: failed calling webhook "validating-admission-policy\.validate\.serverless-admission\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/validating-admission-policy\/validate\?timeout=\d+s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, deployment('staging', 'after', 1));
    expect(after.status, after.message).toBe(201);
  });
});
