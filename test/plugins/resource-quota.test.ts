// ResourceQuota as a side effect: quotas learned from their own writes, charges per object in the
// ledger, the dryRun gate, idempotency by uid, reservation expiry and confirmation, concurrency,
// and a store restart. Upstream cases (staging/src/k8s.io/apiserver/pkg/admission/plugin/
// resourcequota and plugin/pkg/admission/resourcequota admission_test.go) ported where they apply:
// TestAdmissionIgnoresDelete, TestAdmissionIgnoresSubresources, TestAdmitBelowQuotaLimit,
// TestAdmitExceedQuotaLimit, TestAdmitEnforceQuotaConstraints, TestAdmitPodInNamespaceWithoutQuota,
// TestAdmitBelowTerminatingQuotaLimit, TestAdmitBelowBestEffortQuotaLimit,
// TestAdmitBestEffortQuotaLimitIgnoresBurstable, TestAdmitLimitedResourceNoQuota,
// TestAdmitLimitedResourceWithQuota, TestAdmitLimitedResourceWithMultipleQuota (usage comes from
// earlier creates instead of a preset status.used).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/resource-quota/plugin.js';
import type { ResourceQuotaConfig } from '../../functions/resource-quota/plugin.js';
import type { AdmissionReviewWire, KubeObject } from '../../lib/admission/types.js';
import type { ReviewInput } from '../support/review.js';
import { review, runPhase } from '../support/review.js';
import type { TestStore } from '../support/dynamodb.js';
import { countingClient, lambdaFor, ownStore, RESTART_TIMEOUT, testStore, withLatency } from '../support/dynamodb.js';
import type { UpdateItemInput } from '@aws-sdk/client-dynamodb';
import type { DynamoDb } from '../../lib/state/index.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import { quotaPod } from '../support/quota-objects.js';
import { configErrorOf } from '../support/config-error.js';

const config: ResourceQuotaConfig = { limitedResources: [] };
let store: TestStore;
let invoke: ReturnType<typeof lambdaFor>;

beforeAll(async () => {
  store = await testStore('resource-quota');
  invoke = lambdaFor(plugin, store, config);
});
afterAll(() => store.close());

const pod = quotaPod;
const quotaReview = (
  namespace: string,
  name: string,
  hard: Record<string, string>,
  spec: Record<string, unknown> = {},
  operation: 'CREATE' | 'UPDATE' = 'CREATE',
): ReviewInput => ({
  operation,
  kind: { kind: 'ResourceQuota' },
  resource: { resource: 'resourcequotas' },
  object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace }, spec: { hard, ...spec } },
});
const create = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({ object, ...extra });
const remove = (object: KubeObject): ReviewInput => ({
  operation: 'DELETE',
  object: null,
  oldObject: object,
  name: object.metadata!.name,
  namespace: object.metadata!.namespace,
});

async function answer(input: ReviewInput, via = invoke) {
  const result = await via('validate', input);
  expect(result.statusCode, result.body).toBe(200);
  return result.review!.response!;
}

/**
 * What the learning webhook is sent: ResourceQuota writes, and the UPDATEs and DELETEs the ledger
 * records (confirmations, releases). It always admits, with nothing else said.
 */
async function learn(input: ReviewInput, via = invoke) {
  const result = await via('learn', input);
  expect(result.statusCode, result.body).toBe(200);
  expect(result.review!.response).toEqual({ uid: expect.any(String), allowed: true });
}

