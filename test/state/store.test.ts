// lib/state core: the table (keys, TTL enabled), the one dryRun gate, learning rules, expiry that
// counts before DynamoDB's TTL sweep, shared token buckets, and store failures as StoreUnavailableError.
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureStateTable } from '../../infra/local/dynamodb.js';
import {
  learnedObjectKindOf,
  learnedObjectObservation,
  learningRules,
  trimLearnedObject,
} from '../../lib/admission/learning.js';
import { createRequestState, localDynamoDb, StoreUnavailableError } from '../../lib/state/index.js';
import type { DynamoDb, QuotaSnapshot } from '../../lib/state/index.js';
import { localDynamoDbClient } from '../../lib/state/dynamodb-sdk.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { requestOf } from '../support/review.js';

let store: TestStore;
beforeAll(async () => {
  store = await testStore('state-core');
});
afterAll(() => store.close());

describe('the table', () => {
  it('has pk/sk string keys and TTL on expiresAt; ensureStateTable is idempotent', async () => {
    await ensureStateTable(store.endpoint, store.tableName);
    const admin = localDynamoDbClient(store.endpoint);
    try {
      const table = await admin.send(new DescribeTableCommand({ TableName: store.tableName }));
      expect(table.Table!.KeySchema).toEqual([
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]);
      const ttl = await admin.send(new DescribeTimeToLiveCommand({ TableName: store.tableName }));
      expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
    } finally {
      admin.destroy();
    }
  });
});

describe('the dryRun gate', () => {
  it('a dry run reads but sends no write command, whatever port it uses', async () => {
    const dry = store.state({ uid: 'dry-1', dryRun: true });
    store.reset();
    await dry.quotaLearner.recordQuota({ namespace: 'n', name: 'q', hard: { pods: '1' }, scopes: [] });
    await dry.quotaLedger.reserve(
      { namespace: 'n', resource: 'pods', name: 'p' },
      { usage: { pods: '1' }, facts: {} },
      () => undefined,
    );
    await dry.quotaLedger.release({ namespace: 'n', resource: 'pods', name: 'p' });
    await dry.tokenBuckets.take([{ key: 'k', spec: { qps: 1, burst: 1 } }]);
    await dry.decisionCache.put('k', { allowed: true, reason: '', annotations: {} }, 60);
    const stored = { kind: 'stored', of: 'storageclasses', name: 's', object: { metadata: { name: 's' } } } as const;
    await dry.objectLearner.record(stored, 'dry-1');
    await dry.objectLearner.record({ kind: 'deleted', of: 'storageclasses', name: 's' }, 'dry-1');
    await dry.objectLearner.replaceAll('storageclasses', [stored], 'dry-1');
    expect(store.writes()).toBe(0);
    expect(store.sent.length).toBeGreaterThan(0);
  });
});

describe('learningRules (for the emitter)', () => {
  it('subscribes namespace-aware plugins to Namespace writes and quota plugins to ResourceQuota writes', () => {
    expect(learningRules({ needs: [] })).toEqual([]);
    expect(learningRules({ needs: ['namespaces'] })).toEqual([
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['namespaces', 'namespaces/status'],
        scope: 'Cluster',
      },
    ]);
    expect(learningRules({ needs: ['resourcequotas'] })[0].resources).toEqual(['resourcequotas']);
  });

  it('subscribes class plugins to every write of each learned kind, in its own group', () => {
    expect(learningRules({ needs: ['storageclasses', 'priorityclasses'] })).toEqual([
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        apiGroups: ['storage.k8s.io'],
        apiVersions: ['v1'],
        resources: ['storageclasses'],
        scope: 'Cluster',
      },
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        apiGroups: ['scheduling.k8s.io'],
        apiVersions: ['v1'],
        resources: ['priorityclasses'],
        scope: 'Cluster',
      },
    ]);
  });
});

