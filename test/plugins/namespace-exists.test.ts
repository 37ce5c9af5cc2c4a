// Upstream's table (plugin/pkg/admission/namespace/exists/admission_test.go) ported:
// TestAdmissionNamespaceExists and TestAdmissionNamespaceDoesNotExist, with namespaces learned only
// through the plugin's learning webhook as in a cluster (upstream's informer and live GET), plus what
// upstream's Validate implies: updates and deletes are judged too, Namespaces and cluster-scoped
// objects never; the never-seen rule; dry runs; store failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/namespace-exists/plugin.js';
import type { NamespaceExistsConfig } from '../../functions/namespace-exists/plugin.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { finalDelete, podCreate, podDelete, podUpdate } from '../support/namespace-pods.js';
import type { ReviewInput } from '../support/review.js';

const strict: NamespaceExistsConfig = { unknownNamespace: 'deny' };
let store: TestStore;
let invoke: ReturnType<typeof lambdaFor>;

beforeAll(async () => {
  store = await testStore('namespace-exists');
  invoke = lambdaFor(plugin, store, strict);
});
afterAll(() => store.close());

async function answer(input: ReviewInput, run = invoke, endpoint: 'validate' | 'learn' = 'validate') {
  const result = await run(endpoint, input);
  expect(result.statusCode).toBe(200);
  return result.review!.response!;
}

/** A Namespace write as the apiserver sends it to the plugin's learning webhook. */
const learn = async (input: ReviewInput) => expect((await answer(input, invoke, 'learn')).allowed).toBe(true);

describe('TestAdmissionNamespaceExists', () => {
  it('admits a pod into a namespace that exists', async () => {
    await learn(namespaceReview('CREATE', 'test'));
    expect((await answer(podCreate('test'))).allowed).toBe(true);
  });
});

describe('TestAdmissionNamespaceDoesNotExist', () => {
  it('refuses a pod in a namespace never seen with upstream NotFound', async () => {
    const response = await answer(podCreate('missing'));
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'namespaces "missing" not found',
      details: { name: 'missing', kind: 'namespaces' },
    });
  });

  it('refuses a pod in a namespace whose final DELETE was seen', async () => {
    await learn(namespaceReview('CREATE', 'gone'));
    await learn(namespaceReview('DELETE', 'gone'));
    await learn(finalDelete('gone'));
    expect((await answer(podCreate('gone'))).status).toMatchObject({
      code: 404,
      message: 'namespaces "gone" not found',
    });
  });
});