describe('the done-when scenario: quota pods: "2" learned from a ResourceQuota CREATE', () => {
  const ns = 'scenario';
  beforeAll(async () => {
    await learn(quotaReview(ns, 'compute-quota', { pods: '2' }));
  });

  it('three dry-run pod creates are admitted, send zero writes, and are not counted', async () => {
    store.reset();
    for (const name of ['dry-1', 'dry-2', 'dry-3'])
      expect((await answer(create(pod(ns, name), { dryRun: true }))).allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(store.sent.length).toBeGreaterThan(0); // it did read
  });

  it('a request sent twice with the same uid counts once; a second pod fits; a third is refused naming the quota and pods', async () => {
    expect((await answer(create(pod(ns, 'p1'), { uid: 'same-uid' }))).allowed).toBe(true);
    expect((await answer(create(pod(ns, 'p1'), { uid: 'same-uid' }))).allowed).toBe(true);
    expect((await answer(create(pod(ns, 'p2')))).allowed).toBe(true);
    const third = await answer(create(pod(ns, 'p3')));
    expect(third.allowed).toBe(false);
    expect(third.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message:
        'pods "p3" is forbidden: exceeded quota: compute-quota, requested: pods=1, used: pods=2, limited: pods=2',
    });
  });

  it('a forged or duplicate create of an existing name does not inflate usage', async () => {
    expect((await answer(create(pod(ns, 'p2')))).allowed).toBe(true); // the apiserver answers AlreadyExists
    expect((await answer(create(pod(ns, 'p3')))).allowed).toBe(false);
  });

  it('deleting a pod frees its place (and a dry-run delete does not)', async () => {
    store.reset();
    await learn({ ...remove(pod(ns, 'p1')), dryRun: true });
    expect(store.writes()).toBe(0);
    expect((await answer(create(pod(ns, 'p3')))).allowed).toBe(false);
    // The judge is not sent deletes (its rules name creates): it admits without releasing anything.
    expect((await answer(remove(pod(ns, 'p1')))).allowed).toBe(true);
    expect((await answer(create(pod(ns, 'p3')))).allowed).toBe(false);
    await learn(remove(pod(ns, 'p1')));
    expect((await answer(create(pod(ns, 'p3')))).allowed).toBe(true);
  });

  it('a delete naming another object uid frees nothing', async () => {
    const forged = pod(ns, 'p2');
    forged.metadata!.uid = 'someone-else';
    await learn(remove(forged));
    expect((await answer(create(pod(ns, 'p4')))).allowed).toBe(false);
  });

  it('a dry-run ResourceQuota write teaches nothing', async () => {
    store.reset();
    await learn({ ...quotaReview(ns, 'compute-quota', { pods: '100' }, {}, 'UPDATE'), dryRun: true });
    expect(store.writes()).toBe(0);
    expect((await answer(create(pod(ns, 'p4')))).allowed).toBe(false);
  });
});

describe('quotas are learned by lib from ResourceQuota writes, as namespaces are', () => {
  it('a ResourceQuota DELETE forgets the quota', async () => {
    await learn(quotaReview('forget', 'q', { pods: '0' }));
    expect((await answer(create(pod('forget', 'a')))).allowed).toBe(false);
    const gone = quotaReview('forget', 'q', {});
    await learn({ ...gone, operation: 'DELETE', object: null, oldObject: gone.object });
    expect((await answer(create(pod('forget', 'a')))).allowed).toBe(true);
  });

  it('a ResourceQuota write the store cannot record is still allowed: the observation is lost, not the answer', async () => {
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    const unreachable = createStatefulAdmissionHandler(plugin, {
      config,
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      state: (request) =>
        createRequestState(request, { plugin: plugin.metadata.name, client, tableName: store.tableName }),
    });
    try {
      const result = await unreachable(
        gatewayEvent('/resource-quota/learn', JSON.stringify(review(quotaReview('lost', 'q', { pods: '0' })))),
        lambdaContext,
      );
      expect(result.statusCode).toBe(200);
      expect((JSON.parse(result.body) as AdmissionReviewWire).response!.allowed).toBe(true);
      expect((await answer(create(pod('lost', 'a')))).allowed).toBe(true); // the quota was never learned
    } finally {
      client.destroy();
    }
  });
});

describe('concurrency: 40 concurrent creates against a quota of 20', () => {
  it('admits exactly 20', async () => {
    await learn(quotaReview('busy', 'q', { pods: '20' }));
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => answer(create(pod('busy', `c${i}`)))));
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
    expect(
      results
        .filter((r) => !r.allowed)
        .every((r) =>
          r.status?.message?.includes('exceeded quota: q, requested: pods=1, used: pods=20, limited: pods=20'),
        ),
    ).toBe(true);
  });
});