describe('learned objects (pure observation)', () => {
  it('keeps name, uid, labels, annotations and creationTimestamp, every other field but status', () => {
    const object = {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: {
        name: 'kata',
        uid: 'u1',
        labels: { a: 'b' },
        annotations: { c: 'd' },
        creationTimestamp: '2024-01-01T00:00:00Z',
        managedFields: [{ manager: 'kubectl' }],
        resourceVersion: '42',
      },
      handler: 'kata',
      overhead: { podFixed: { cpu: '250m' } },
      status: { anything: true },
    };
    expect(trimLearnedObject(object)).toEqual({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: {
        name: 'kata',
        uid: 'u1',
        labels: { a: 'b' },
        annotations: { c: 'd' },
        creationTimestamp: '2024-01-01T00:00:00Z',
      },
      handler: 'kata',
      overhead: { podFixed: { cpu: '250m' } },
    });
  });

  it('reads only the kind itself in its own group: no subresource, no look-alike', () => {
    const write = (group: string, resource: string, subResource = '') =>
      requestOf({
        resource: { group, resource },
        kind: { group, kind: 'StorageClass' },
        subResource,
        object: { apiVersion: `${group}/v1`, kind: 'StorageClass', metadata: { name: 's' } },
      });
    expect(learnedObjectKindOf(write('storage.k8s.io', 'storageclasses'))).toBe('storageclasses');
    expect(learnedObjectKindOf(write('example.com', 'storageclasses'))).toBeUndefined();
    expect(learnedObjectKindOf(write('storage.k8s.io', 'storageclasses', 'status'))).toBeUndefined();
    expect(learnedObjectObservation(write('storage.k8s.io', 'storageclasses'))).toMatchObject({
      kind: 'stored',
      of: 'storageclasses',
      name: 's',
    });
  });
});

describe('expiry counts before the TTL sweep', () => {
  it('a cached decision past its TTL is a miss', async () => {
    let clock = Date.now();
    const state = store.state({ uid: 'c1', dryRun: false }, () => clock);
    await state.decisionCache.put('image', { allowed: true, reason: 'ok', annotations: {} }, 30);
    expect(await state.decisionCache.get('image')).toEqual({ allowed: true, reason: 'ok', annotations: {} });
    clock += 31_000;
    expect(await state.decisionCache.get('image')).toBeUndefined();
  });
});

describe('the decision cache belongs to its plugin', () => {
  it("one plugin's cached answer is not another's", async () => {
    const of = (plugin: string) =>
      createRequestState({ uid: 'd1', dryRun: false }, { plugin, client: store.client, tableName: store.tableName });
    const answer = { allowed: false, reason: 'no', annotations: {} };
    await of('image-policy-webhook').decisionCache.put('same-key', answer, 30);
    expect(await of('image-policy-webhook').decisionCache.get('same-key')).toEqual(answer);
    expect(await of('another-plugin').decisionCache.get('same-key')).toBeUndefined();
  });
});

describe('token buckets shared through the store', () => {
  it('burst then refusal, refill with time, and a retried uid pays once', async () => {
    let clock = Date.now();
    const take = (uid: string) =>
      store
        .state({ uid, dryRun: false }, () => clock)
        .tokenBuckets.take([{ key: 'server', spec: { qps: 1, burst: 2 } }]);
    expect(await take('t1')).toBe(-1);
    expect(await take('t1')).toBe(-1); // retry: free
    expect(await take('t2')).toBe(-1);
    expect(await take('t3')).toBe(0);
    clock += 1000;
    expect(await take('t4')).toBe(-1);
  });
});