describe("upstream's handler: Create, Update and Delete are judged", () => {
  it.each([
    ['UPDATE', podUpdate],
    ['DELETE', podDelete],
  ] as const)('%s in a missing namespace is refused', async (_, input) => {
    expect((await answer(input('missing'))).status).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('a terminating namespace still exists: creates, updates and deletes pass', async () => {
    await learn(namespaceReview('CREATE', 'terminating'));
    await learn(namespaceReview('DELETE', 'terminating'));
    for (const input of [podCreate, podUpdate, podDelete])
      expect((await answer(input('terminating'))).allowed).toBe(true);
  });

  it('Namespaces themselves and cluster-scoped objects are never refused', async () => {
    expect((await answer(namespaceReview('CREATE', 'brand-new'))).allowed).toBe(true);
    expect(
      (
        await answer({
          kind: { kind: 'Node' },
          resource: { resource: 'nodes' },
          object: { kind: 'Node', metadata: { name: 'n1' } },
        })
      ).allowed,
    ).toBe(true);
  });

  it('subscribes to Create, Update and Delete of every namespaced resource, not Connect', () => {
    expect(plugin.metadata.validating!.rules).toEqual([
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        apiGroups: ['*'],
        apiVersions: ['*'],
        resources: ['*/*'],
        scope: 'Namespaced',
      },
    ]);
    expect(plugin.metadata).toMatchObject({
      needs: ['namespaces'],
      writes: false,
      validating: { failurePolicy: 'Ignore', timeoutSeconds: 2 },
    });
  });
});

describe('never-seen namespaces (the explicit rule)', () => {
  it('configure: warn by default; NAMESPACE_EXISTS_UNKNOWN_NAMESPACE=allow; an invalid value is named', () => {
    const old = process.env.NAMESPACE_EXISTS_UNKNOWN_NAMESPACE;
    try {
      delete process.env.NAMESPACE_EXISTS_UNKNOWN_NAMESPACE;
      expect(plugin.configure!(undefined, { file: 'x', baseDir: '.' })).toEqual({ unknownNamespace: 'warn' });
      process.env.NAMESPACE_EXISTS_UNKNOWN_NAMESPACE = 'allow';
      expect(plugin.configure!(undefined, { file: 'x', baseDir: '.' })).toEqual({ unknownNamespace: 'allow' });
      process.env.NAMESPACE_EXISTS_UNKNOWN_NAMESPACE = 'maybe';
      expect(() => plugin.configure!(undefined, { file: 'x', baseDir: '.' })).toThrow(
        /NamespaceExists: NAMESPACE_EXISTS_UNKNOWN_NAMESPACE/,
      );
    } finally {
      if (old === undefined) delete process.env.NAMESPACE_EXISTS_UNKNOWN_NAMESPACE;
      else process.env.NAMESPACE_EXISTS_UNKNOWN_NAMESPACE = old;
    }
  });

  it('warn: a namespace never seen is admitted with a warning naming the sync, one known gone is refused', async () => {
    const warned = lambdaFor(plugin, store, { unknownNamespace: 'warn' } satisfies NamespaceExistsConfig);
    const response = await answer(podCreate('never-seen'), warned);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      'NamespaceExists: namespace "never-seen" is not learned yet, so its existence was not checked; load the cluster\'s existing namespaces with npm run sync (docs/seed-state.md)',
    ]);
    expect((await answer(podCreate('gone'), warned)).status).toMatchObject({ code: 404 });
  });

  it('allow: a namespace never seen is admitted, one known gone is still refused', async () => {
    const lenient = lambdaFor(plugin, store, { unknownNamespace: 'allow' } satisfies NamespaceExistsConfig);
    expect((await answer(podCreate('never-seen'), lenient)).allowed).toBe(true);
    expect((await answer(podCreate('gone'), lenient)).status).toMatchObject({ code: 404 });
  });

  it('allow, after `npm run sync` loaded a complete listing: a namespace absent from it is refused', async () => {
    const synced = await testStore('namespace-exists-synced');
    try {
      const state = synced.state({ uid: 'sync', dryRun: false });
      await state.namespaceLearner.recordCompleteListing(Date.now());
      const lenient = lambdaFor(plugin, synced, { unknownNamespace: 'allow' } satisfies NamespaceExistsConfig);
      expect((await answer(podCreate('not-listed'), lenient)).status).toMatchObject({
        code: 404,
        message: 'namespaces "not-listed" not found',
      });
    } finally {
      synced.close();
    }
  });
});

describe('the dryRun gate', () => {
  it('a dry-run Namespace CREATE sends zero writes and teaches nothing', async () => {
    store.reset();
    await learn(namespaceReview('CREATE', 'dry', {}, { dryRun: true }));
    expect(store.writes()).toBe(0);
    expect((await answer(podCreate('dry'))).allowed).toBe(false);
  });
});

describe('store failures are HTTP 500, so failurePolicy decides', () => {
  it('an unreachable store answers 500, never an allow', async () => {
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    try {
      const broken = {
        ...store,
        state: (request: { uid: string; dryRun: boolean }) =>
          createRequestState(request, { plugin: plugin.metadata.name, client, tableName: store.tableName }),
      } as TestStore;
      expect((await lambdaFor(plugin, broken, strict)('validate', podCreate('any'))).statusCode).toBe(500);
    } finally {
      client.destroy();
    }
  });
});