describe('a burst under DynamoDB latency: 64 concurrent creates against pods: 32, every store call 10 ms later', () => {
  it('admits exactly 32, refuses 32 with the quota message, and answers no 5xx', async () => {
    const sent: string[] = [];
    const slow = withLatency(countingClient(store.endpoint, sent), 10);
    const state = (request: { uid: string; dryRun: boolean }) =>
      createRequestState(request, { plugin: plugin.metadata.name, client: slow, tableName: store.tableName });
    const handler = createStatefulAdmissionHandler(plugin, {
      config,
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      state,
    });
    const burst = async (input: ReviewInput) =>
      handler(gatewayEvent('/resource-quota/validate', JSON.stringify(review(input))), lambdaContext);
    try {
      await learn(quotaReview('burst', 'q', { pods: '32' }));
      const results = await Promise.all(Array.from({ length: 64 }, (_, i) => burst(create(pod('burst', `b${i}`)))));
      expect(results.map((r) => r.statusCode).filter((code) => code !== 200)).toEqual([]);
      const responses = results.map((r) => (JSON.parse(r.body) as AdmissionReviewWire).response!);
      expect(responses.filter((r) => r.allowed)).toHaveLength(32);
      const refused = responses
        .filter((r) => !r.allowed)
        .map((r) => r.status?.message?.replace(/^pods "b\d+"/, 'pods "b"'));
      expect(refused).toEqual(
        Array(32).fill('pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=32, limited: pods=32'),
      );
      // Each create is decided on its one read of the ledger: the 32 behind the quota are refused
      // at once, behind what those ahead of them will take, instead of reading again until the
      // charges ahead are written.
      expect(sent.filter((operation) => operation === 'Query')).toHaveLength(64);
      expect(sent.filter((operation) => operation === 'PutItem')).toHaveLength(64);
    } finally {
      slow.destroy();
    }
  });
});

/**
 * A create whose store calls the test follows: `read` settles once its first read of the ledger
 * has answered; with `hold`, its client stops before its decision's write (the charge, or the
 * record of its refusal) until `release`, so it stays undecided in the queue; `deciding` settles
 * once it got there.
 */
function followedCreate(input: ReviewInput, uid: string, hold = false) {
  const signal = () => {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    return { settle, settled };
  };
  const [read, deciding, gate] = [signal(), signal(), signal()];
  const followed: DynamoDb = {
    async call(operation, input) {
      if (operation === 'PutItem' && hold) {
        deciding.settle();
        await gate.settled;
      }
      const output = await store.client.call(operation, input);
      if (operation === 'Query') read.settle();
      return output;
    },
    destroy: () => undefined,
  };
  const state = createRequestState(
    { uid, dryRun: false },
    { plugin: plugin.metadata.name, client: followed, tableName: store.tableName },
  );
  const answered = runPhase(plugin, 'validate', { ...input, uid }, config, state).then((r) => r.wire.response!);
  return { read: read.settled, deciding: deciding.settled, release: gate.settle, answered };
}

describe("a create behind undecided ones: decided as upstream decides a namespace's waiting requests, in order", () => {
  it('is refused at once when the undecided creates ahead of it fill the quota', async () => {
    await learn(quotaReview('ahead-fits', 'q', { pods: '1' }));
    const first = followedCreate(create(pod('ahead-fits', 'a')), 'ahead-fits-a', true);
    await first.deciding;
    // The create ahead has not written its charge, and will not until this one is answered.
    const behind = await answer(create(pod('ahead-fits', 'b')));
    expect(behind.status?.message).toBe(
      'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1',
    );
    first.release();
    expect((await first.answered).allowed).toBe(true);
  });

  it('waits for a create ahead that will be refused, then is admitted in the room it leaves', async () => {
    await learn(quotaReview('ahead-too-big', 'q', { 'requests.example.com/gpu': '2' }));
    const gpus = (n: string) => ({ requests: { 'example.com/gpu': n }, limits: { 'example.com/gpu': n } });
    const first = followedCreate(create(pod('ahead-too-big', 'big', gpus('3'))), 'ahead-too-big-a', true);
    await first.deciding;
    const behind = followedCreate(create(pod('ahead-too-big', 'small', gpus('2'))), 'ahead-too-big-b');
    await behind.read; // it has seen the create ahead undecided
    first.release();
    expect((await first.answered).status?.message).toContain(
      'exceeded quota: q, requested: requests.example.com/gpu=3',
    );
    expect((await behind.answered).allowed).toBe(true);
  });

  it('does not count a create ahead whose answer needs its object (a quota on limits.cpu): waits, then fits', async () => {
    await learn(quotaReview('ahead-unknown', 'q', { pods: '1', 'limits.cpu': '4' }));
    const first = followedCreate(create(pod('ahead-unknown', 'bare')), 'ahead-unknown-a', true);
    await first.deciding;
    const behind = followedCreate(create(pod('ahead-unknown', 'limited', { limits: { cpu: '1' } })), 'ahead-unknown-b');
    await behind.read;
    first.release();
    expect((await first.answered).status?.message).toContain('failed quota: q: must specify limits.cpu');
    expect((await behind.answered).allowed).toBe(true);
  });
});

