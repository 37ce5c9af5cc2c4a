// MutatingAdmissionPolicy through the deployed Lambda handler over DynamoDB Local: the namespace a
// namespaceSelector and namespaceObject read is learned by the plugin's learning webhook (a Namespace
// write), the pod's patch applies with an RFC 6902 implementation, and a dry run writes nothing.
import { afterAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/mutating-admission-policy/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { patchedObject } from '../support/learned-objects.js';

const source = { file: 'test AdmissionConfiguration', baseDir: import.meta.dirname };

const config = plugin.configure!(
  {
    manifests: [
      {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingAdmissionPolicy',
        metadata: { name: 'tier-from-namespace' },
        spec: {
          matchConstraints: {
            resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
            namespaceSelector: { matchLabels: { team: 'payments' } },
          },
          failurePolicy: 'Fail',
          reinvocationPolicy: 'IfNeeded',
          mutations: [
            {
              patchType: 'ApplyConfiguration',
              applyConfiguration: {
                expression: 'Object{metadata: Object.metadata{labels: {"team": namespaceObject.metadata.labels.team}}}',
              },
            },
          ],
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingAdmissionPolicyBinding',
        metadata: { name: 'tier-from-namespace' },
        spec: { policyName: 'tier-from-namespace' },
      },
    ],
  },
  source,
);

const pod = (namespace: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});
const podCreate = (namespace: string, dryRun = false) => ({
  object: pod(namespace),
  namespace,
  name: 'p',
  dryRun,
});

const stores: TestStore[] = [];
afterAll(() => {
  for (const store of stores) store.close();
});

describe('MutatingAdmissionPolicy through the stateful handler', () => {
  it('labels pods of a learned namespace the selector names, and leaves the others untouched', async () => {
    const store = await testStore('mutating-admission-policy');
    stores.push(store);
    const invoke = lambdaFor(plugin, store, config);
    for (const [name, labels] of [
      ['payments', { team: 'payments' }],
      ['web', { team: 'web' }],
    ] as const) {
      const learned = await invoke('learn', namespaceReview('CREATE', name, { labels }));
      expect(learned.review?.response?.allowed).toBe(true);
    }
    const labelled = patchedObject(await invoke('mutate', podCreate('payments')), pod('payments'));
    expect(labelled.metadata?.labels).toEqual({ team: 'payments' });
    // A second call on the webhook's own output changes nothing.
    expect(patchedObject(await invoke('mutate', { ...podCreate('payments'), object: labelled }), labelled)).toEqual(
      labelled,
    );
    expect(patchedObject(await invoke('mutate', podCreate('web')), pod('web'))).toEqual(pod('web'));
  });

  it('a namespace never seen: the policy its selector would need labels for is skipped, with one warning', async () => {
    const store = await testStore('mutating-admission-policy-never-seen');
    stores.push(store);
    const invoke = lambdaFor(plugin, store, config);
    const result = await invoke('mutate', podCreate('before-install'));
    expect(result.review?.response).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        `MutatingAdmissionPolicy: namespace "before-install" is not learned yet, so every policy and binding whose namespaceSelector reads its labels was skipped; load the cluster's existing namespaces with npm run sync (docs/seed-state.md)`,
      ],
    });
    // Once learned (npm run sync, or the namespace's next write), the selector decides, silently.
    await invoke('learn', namespaceReview('UPDATE', 'before-install', { labels: { team: 'payments' } }));
    const labelled = await invoke('mutate', podCreate('before-install'));
    expect(labelled.review?.response?.warnings).toBeUndefined();
    expect(patchedObject(labelled, pod('before-install')).metadata?.labels).toEqual({ team: 'payments' });
  });

  it('a dry run is mutated as any request and writes nothing to the store', async () => {
    const store = await testStore('mutating-admission-policy-dry');
    stores.push(store);
    const invoke = lambdaFor(plugin, store, config);
    await invoke('learn', namespaceReview('CREATE', 'payments', { labels: { team: 'payments' } }));
    const before = store.writes();
    const dry = patchedObject(await invoke('mutate', podCreate('payments', true)), pod('payments'));
    expect(dry.metadata?.labels).toEqual({ team: 'payments' });
    expect(store.writes()).toBe(before);
  });
});
