// Upstream's tables (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/
// admission_test.go) ported: TestAccessReviewCheckOnMissingNamespace, TestAdmissionNamespaceDoesNotExist,
// TestAdmissionNamespaceActive, TestAdmissionNamespaceTerminating, TestAdmissionNamespaceForceLiveLookup
// (its cache-staleness half has no equivalent: learned state is read from the store each request).
// Namespaces are learned only through the plugin's learning webhook, as in a cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/namespace-lifecycle/plugin.js';
import type { NamespaceLifecycleConfig } from '../../functions/namespace-lifecycle/plugin.js';
import { finalDelete, podCreate, podDelete, podUpdate } from '../support/namespace-pods.js';
import type { ReviewInput } from '../support/review.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { localDynamoDb, createRequestState } from '../../lib/state/index.js';

const config: NamespaceLifecycleConfig = { unknownNamespace: 'allow' };
let store: TestStore;
let invoke: ReturnType<typeof lambdaFor>;

beforeAll(async () => {
  store = await testStore('namespace-lifecycle');
  invoke = lambdaFor(plugin, store, config);
});
afterAll(() => store.close());

async function answer(input: ReviewInput) {
  const result = await invoke('validate', input);
  expect(result.statusCode).toBe(200);
  return result.review!.response!;
}

/** A Namespace write as the apiserver sends it to the plugin's learning webhook: always admitted. */
async function learn(input: ReviewInput) {
  const result = await invoke('learn', input);
  expect(result.statusCode).toBe(200);
  expect(result.review!.response!.allowed).toBe(true);
}

describe('TestAccessReviewCheckOnMissingNamespace', () => {
  it('admits a LocalSubjectAccessReview in a namespace known not to exist', async () => {
    await learn(namespaceReview('CREATE', 'lsar'));
    await learn(namespaceReview('DELETE', 'lsar'));
    await learn(finalDelete('lsar'));
    const response = await answer({
      kind: { group: 'authorization.k8s.io', kind: 'LocalSubjectAccesReview' },
      resource: { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews' },
      namespace: 'lsar',
      object: { kind: 'LocalSubjectAccessReview', metadata: {} },
    });
    expect(response.allowed).toBe(true);
  });
});

describe('TestAdmissionNamespaceDoesNotExist', () => {
  beforeAll(async () => {
    await learn(namespaceReview('CREATE', 'gone'));
    await learn(namespaceReview('DELETE', 'gone'));
    await learn(finalDelete('gone'));
  });

  it('refuses creates with upstream NotFound', async () => {
    const response = await answer(podCreate('gone'));
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'namespaces "gone" not found',
      details: { name: 'gone', kind: 'namespaces' },
    });
  });

  it('refuses updates', async () => {
    expect((await answer(podUpdate('gone'))).status).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('lets deletes proceed', async () => {
    expect((await answer(podDelete('gone'))).allowed).toBe(true);
  });
});

describe('TestAdmissionNamespaceActive', () => {
  it('admits a pod into an active namespace', async () => {
    await learn(namespaceReview('CREATE', 'active'));
    expect((await answer(podCreate('active'))).allowed).toBe(true);
  });
});

describe('TestAdmissionNamespaceTerminating', () => {
  beforeAll(async () => {
    await learn(namespaceReview('CREATE', 'test'));
    await learn(namespaceReview('DELETE', 'test'));
  });

  it('refuses creates with upstream message, reason, code and NamespaceTerminating cause', async () => {
    const response = await answer(podCreate('test'));
    expect(response.allowed).toBe(false);
    expect(response.status).toEqual({
      metadata: {},
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'pods "123" is forbidden: unable to create new content in namespace test because it is being terminated',
      details: {
        name: '123',
        group: '',
        kind: 'pods',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: 'namespace test is being terminated',
            field: 'metadata.namespace',
          },
        ],
      },
    });
  });

  it('lets updates and deletes proceed', async () => {
    expect((await answer(podUpdate('test'))).allowed).toBe(true);
    expect((await answer(podDelete('test'))).allowed).toBe(true);
  });

  it.each(['default', 'kube-system', 'kube-public'])('never lets namespace %s be deleted', async (name) => {
    const response = await answer(namespaceReview('DELETE', name));
    expect(response.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      details: { name, group: '', kind: 'namespaces' },
    });
  });

  it('lets other namespaces be deleted', async () => {
    expect((await answer(namespaceReview('DELETE', 'other'))).allowed).toBe(true);
  });

  it('does not learn a refused deletion: default stays active', async () => {
    // The learning webhook is sent the same DELETE; it admits (it never judges) and learns nothing,
    // since the plugin refuses the write.
    await learn(namespaceReview('DELETE', 'default'));
    expect((await answer(podCreate('default'))).allowed).toBe(true);
  });
});