describe('a queue append applied twice (a retry after a connection reset that the store had already answered)', () => {
  it('counts the create once: its earlier copy in the queue is itself, not a request ahead', async () => {
    const twice: DynamoDb = {
      async call(operation, input) {
        const appends =
          operation === 'UpdateItem' && String((input as UpdateItemInput).UpdateExpression).includes('list_append');
        if (appends) await store.client.call(operation, input);
        return store.client.call(operation, input);
      },
      destroy: () => undefined,
    };
    const state = (request: { uid: string; dryRun: boolean }) =>
      createRequestState(request, { plugin: plugin.metadata.name, client: twice, tableName: store.tableName });
    await learn(quotaReview('twice', 'q', { pods: '1' }));
    const first = await runPhase(
      plugin,
      'validate',
      { ...create(pod('twice', 'a')), uid: 'twice-1' },
      config,
      state({ uid: 'twice-1', dryRun: false }),
    );
    expect(first.wire.response).toMatchObject({ allowed: true });
    const second = await answer(create(pod('twice', 'b')));
    expect(second.status?.message).toContain('exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1');
  });
});

describe('reconciliation: reservations expire unless a later observation confirms them', () => {
  const ns = 'reconcile';
  let clock = Date.now();
  const at = (uid: string) => store.state({ uid, dryRun: false }, () => clock);
  const validate = (input: ReviewInput & { uid: string }) => runPhase(plugin, 'validate', input, config, at(input.uid));

  it('an unconfirmed reservation stops counting once expired (before any TTL sweep); a confirmed one keeps counting', async () => {
    await learn({ ...quotaReview(ns, 'q', { pods: '1' }), uid: 'rq-1' }); // lib learns quotas in the handler
    expect((await validate({ ...create(pod(ns, 'never-persisted')), uid: 'r-1' })).wire.response!.allowed).toBe(true);
    expect((await validate({ ...create(pod(ns, 'other')), uid: 'r-2' })).wire.response!.allowed).toBe(false);
    clock += 901_000; // past QUOTA_RESERVATION_SECONDS (900)
    expect((await validate({ ...create(pod(ns, 'real')), uid: 'r-3' })).wire.response!.allowed).toBe(true);
    // The kubelet's status update confirms `real`.
    const status = {
      operation: 'UPDATE' as const,
      subResource: 'status',
      object: pod(ns, 'real'),
      oldObject: pod(ns, 'real'),
      uid: 'r-4',
    };
    expect((await validate(status)).wire.response!.allowed).toBe(true);
    clock += 901_000;
    expect((await validate({ ...create(pod(ns, 'late')), uid: 'r-5' })).wire.response!.allowed).toBe(false);
  });
});

