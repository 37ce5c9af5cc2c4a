// Objects that predate the webhook: a label-only UPDATE of a pod, a Node and a PVC created before
// installation (without anything our mutations add) goes through every plugin, each turned on by
// its shipped example, as the apiserver would send it: every mutating webhook in order, each patch
// applied, then every validating webhook on the final object. None may refuse it: upstream's
// plugins admit it. Left out: AlwaysDeny, whose whole point is to refuse, and ImagePolicyWebhook,
// which asks its own backend (its suite covers updates).
import jsonpatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugins as registry } from '../../functions/index.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import type { ReviewInput } from '../support/review.js';

const everything = everyPluginActiveConfiguration();
const configured = activePlugins(loadPluginSet(registry, { ADMISSION_CONFIG: everything.file })).filter(
  (p) => !['always-deny', 'image-policy-webhook'].includes(p.plugin.metadata.name),
);

let store: TestStore;
beforeAll(async () => {
  store = await testStore('preexisting-objects');
  // The namespace existed before installation too: `npm run sync` (or its first write) taught it.
  const learner = configured.find((p) => p.plugin.metadata.needs.includes('namespaces'))!;
  const taught = await lambdaFor(learner.plugin, store, learner.config)('learn', namespaceReview('CREATE', 'team-a'));
  expect(taught.review?.response?.allowed).toBe(true);
});
afterAll(() => {
  store.close();
  everything.remove();
});

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'legacy',
    namespace: 'team-a',
    uid: '8d6e2a3c-0000-4000-8000-000000000001',
    resourceVersion: '41',
    labels: { app: 'legacy' },
  },
  spec: {
    nodeName: 'worker-1',
    serviceAccountName: 'default',
    containers: [
      {
        name: 'app',
        image: 'registry.example.com/app:1.0',
        imagePullPolicy: 'IfNotPresent',
        resources: { requests: { cpu: '100m' } },
      },
    ],
  },
  status: { phase: 'Running' },
};

const node: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'worker-1',
    uid: '8d6e2a3c-0000-4000-8000-000000000002',
    resourceVersion: '42',
    labels: { 'kubernetes.io/hostname': 'worker-1' },
  },
  spec: {},
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
};

const claim: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'team-a', uid: '8d6e2a3c-0000-4000-8000-000000000003', resourceVersion: '43' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: 'pv-1' },
  status: { phase: 'Bound' },
};

function labelled(object: KubeObject): KubeObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      labels: { ...(object.metadata?.labels as Record<string, string>), touched: 'yes' },
    },
  };
}

const ruleMatches = (
  rules: readonly { operations: readonly string[]; apiGroups: readonly string[]; resources: readonly string[] }[],
  resource: string,
) =>
  rules.some(
    (r) =>
      (r.operations.includes('UPDATE') || r.operations.includes('*')) &&
      (r.apiGroups.includes('') || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')),
  );

describe.each([
  ['a pod', pod, 'pods'],
  ['a Node', node, 'nodes'],
  ['a PersistentVolumeClaim', claim, 'persistentvolumeclaims'],
] as const)('a label-only UPDATE of %s created before installation', (_what, old, resource) => {
  it('passes every mutating webhook, then every validating one, with every active plugin on', async () => {
    let object = labelled(old);
    const input = (): ReviewInput => ({
      operation: 'UPDATE',
      kind: { kind: old.kind as string },
      resource: { resource },
      object,
      oldObject: old,
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
    });
    const calls: string[] = [];
    for (const { plugin, config } of configured.filter(
      (p) => p.plugin.admit && ruleMatches(p.plugin.metadata.mutating?.rules ?? [], resource),
    )) {
      const answer = await lambdaFor(plugin, store, config)('mutate', input());
      calls.push(`${plugin.metadata.name}/mutate`);
      expect(answer.statusCode, `${plugin.metadata.name} mutate: ${answer.body}`).toBe(200);
      const response = answer.review!.response!;
      expect(response.allowed, `${plugin.metadata.name} mutate: ${JSON.stringify(response.status)}`).toBe(true);
      if (response.patch) {
        const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as jsonpatch.Operation[];
        // An update may add tolerations and change metadata; nothing else of a pod's spec.
        for (const op of patch)
          expect(op.path, `${plugin.metadata.name} patches what an update may change`).toMatch(
            /^\/(metadata|spec\/tolerations)(\/|$)/,
          );
        object = jsonpatch.applyPatch(structuredClone(object), patch, true, false).newDocument;
      }
    }
    const validating = configured.filter(
      (p) =>
        p.plugin.validate &&
        ruleMatches(
          [...(p.plugin.metadata.validating?.rules ?? []), ...(p.plugin.metadata.validating?.observes ?? [])],
          resource,
        ),
    );
    for (const { plugin, config } of validating) {
      const answer = await lambdaFor(plugin, store, config)('validate', input());
      calls.push(`${plugin.metadata.name}/validate`);
      expect(answer.statusCode, `${plugin.metadata.name} validate: ${answer.body}`).toBe(200);
      expect(
        answer.review!.response!.allowed,
        `${plugin.metadata.name} validate: ${JSON.stringify(answer.review!.response!.status)}`,
      ).toBe(true);
    }
    // The table is not empty: the plugins that handle this resource were really called.
    expect(calls.length).toBeGreaterThan(0);
  });

  it('passes every validating webhook as sent, too: a mutation that failed open does not turn into a refusal', async () => {
    const input: ReviewInput = {
      operation: 'UPDATE',
      kind: { kind: old.kind as string },
      resource: { resource },
      object: labelled(old),
      oldObject: old,
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
    };
    for (const { plugin, config } of configured.filter(
      (p) => p.plugin.validate && ruleMatches(p.plugin.metadata.validating?.rules ?? [], resource),
    )) {
      const answer = await lambdaFor(plugin, store, config)('validate', input);
      expect(answer.review?.response?.allowed, `${plugin.metadata.name} validate: ${answer.body}`).toBe(true);
    }
  });
});