describe('TestAdmissionNamespaceForceLiveLookup: a deletion is seen by the next create, with no cache to go stale', () => {
  it('admits, then refuses right after the namespace DELETE', async () => {
    await learn(namespaceReview('CREATE', 'live'));
    expect((await answer(podCreate('live'))).allowed).toBe(true);
    await learn(namespaceReview('DELETE', 'live'));
    expect((await answer(podCreate('live'))).status?.message).toContain('because it is being terminated');
  });

  it('a namespace whose status says Terminating (a status UPDATE) is terminating too', async () => {
    await learn(namespaceReview('CREATE', 'status-term'));
    await learn({ ...namespaceReview('UPDATE', 'status-term', { phase: 'Terminating' }), subResource: 'status' });
    expect((await answer(podCreate('status-term'))).allowed).toBe(false);
  });

  it('a namespace re-created after deletion is active again', async () => {
    await learn(namespaceReview('CREATE', 'again'));
    await learn(namespaceReview('DELETE', 'again'));
    await learn(finalDelete('again'));
    await learn(namespaceReview('CREATE', 'again'));
    expect((await answer(podCreate('again'))).allowed).toBe(true);
  });
});

describe('cluster-scoped objects and namespaces themselves', () => {
  it('admits cluster-scoped creates and namespace creates', async () => {
    expect(
      (
        await answer({
          kind: { kind: 'Node' },
          resource: { resource: 'nodes' },
          object: { kind: 'Node', metadata: { name: 'n1' } },
        })
      ).allowed,
    ).toBe(true);
    expect((await answer(namespaceReview('CREATE', 'fresh'))).allowed).toBe(true);
  });
});

describe('never-seen namespaces (the explicit rule)', () => {
  it('allow (default): a namespace never seen is admitted', async () => {
    expect((await answer(podCreate('never-seen'))).allowed).toBe(true);
  });

  it('deny: refused as upstream refuses a missing namespace', async () => {
    const strict = lambdaFor(plugin, store, { unknownNamespace: 'deny' } satisfies NamespaceLifecycleConfig);
    const result = await strict('validate', podCreate('never-seen-2'));
    expect(result.review!.response!.status).toMatchObject({
      code: 404,
      message: 'namespaces "never-seen-2" not found',
    });
  });

  it('configure reads NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE and names it when invalid', () => {
    const old = process.env.NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE;
    try {
      process.env.NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE = 'deny';
      expect(plugin.configure!(undefined, { file: 'x', baseDir: '.' })).toEqual({ unknownNamespace: 'deny' });
      process.env.NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE = 'maybe';
      expect(() => plugin.configure!(undefined, { file: 'x', baseDir: '.' })).toThrow(
        /NamespaceLifecycle: NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE/,
      );
    } finally {
      if (old === undefined) delete process.env.NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE;
      else process.env.NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE = old;
    }
  });
});

describe('the dryRun gate and idempotency of learning', () => {
  it('a dry-run namespace DELETE sends zero writes and teaches nothing', async () => {
    await learn(namespaceReview('CREATE', 'dry'));
    store.reset();
    await learn(namespaceReview('DELETE', 'dry', {}, { dryRun: true }));
    expect(store.writes()).toBe(0);
    expect((await answer(podCreate('dry'))).allowed).toBe(true);
  });

  it('a retried namespace write (same uid) is recorded once', async () => {
    await learn(namespaceReview('CREATE', 'retried', { labels: { a: 'b' } }, { uid: 'ns-retry-1' }));
    store.reset();
    await learn(namespaceReview('CREATE', 'retried', { labels: { a: 'b' } }, { uid: 'ns-retry-1' }));
    // The conditional put was sent and refused by its condition: nothing changed.
    const learned = await store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get('retried');
    expect(learned).toMatchObject({ name: 'retried', labels: { a: 'b' }, phase: 'Active' });
  });
});

describe('store failures are HTTP 500, so failurePolicy decides', () => {
  it('an unreachable store answers 500, never an allow', async () => {
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    const broken = {
      ...store,
      state: (request: { uid: string; dryRun: boolean }) =>
        createRequestState(request, { plugin: plugin.metadata.name, client, tableName: store.tableName }),
    } as TestStore;
    const result = await lambdaFor(plugin, broken, config)('validate', podCreate('any'));
    expect(result.statusCode).toBe(500);
    client.destroy();
  });
});