describe('upstream cases', () => {
  it('TestAdmissionIgnoresDelete and TestAdmissionIgnoresSubresources', async () => {
    await learn(quotaReview('ign', 'q', { pods: '0' }));
    expect((await answer(remove(pod('ign', 'x')))).allowed).toBe(true);
    // The learning webhook, which the apiserver sends deletes to, records the release and admits.
    await learn(remove(pod('ign', 'x')));
    expect((await answer({ ...create(pod('ign', 'x')), subResource: 'eviction', operation: 'CREATE' })).allowed).toBe(
      true,
    );
  });

  it('TestAdmitBelowQuotaLimit and TestAdmitExceedQuotaLimit (cpu, memory, pods)', async () => {
    await learn(quotaReview('cpu', 'quota', { cpu: '3', memory: '100Gi', pods: '5' }));
    expect((await answer(create(pod('cpu', 'a', { requests: { cpu: '1', memory: '2Gi' } })))).allowed).toBe(true);
    expect((await answer(create(pod('cpu', 'b', { requests: { cpu: '1500m', memory: '2Gi' } })))).allowed).toBe(true);
    const over = await answer(create(pod('cpu', 'c', { requests: { cpu: '600m', memory: '2Gi' } })));
    expect(over.status?.message).toBe(
      'pods "c" is forbidden: exceeded quota: quota, requested: cpu=600m, used: cpu=2500m, limited: cpu=3',
    );
  });

  it('TestAdmitEnforceQuotaConstraints: a quota on limits.cpu needs every container to name one', async () => {
    await learn(quotaReview('constraints', 'quota', { 'limits.cpu': '3', 'requests.cpu': '2' }));
    const response = await answer(create(pod('constraints', 'a', { requests: { cpu: '100m' } })));
    expect(response.status?.message).toBe('pods "a" is forbidden: failed quota: quota: must specify limits.cpu');
  });

  it('TestAdmitPodInNamespaceWithoutQuota', async () => {
    expect((await answer(create(pod('no-quota', 'a', { requests: { cpu: '100' } })))).allowed).toBe(true);
  });

  it('TestAdmitBelowTerminatingQuotaLimit: a Terminating quota counts only pods with activeDeadlineSeconds', async () => {
    await learn(quotaReview('term', 'quota-terminating', { pods: '1' }, { scopes: ['Terminating'] }));
    expect((await answer(create(pod('term', 'long-1')))).allowed).toBe(true);
    expect((await answer(create(pod('term', 'long-2')))).allowed).toBe(true);
    expect((await answer(create(pod('term', 'short-1', {}, { activeDeadlineSeconds: 60 })))).allowed).toBe(true);
    expect((await answer(create(pod('term', 'short-2', {}, { activeDeadlineSeconds: 60 })))).status?.message).toContain(
      'exceeded quota: quota-terminating',
    );
  });

  it('TestAdmitBelowBestEffortQuotaLimit and TestAdmitBestEffortQuotaLimitIgnoresBurstable', async () => {
    await learn(quotaReview('be', 'quota-besteffort', { pods: '1' }, { scopes: ['BestEffort'] }));
    expect((await answer(create(pod('be', 'burstable-1', { requests: { cpu: '100m' } })))).allowed).toBe(true);
    expect((await answer(create(pod('be', 'burstable-2', { limits: { memory: '1Gi' } })))).allowed).toBe(true);
    expect((await answer(create(pod('be', 'besteffort-1')))).allowed).toBe(true);
    expect((await answer(create(pod('be', 'besteffort-2')))).allowed).toBe(false);
  });

  it('TestAdmitLimitedResourceNoQuota / WithQuota: limitedResources need a covering quota', async () => {
    const limited: ResourceQuotaConfig = {
      limitedResources: [{ apiGroup: '', resource: 'pods', matchContains: ['requests.cpu'] }],
    };
    const strict = lambdaFor(plugin, store, limited);
    const response = await answer(create(pod('limited', 'a', { requests: { cpu: '1' } })), strict);
    expect(response.status?.message).toBe('pods "a" is forbidden: insufficient quota to consume: requests.cpu');
    expect((await answer(create(pod('limited', 'b')), strict)).allowed).toBe(true);
    await learn(quotaReview('limited', 'quota', { 'requests.cpu': '10' }), strict);
    expect((await answer(create(pod('limited', 'c', { requests: { cpu: '1' } })), strict)).allowed).toBe(true);
  });

  it('count/<resource>.<group> and legacy object counts', async () => {
    await learn(quotaReview('counts', 'objects', { 'count/deployments.apps': '1', configmaps: '1' }));
    const deployment = (name: string): ReviewInput => ({
      kind: { group: 'apps', kind: 'Deployment' },
      resource: { group: 'apps', resource: 'deployments' },
      object: { kind: 'Deployment', metadata: { name, namespace: 'counts' }, spec: {} },
    });
    const configMap = (name: string): ReviewInput => ({
      kind: { kind: 'ConfigMap' },
      resource: { resource: 'configmaps' },
      object: { kind: 'ConfigMap', metadata: { name, namespace: 'counts' } },
    });
    expect((await answer(deployment('d1'))).allowed).toBe(true);
    expect((await answer(deployment('d2'))).status?.message).toBe(
      'deployments.apps "d2" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1',
    );
    expect((await answer(configMap('c1'))).allowed).toBe(true);
    expect((await answer(configMap('c2'))).status?.message).toContain(
      'requested: configmaps=1, used: configmaps=1, limited: configmaps=1',
    );
  });
});

describe('a store restart: the ledger lives in the store (-dbPath)', () => {
  it(
    'the third pod is still refused after DynamoDB Local restarts on the same data',
    async () => {
      const own = await ownStore('rq-restart');
      try {
        const via = lambdaFor(plugin, own.store, config);
        await learn(quotaReview('restart', 'compute-quota', { pods: '2' }), via);
        expect((await answer(create(pod('restart', 'p1')), via)).allowed).toBe(true);
        expect((await answer(create(pod('restart', 'p2')), via)).allowed).toBe(true);
        await own.stop();
        await own.start();
        const third = await answer(create(pod('restart', 'p3')), via);
        expect(third.status?.message).toBe(
          'pods "p3" is forbidden: exceeded quota: compute-quota, requested: pods=1, used: pods=2, limited: pods=2',
        );
      } finally {
        await own.dispose();
      }
    },
    RESTART_TIMEOUT,
  );
});