describe('the quota queue', () => {
  const ns = 'queue-trim';
  const pods = (n: number) => ({ usage: { pods: String(n) }, facts: { pod: true } });
  const usedPods = (snapshot: QuotaSnapshot) => snapshot.charges.reduce((sum, c) => sum + Number(c.usage.pods ?? 0), 0);
  const reserve = (uid: string, name: string, limit: number, namespace = ns) =>
    store
      .state({ uid, dryRun: false })
      .quotaLedger.reserve({ namespace, resource: 'pods', name }, pods(1), (snapshot) =>
        usedPods(snapshot) + 1 > limit ? 'full' : undefined,
      );
  const queueLength = async () => {
    const out = await store.client.call('GetItem', {
      TableName: store.tableName,
      Key: { pk: { S: `rq#${ns}#queue` }, sk: { S: 'queue' } },
      ConsistentRead: true,
    });
    return out.Item?.entries?.L?.length ?? 0;
  };

  it('keeps no more than a few dozen decided entries however many creates pass, refusals included', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 80; i++) outcomes.push((await reserve(`q-${i}`, `p${i}`, 60)).kind);
    expect(outcomes.filter((kind) => kind === 'reserved')).toHaveLength(60);
    expect(outcomes.filter((kind) => kind === 'refused')).toHaveLength(20);
    expect(await queueLength()).toBeLessThan(40);
  });

  it("a trim the store fails does not change the answer of the create that tried it; its decision's write does", async () => {
    const other = 'queue-trim-fails';
    // Sixteen decided creates at the queue's head: the seventeenth (place 16) trims them beside its write.
    for (let i = 0; i < 16; i++) expect((await reserve(`t-${i}`, `t${i}`, 40, other)).kind).toBe('reserved');
    const failing = (what: (operation: string, input: { UpdateExpression?: string }) => boolean): DynamoDb => ({
      async call(operation, input) {
        if (what(operation, input as { UpdateExpression?: string }))
          throw Object.assign(new Error('We currently do not have sufficient capacity'), {
            name: 'InternalServerError',
          });
        return store.client.call(operation, input);
      },
      destroy: () => undefined,
    });
    const ledgerOver = (client: DynamoDb, uid: string) =>
      createRequestState({ uid, dryRun: false }, { plugin: 'state-core', client, tableName: store.tableName })
        .quotaLedger;
    const trimFails = failing(
      (operation, input) => operation === 'UpdateItem' && /^REMOVE/.test(input.UpdateExpression ?? ''),
    );
    const admitted = await ledgerOver(trimFails, 't-16').reserve(
      { namespace: other, resource: 'pods', name: 't16' },
      pods(1),
      (snapshot) => (usedPods(snapshot) + 1 > 40 ? 'full' : undefined),
    );
    expect(admitted.kind).toBe('reserved');
    const writeFails = failing((operation) => operation === 'PutItem');
    await expect(
      ledgerOver(writeFails, 't-17').reserve(
        { namespace: other, resource: 'pods', name: 't17' },
        pods(1),
        () => undefined,
      ),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('a create freed at once is decided: those queued behind it neither count it nor wait for it', async () => {
    // Without its decided# record, `a` would look undecided to `c` (no charge of its own) and `c`
    // would wait for it until PENDING_SECONDS, past the test's timeout.
    const other = 'queue-release';
    expect((await reserve('a', 'a', 2, other)).kind).toBe('reserved');
    await store
      .state({ uid: 'delete-a', dryRun: false })
      .quotaLedger.release({ namespace: other, resource: 'pods', name: 'a' });
    expect((await reserve('b', 'b', 2, other)).kind).toBe('reserved');
    expect((await reserve('c', 'c', 2, other)).kind).toBe('reserved');
    expect((await reserve('d', 'd', 2, other)).kind).toBe('refused');
  });
});

describe('store failures', () => {
  it('an unreachable store is a StoreUnavailableError', async () => {
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    const state = createRequestState({ uid: 'x', dryRun: false }, { plugin: 'state-core', client, tableName: 't' });
    await expect(state.learnedNamespaces.get('a')).rejects.toBeInstanceOf(StoreUnavailableError);
    client.destroy();
  });
});