describe("usage beyond pods' cpu and memory, as upstream's evaluators charge it", () => {
  const claim = (namespace: string, name: string, storage: string, storageClassName?: string): ReviewInput => ({
    kind: { kind: 'PersistentVolumeClaim' },
    resource: { resource: 'persistentvolumeclaims' },
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace, uid: `uid-${name}` },
      spec: { ...(storageClassName && { storageClassName }), resources: { requests: { storage } } },
    },
  });

  it('charges claims requests.storage, and again under their storage class', async () => {
    const ns = 'storage';
    await learn(
      quotaReview(ns, 'disks', {
        'requests.storage': '5Gi',
        'gold.storageclass.storage.k8s.io/requests.storage': '4Gi',
        persistentvolumeclaims: '10',
      }),
    );
    expect((await answer(claim(ns, 'a', '3Gi', 'gold'))).allowed).toBe(true);
    const overClass = await answer(claim(ns, 'b', '2Gi', 'gold'));
    expect(overClass.status?.message).toBe(
      'persistentvolumeclaims "b" is forbidden: exceeded quota: disks, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=3Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=4Gi',
    );
    expect((await answer(claim(ns, 'c', '2Gi', 'silver'))).allowed).toBe(true);
    const overTotal = await answer(claim(ns, 'd', '1Mi'));
    expect(overTotal.status?.message).toBe(
      'persistentvolumeclaims "d" is forbidden: exceeded quota: disks, requested: requests.storage=1Mi, used: requests.storage=5Gi, limited: requests.storage=5Gi',
    );
  });

  it('charges pods ephemeral-storage and extended resources (as requests.<name> only)', async () => {
    const ns = 'extended';
    await learn(
      quotaReview(ns, 'node-local', { 'requests.ephemeral-storage': '1Gi', 'requests.example.com/gpu': '1' }),
    );
    expect((await answer(create(pod(ns, 'e1', { requests: { 'ephemeral-storage': '600Mi' } })))).allowed).toBe(true);
    const second = await answer(create(pod(ns, 'e2', { requests: { 'ephemeral-storage': '600Mi' } })));
    expect(second.status?.message).toBe(
      'pods "e2" is forbidden: exceeded quota: node-local, requested: requests.ephemeral-storage=600Mi, used: requests.ephemeral-storage=600Mi, limited: requests.ephemeral-storage=1Gi',
    );
    expect(
      (
        await answer(
          create(pod(ns, 'g1', { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } })),
        )
      ).allowed,
    ).toBe(true);
    const gpu = await answer(
      create(pod(ns, 'g2', { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } })),
    );
    expect(gpu.status?.message).toBe(
      'pods "g2" is forbidden: exceeded quota: node-local, requested: requests.example.com/gpu=1, used: requests.example.com/gpu=1, limited: requests.example.com/gpu=1',
    );
  });
});

describe('configuration (a ResourceQuotaConfiguration, read strictly)', () => {
  const source = { file: 'admission.yaml', baseDir: '.' };
  const configure = (raw: unknown) => plugin.configure?.(raw, source);

  it('reads limitedResources, and no entry limits nothing', () => {
    expect(configure(undefined)).toEqual({ limitedResources: [] });
    expect(
      configure({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'ResourceQuotaConfiguration',
        limitedResources: [{ resource: 'pods', matchContains: ['cpu'] }],
      }),
    ).toEqual({ limitedResources: [{ apiGroup: '', resource: 'pods', matchContains: ['cpu'] }] });
  });

  it.each([
    [
      { limitedResource: [] },
      'ResourceQuota: limitedResource: unknown field "limitedResource"; did you mean "limitedResources"?',
    ],
    [
      { limitedResources: [{ resource: 'pods', apiGrop: 'x' }] },
      'ResourceQuota: limitedResources[0].apiGrop: unknown field "apiGrop"; did you mean "apiGroup"?',
    ],
    [{ limitedResources: [{ matchContains: [] }] }, 'ResourceQuota: limitedResources[0].resource: Required value'],
    [
      { limitedResources: [{ resource: 'pods', matchContains: ['cpu', 1] }] },
      'ResourceQuota: limitedResources[0].matchContains[1]: must be a string, got 1',
    ],
    [
      { kind: 'LimitRange' },
      'ResourceQuota: kind: must be one of ResourceQuotaConfiguration, Configuration, got "LimitRange"',
    ],
  ])('refuses %j', (raw, message) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(message);
  });
});
