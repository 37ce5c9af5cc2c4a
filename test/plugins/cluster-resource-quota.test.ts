import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/cluster-resource-quota/plugin.js';
import type { ClusterResourceQuotaConfig } from '../../functions/cluster-resource-quota/plugin.js';
import type { AdmissionReviewWire, KubeObject } from '../../lib/admission/types.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore, withLatency } from '../support/dynamodb.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import { quotaPod } from '../support/quota-objects.js';
import { classWrite } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';
import { review, runPhase } from '../support/review.js';

const config: ClusterResourceQuotaConfig = { unknownNamespace: 'skip' };
let store: TestStore;
let invoke: ReturnType<typeof lambdaFor>;

beforeAll(async () => {
  store = await testStore('cluster-resource-quota');
  invoke = lambdaFor(plugin, store, config);
});
afterAll(() => store.close());

const pod = quotaPod;
const secret = (namespace: string, name: string): ReviewInput => ({
  kind: { kind: 'Secret' },
  resource: { resource: 'secrets' },
  object: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, uid: `uid-${namespace}-${name}` } },
});
const create = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({ object, ...extra });
const remove = (object: KubeObject): ReviewInput => ({
  operation: 'DELETE',
  object: null,
  oldObject: object,
  name: object.metadata!.name,
  namespace: object.metadata!.namespace,
});

interface Selector {
  labels?: Record<string, unknown> | null;
  annotations?: Record<string, string> | null;
}
/** A ClusterResourceQuota as OpenShift stores it (status included; learning drops it). */
const crq = (name: string, selector: Selector, quota: Record<string, unknown>): KubeObject => ({
  metadata: { name, uid: `uid-crq-${name}` },
  spec: { selector, quota },
  status: { total: { hard: quota.hard, used: {} }, namespaces: [] },
});

async function answer(input: ReviewInput, via = invoke) {
  const result = await via('validate', input);
  expect(result.statusCode, result.body).toBe(200);
  return result.review!.response!;
}
/**
 * What the learning webhook is sent: quota and namespace writes, and the UPDATEs and DELETEs the
 * ledger records (confirmations, releases). It always admits, with nothing else said.
 */
async function learn(input: ReviewInput, via = invoke) {
  const result = await via('learn', input);
  expect(result.statusCode, result.body).toBe(200);
  expect(result.review!.response).toEqual({ uid: expect.any(String), allowed: true });
}
const learnQuota = (object: KubeObject, operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'CREATE') =>
  learn(classWrite('clusterresourcequotas', object, operation));
const learnNamespace = (
  name: string,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> },
  operation: 'CREATE' | 'UPDATE' = 'CREATE',
) => learn(namespaceReview(operation, name, meta));

/** The charges a quota's ledger holds, by `<namespace>/<name>`. */
async function charged(quota: string, on: TestStore = store): Promise<string[]> {
  const result = await on.client.call('Query', {
    TableName: on.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :charge)',
    ExpressionAttributeValues: { ':pk': { S: `crq#${quota}` }, ':charge': { S: 'charge#' } },
    ConsistentRead: true,
  });
  return (result.Items ?? []).map((item) => (item.sk?.S ?? '').replace(/^charge#pods#/, '')).sort();
}

describe('one quota across the namespaces it selects: pods: "3" for team=a', () => {
  beforeAll(async () => {
    await learnNamespace('a1', { labels: { team: 'a' } });
    await learnNamespace('a2', { labels: { team: 'a' } });
    await learnNamespace('b1', { labels: { team: 'b' } });
    await learnQuota(crq('for-team-a', { labels: { matchLabels: { team: 'a' } } }, { hard: { pods: '3' } }));
  });

  it('dry-run creates are admitted, send zero writes, and are not counted', async () => {
    store.reset();
    for (const name of ['dry-1', 'dry-2', 'dry-3', 'dry-4'])
      expect((await answer(create(pod('a1', name), { dryRun: true }))).allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(store.sent.length).toBeGreaterThan(0); // it did read
    expect(await charged('for-team-a')).toEqual([]);
  });

  it('pods of both namespaces count together, a retry counts once, and the fourth is refused as upstream words it', async () => {
    expect((await answer(create(pod('a1', 'p1'), { uid: 'same-uid' }))).allowed).toBe(true);
    expect((await answer(create(pod('a1', 'p1'), { uid: 'same-uid' }))).allowed).toBe(true);
    expect((await answer(create(pod('a2', 'p2')))).allowed).toBe(true);
    expect((await answer(create(pod('a1', 'p3')))).allowed).toBe(true);
    const fourth = await answer(create(pod('a2', 'p4')));
    expect(fourth.allowed).toBe(false);
    expect(fourth.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'pods "p4" is forbidden: exceeded quota: for-team-a, requested: pods=1, used: pods=3, limited: pods=3',
    });
    expect(await charged('for-team-a')).toEqual(['a1/p1', 'a1/p3', 'a2/p2']);
  });

  it('a namespace it does not select is not limited', async () => {
    for (const name of ['b-1', 'b-2', 'b-3', 'b-4']) expect((await answer(create(pod('b1', name)))).allowed).toBe(true);
  });

  it('a delete in any selected namespace frees a place (a dry-run delete does not)', async () => {
    store.reset();
    await learn({ ...remove(pod('a1', 'p1')), dryRun: true });
    expect(store.writes()).toBe(0);
    expect((await answer(create(pod('a2', 'p4')))).allowed).toBe(false);
    // The judge is not sent deletes (its rules name creates): it admits without releasing anything.
    expect((await answer(remove(pod('a1', 'p1')))).allowed).toBe(true);
    expect((await answer(create(pod('a2', 'p4')))).allowed).toBe(false);
    await learn(remove(pod('a1', 'p1')));
    expect((await answer(create(pod('a2', 'p4')))).allowed).toBe(true);
    expect(await charged('for-team-a')).toEqual(['a1/p3', 'a2/p2', 'a2/p4']);
  });

  it('a dry-run ClusterResourceQuota write teaches nothing; an admitted one raises the limit', async () => {
    const raised = crq('for-team-a', { labels: { matchLabels: { team: 'a' } } }, { hard: { pods: '4' } });
    store.reset();
    await learn({ ...classWrite('clusterresourcequotas', raised, 'UPDATE'), dryRun: true });
    expect(store.writes()).toBe(0);
    expect((await answer(create(pod('a1', 'p5')))).allowed).toBe(false);
    await learnQuota(raised, 'UPDATE');
    expect((await answer(create(pod('a1', 'p5')))).allowed).toBe(true);
  });

  it('a namespace relabelled out of the selection is no longer limited', async () => {
    expect((await answer(create(pod('a2', 'p6')))).allowed).toBe(false);
    await learnNamespace('a2', { labels: { team: 'c' } }, 'UPDATE');
    expect((await answer(create(pod('a2', 'p6')))).allowed).toBe(true);
  });

  it('a ClusterResourceQuota DELETE forgets the quota', async () => {
    expect((await answer(create(pod('a1', 'p7')))).allowed).toBe(false);
    await learnQuota(crq('for-team-a', {}, {}), 'DELETE');
    expect((await answer(create(pod('a1', 'p7')))).allowed).toBe(true);
  });
});

describe("selection: spec.selector.labels and/or annotations, both when both are set (library-go's GetMatcher)", () => {
  beforeAll(async () => {
    await learnNamespace('sel-both', { labels: { tier: 'gold' }, annotations: { 'openshift.io/requester': 'alice' } });
    await learnNamespace('sel-labels', { labels: { tier: 'gold' } });
    await learnNamespace('sel-annotations', { annotations: { 'openshift.io/requester': 'alice' } });
    await learnNamespace('sel-expr', { labels: { tier: 'silver', env: 'dev' } });
    await learnQuota(
      crq(
        'alice-gold',
        { labels: { matchLabels: { tier: 'gold' } }, annotations: { 'openshift.io/requester': 'alice' } },
        { hard: { 'count/configmaps': '0' } },
      ),
    );
    await learnQuota(
      crq('alice', { labels: null, annotations: { 'openshift.io/requester': 'alice' } }, { hard: { secrets: '0' } }),
    );
    await learnQuota(
      crq(
        'not-gold',
        { labels: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] } },
        { hard: { 'count/services': '0' } },
      ),
    );
  });
  const configMap = (namespace: string): ReviewInput => ({
    kind: { kind: 'ConfigMap' },
    resource: { resource: 'configmaps' },
    object: { kind: 'ConfigMap', metadata: { name: 'cm', namespace } },
  });
  const service = (namespace: string): ReviewInput => ({
    kind: { kind: 'Service' },
    resource: { resource: 'services' },
    object: { kind: 'Service', metadata: { name: 'svc', namespace } },
  });

  it('labels and annotations set: only a namespace with both is selected', async () => {
    expect((await answer(configMap('sel-both'))).status?.message).toBe(
      'configmaps "cm" is forbidden: exceeded quota: alice-gold, requested: count/configmaps=1, used: count/configmaps=0, limited: count/configmaps=0',
    );
    expect((await answer(configMap('sel-labels'))).allowed).toBe(true);
    expect((await answer(configMap('sel-annotations'))).allowed).toBe(true);
  });

  it('annotations alone: every annotation must be the namespace’s, with the same value', async () => {
    expect((await answer(secret('sel-annotations', 's'))).status?.message).toBe(
      'secrets "s" is forbidden: exceeded quota: alice, requested: secrets=1, used: secrets=0, limited: secrets=0',
    );
    expect((await answer(secret('sel-both', 's'))).allowed).toBe(false);
    expect((await answer(secret('sel-labels', 's'))).allowed).toBe(true);
  });

  it('a label selector with matchExpressions (NotIn selects namespaces without the label too)', async () => {
    expect((await answer(service('sel-expr'))).allowed).toBe(false);
    expect((await answer(service('sel-annotations'))).allowed).toBe(false);
    expect((await answer(service('sel-labels'))).allowed).toBe(true);
  });
});

describe('several quotas select one namespace: each is checked, in name order', () => {
  it('a request refused by one quota is not counted by the others', async () => {
    await learnNamespace('multi-x', { labels: { team: 'm', env: 'prod' } });
    await learnNamespace('multi-y', { labels: { team: 'm' } });
    await learnQuota(crq('m-a-team', { labels: { matchLabels: { team: 'm' } } }, { hard: { pods: '2' } }));
    await learnQuota(crq('m-b-prod', { labels: { matchLabels: { env: 'prod' } } }, { hard: { pods: '1' } }));
    expect((await answer(create(pod('multi-x', 'x1')))).allowed).toBe(true);
    // m-b-prod is full: x2 is reserved in m-a-team first, then refused by m-b-prod and released from m-a-team.
    expect((await answer(create(pod('multi-x', 'x2')))).status?.message).toBe(
      'pods "x2" is forbidden: exceeded quota: m-b-prod, requested: pods=1, used: pods=1, limited: pods=1',
    );
    expect(await charged('m-a-team')).toEqual(['multi-x/x1']);
    expect((await answer(create(pod('multi-y', 'y1')))).allowed).toBe(true);
    expect((await answer(create(pod('multi-y', 'y2')))).status?.message).toBe(
      'pods "y2" is forbidden: exceeded quota: m-a-team, requested: pods=1, used: pods=2, limited: pods=2',
    );
  });
});

describe('TestGetQuota (accessor_test.go), as admission then answers', () => {
  it('"correct quota and namespaces": the quota is spec.quota, its usage every selected namespace’s', async () => {
    await learnNamespace('get-foo', { labels: { one: 'alfa' } });
    await learnNamespace('get-bar', { labels: { one: 'alfa' } });
    await learnQuota(
      crq('user-one', { labels: { matchLabels: { one: 'alfa' } } }, { hard: { pods: '10', secrets: '5' } }),
    );
    for (const [namespace, name] of [
      ['get-foo', 's1'],
      ['get-bar', 's2'],
      ['get-foo', 's3'],
      ['get-bar', 's4'],
      ['get-foo', 's5'],
    ])
      expect((await answer(secret(namespace, name))).allowed).toBe(true);
    expect((await answer(secret('get-bar', 's6'))).status?.message).toBe(
      'secrets "s6" is forbidden: exceeded quota: user-one, requested: secrets=1, used: secrets=5, limited: secrets=5',
    );
  });

  it('"no hits on namespace": a namespace no quota selects is not limited', async () => {
    await learnNamespace('get-other', { labels: { two: 'bravo' } });
    for (const name of ['s1', 's2', 's3', 's4', 's5', 's6'])
      expect((await answer(secret('get-other', name))).allowed).toBe(true);
  });

  it('"namespace not synced": a namespace never learned is selected by no quota (skip)', async () => {
    const response = await answer(create(pod('never-learned', 'p1')));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toBeUndefined();
  });

  it('"namespace not synced", warn (the default): charged to no quota, with a warning naming the sync', async () => {
    const warned = lambdaFor(plugin, store, { unknownNamespace: 'warn' } satisfies ClusterResourceQuotaConfig);
    const response = await answer(create(pod('never-learned', 'p0')), warned);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      'quota.openshift.io/ClusterResourceQuota: namespace "never-learned" is not learned yet, so no ClusterResourceQuota was charged for this object; load the cluster\'s existing namespaces with npm run sync (docs/seed-state.md)',
    ]);
  });

  it('"namespace not synced" with CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE=reject: refused in upstream’s words', async () => {
    const strict = lambdaFor(plugin, store, { unknownNamespace: 'reject' } satisfies ClusterResourceQuotaConfig);
    const refused = await answer(create(pod('never-learned', 'p2')), strict);
    expect(refused.status).toMatchObject({
      code: 403,
      message: 'pods "p2" is forbidden: never-learned-p2: caches not synchronized',
    });
    // Only creates: updates and deletes in such a namespace have nothing to check.
    expect((await answer(remove(pod('never-learned', 'p1')), strict)).allowed).toBe(true);
    // Learned, the namespace is judged as any other.
    await learnNamespace('never-learned', { labels: { one: 'alfa' } });
    expect((await answer(create(pod('never-learned', 'p2')), strict)).allowed).toBe(true);
  });

  it('the rule is read from the environment at start, and a wrong value fails naming the variable', () => {
    const env = process.env.CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE;
    try {
      delete process.env.CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE;
      expect(plugin.configure!(undefined, { file: 'test', baseDir: '.' })).toEqual({ unknownNamespace: 'warn' });
      process.env.CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE = 'reject';
      expect(plugin.configure!(undefined, { file: 'test', baseDir: '.' })).toEqual({ unknownNamespace: 'reject' });
      process.env.CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE = 'rejct';
      expect(() => plugin.configure!(undefined, { file: 'test', baseDir: '.' })).toThrow(
        'quota.openshift.io/ClusterResourceQuota: CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE: must be one of warn, skip, reject, got "rejct"',
      );
    } finally {
      if (env === undefined) delete process.env.CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE;
      else process.env.CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE = env;
    }
  });
});

describe("the ResourceQuota evaluator's cases that depend on the quota, against a ClusterResourceQuota", () => {
  beforeAll(async () => {
    await learnNamespace('eval-1', { labels: { evaluator: 'yes' } });
    await learnNamespace('eval-2', { labels: { evaluator: 'yes' } });
  });

  it('TestAdmitEnforceQuotaConstraints: a quota on limits.cpu needs every container to name one', async () => {
    await learnQuota(
      crq(
        'eval-constraints',
        { labels: { matchLabels: { evaluator: 'yes' } } },
        { hard: { 'limits.cpu': '3', 'requests.cpu': '2' } },
      ),
    );
    expect((await answer(create(pod('eval-1', 'a', { requests: { cpu: '100m' } })))).status?.message).toBe(
      'pods "a" is forbidden: failed quota: eval-constraints: must specify limits.cpu',
    );
    const fits = { requests: { cpu: '1500m' }, limits: { cpu: '1500m' } };
    expect((await answer(create(pod('eval-1', 'b', fits)))).allowed).toBe(true);
    expect((await answer(create(pod('eval-2', 'c', fits)))).status?.message).toBe(
      'pods "c" is forbidden: exceeded quota: eval-constraints, requested: requests.cpu=1500m, used: requests.cpu=1500m, limited: requests.cpu=2',
    );
    await learnQuota(crq('eval-constraints', {}, {}), 'DELETE');
  });

  it('TestAdmitBelowBestEffortQuotaLimit: spec.quota.scopes count only the pods they cover', async () => {
    await learnQuota(
      crq(
        'eval-besteffort',
        { labels: { matchLabels: { evaluator: 'yes' } } },
        { hard: { pods: '1' }, scopes: ['BestEffort'] },
      ),
    );
    expect((await answer(create(pod('eval-1', 'burstable', { requests: { cpu: '100m' } })))).allowed).toBe(true);
    expect((await answer(create(pod('eval-1', 'besteffort-1')))).allowed).toBe(true);
    expect((await answer(create(pod('eval-2', 'besteffort-2')))).status?.message).toContain(
      'exceeded quota: eval-besteffort',
    );
  });
});

describe('no ClusterResourceQuota learned: nothing limits', () => {
  it('admits without reading the namespace, and writes nothing', async () => {
    const own = await testStore('crq-empty');
    try {
      const via = lambdaFor(plugin, own, { unknownNamespace: 'reject' } satisfies ClusterResourceQuotaConfig);
      own.reset();
      expect((await answer(create(pod('anywhere', 'p')), via)).allowed).toBe(true);
      expect(own.sent).toEqual(['Query']); // the quotas' listing, and nothing else
    } finally {
      own.close();
    }
  });
});

describe('concurrency: 40 concurrent creates in 4 namespaces against one quota of pods: 20', () => {
  it('admits exactly 20, and the ledger holds exactly their 20 charges', async () => {
    for (const ns of ['busy-0', 'busy-1', 'busy-2', 'busy-3']) await learnNamespace(ns, { labels: { busy: 'yes' } });
    await learnQuota(crq('busy', { labels: { matchLabels: { busy: 'yes' } } }, { hard: { pods: '20' } }));
    const pods = Array.from({ length: 40 }, (_, i) => pod(`busy-${i % 4}`, `c${i}`));
    const results = await Promise.all(pods.map((p) => answer(create(p))));
    const admitted = pods
      .filter((_, i) => results[i].allowed)
      .map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`);
    expect(admitted).toHaveLength(20);
    expect(
      results
        .filter((r) => !r.allowed)
        .every((r) =>
          r.status?.message?.endsWith('exceeded quota: busy, requested: pods=1, used: pods=20, limited: pods=20'),
        ),
    ).toBe(true);
    // No charge lost, none extra: every admitted pod is charged, nothing else is.
    expect(await charged('busy')).toEqual(admitted.sort());
  });
});

describe('a burst under DynamoDB latency: 48 concurrent creates in 3 namespaces against pods: 24, every store call 10 ms later', () => {
  it('admits exactly 24, refuses 24 with the quota message, and answers no 5xx', async () => {
    const slow = withLatency(localDynamoDb(store.endpoint), 10);
    const handler = createStatefulAdmissionHandler(plugin, {
      config,
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      state: (request) =>
        createRequestState(request, { plugin: plugin.metadata.name, client: slow, tableName: store.tableName }),
    });
    const burst = async (input: ReviewInput) =>
      handler(gatewayEvent('/cluster-resource-quota/validate', JSON.stringify(review(input))), lambdaContext);
    try {
      for (const ns of ['burst-0', 'burst-1', 'burst-2']) await learnNamespace(ns, { labels: { burst: 'yes' } });
      await learnQuota(crq('burst', { labels: { matchLabels: { burst: 'yes' } } }, { hard: { pods: '24' } }));
      const results = await Promise.all(
        Array.from({ length: 48 }, (_, i) => burst(create(pod(`burst-${i % 3}`, `b${i}`)))),
      );
      expect(results.map((r) => r.statusCode).filter((code) => code !== 200)).toEqual([]);
      const responses = results.map((r) => (JSON.parse(r.body) as AdmissionReviewWire).response!);
      expect(responses.filter((r) => r.allowed)).toHaveLength(24);
      expect(
        responses.filter((r) => !r.allowed).map((r) => r.status?.message?.replace(/^pods "b\d+"/, 'pods "b"')),
      ).toEqual(
        Array(24).fill(
          'pods "b" is forbidden: exceeded quota: burst, requested: pods=1, used: pods=24, limited: pods=24',
        ),
      );
      expect(await charged('burst')).toHaveLength(24);
    } finally {
      slow.destroy();
    }
  });
});

describe('reconciliation: reservations expire unless a later observation confirms them', () => {
  let clock = Date.now();
  const at = (uid: string) => store.state({ uid, dryRun: false }, () => clock);
  const validate = (input: ReviewInput & { uid: string }) => runPhase(plugin, 'validate', input, config, at(input.uid));

  it('an unconfirmed reservation stops counting once expired; one confirmed by an UPDATE in any selected namespace keeps counting', async () => {
    await learnNamespace('rec-1', { labels: { rec: 'yes' } });
    await learnNamespace('rec-2', { labels: { rec: 'yes' } });
    await learnQuota(crq('rec', { labels: { matchLabels: { rec: 'yes' } } }, { hard: { pods: '1' } }));
    expect((await validate({ ...create(pod('rec-1', 'never-persisted')), uid: 'r-1' })).wire.response!.allowed).toBe(
      true,
    );
    expect((await validate({ ...create(pod('rec-2', 'other')), uid: 'r-2' })).wire.response!.allowed).toBe(false);
    clock += 901_000; // past QUOTA_RESERVATION_SECONDS (900)
    expect((await validate({ ...create(pod('rec-2', 'real')), uid: 'r-3' })).wire.response!.allowed).toBe(true);
    const status = {
      operation: 'UPDATE' as const,
      subResource: 'status',
      object: pod('rec-2', 'real'),
      oldObject: pod('rec-2', 'real'),
      uid: 'r-4',
    };
    expect((await validate(status)).wire.response!.allowed).toBe(true);
    clock += 901_000;
    expect((await validate({ ...create(pod('rec-1', 'late')), uid: 'r-5' })).wire.response!.allowed).toBe(false);
  });
});

describe('what is not counted', () => {
  it('cluster-scoped writes, subresources other than pods/status, and kinds no quota counts', async () => {
    await learnNamespace('ignored', { labels: { ignored: 'yes' } });
    await learnQuota(crq('ignored', { labels: { matchLabels: { ignored: 'yes' } } }, { hard: { pods: '0' } }));
    expect((await answer(create(pod('ignored', 'x')))).allowed).toBe(false);
    expect((await answer({ ...create(pod('ignored', 'x')), subResource: 'eviction' })).allowed).toBe(true);
    expect((await answer(namespaceReview('CREATE', 'ignored-too', { labels: { ignored: 'yes' } }))).allowed).toBe(true);
    const lease: ReviewInput = {
      kind: { group: 'coordination.k8s.io', kind: 'Lease' },
      resource: { group: 'coordination.k8s.io', resource: 'leases' },
      object: { kind: 'Lease', metadata: { name: 'l', namespace: 'ignored' } },
    };
    expect((await answer(lease)).allowed).toBe(true);
  });
});

describe('TestClusterQuotaFuzzer (library-go clusterquotamapping): quotas and namespaces written at random', () => {
  // Upstream's vocabulary, verbatim.
  const keys = ['different', 'used', 'important', 'every', 'large'];
  const values = ['time', 'person'];
  const annotationKeys = ['different', 'used', 'important', 'every', 'large', 'foo.bar.baz/key', 'whitespace key'];
  const annotationValues = ['Person', 'time and place', 'Thing', 'me@example.com', 'system:admin'];
  const namespaceNames = [
    'tokillamockingbird',
    'harrypotter',
    '1984',
    'prideandprejudice',
    'thediaryofayounggirl',
    'animalfarm',
    'thehobbit',
    'thelittleprince',
    'thegreatgatsby',
    'thecatcherintherye',
    'lordoftherings',
    'janeeyre',
    'romeoandjuliet',
    'thechroniclesofnarnia',
    'lordoftheflies',
    'thegivingtree',
    'charlottesweb',
    'greeneggsandham',
    'alicesadventuresinwonderland',
    'littlewomen',
    'ofmiceandmend',
    'wutheringheights',
    'thehungergames',
    'gonewiththewind',
    'thepictureofdoriangray',
    'theadventuresofhuckleberryfinn',
    'fahrenheit451',
    'hamlet',
    'thehitchhikersguidetothegalaxy',
    'bravenewworld',
    'lesmiserables',
    'crimeandpunishment',
    'memoirsofageisha',
  ];
  const quotaNames = ['emma', 'olivia', 'sophia', 'ava', 'isabella', 'mia', 'abigail', 'emily', 'charlotte', 'harper'];
  const maxSelectorKeys = 2;
  const maxLabels = 5;

  /** A seeded generator (mulberry32), so a failure replays. */
  function generator(seed: number) {
    let state = seed >>> 0;
    const next = () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const intn = (n: number) => Math.floor(next() * n);
    const pick = (list: readonly string[]) => list[intn(list.length)];
    const map = (count: number, from: readonly string[], to: readonly string[]) => {
      const result: Record<string, string> = {};
      for (let i = 0; i < count; i++) result[pick(from)] = pick(to);
      return result;
    };
    return { intn, pick, map };
  }

  interface Selection {
    readonly labels: Record<string, string>;
    readonly annotations: Record<string, string>;
  }

  /** GetMatcher for upstream's quotas (matchLabels and an annotation map), read literally. */
  const matches = (quota: Selection, namespace: Selection) =>
    Object.entries(quota.labels).every(([k, v]) => namespace.labels[k] === v) &&
    Object.entries(quota.annotations).every(([k, v]) => namespace.annotations[k] === v);

  it.each([1, 2, 3])(
    'run %i: every quota selects exactly the namespaces GetMatcher selects',
    async (seed) => {
      const own = await testStore(`crq-fuzz-${seed}`);
      try {
        const via = lambdaFor(plugin, own, config);
        const send = (input: ReviewInput) => learn(input, via);
        const judge = async (input: ReviewInput) => {
          const response = await answer(input, via);
          expect(response.allowed, response.status?.message).toBe(true);
        };
        const random = generator(seed);
        const newQuota = (): Selection => {
          const count = random.intn(maxSelectorKeys) + 1;
          return {
            labels: random.map(count, keys, values),
            annotations: random.map(count, annotationKeys, annotationValues),
          };
        };
        const newNamespace = (): Selection => {
          const count = random.intn(maxLabels) + 1;
          return {
            labels: random.map(count, keys, values),
            annotations: random.map(count, annotationKeys, annotationValues),
          };
        };
        const quotaObject = (name: string, q: Selection) =>
          crq(name, { labels: { matchLabels: q.labels }, annotations: q.annotations }, { hard: { pods: '1000' } });
        const finalQuotas = new Map<string, Selection>();
        const finalNamespaces = new Map<string, Selection>();

        // CreateStartingQuotas, CreateStartingNamespaces.
        for (let i = random.intn(quotaNames.length); i > 0; i--) {
          const name = random.pick(quotaNames);
          if (finalQuotas.has(name)) continue;
          finalQuotas.set(name, newQuota());
          await send(classWrite('clusterresourcequotas', quotaObject(name, finalQuotas.get(name)!)));
        }
        for (let i = random.intn(namespaceNames.length); i > 0; i--) {
          const name = random.pick(namespaceNames);
          if (finalNamespaces.has(name)) continue;
          finalNamespaces.set(name, newNamespace());
          await send(namespaceReview('CREATE', name, finalNamespaces.get(name)!));
        }
        // 200 quota writes and 200 namespace writes, interleaved; 1 in 50 a delete of one that exists.
        for (let i = 0; i < 200; i++) {
          const quota = random.pick(quotaNames);
          const had = finalQuotas.get(quota);
          if (random.intn(50) === 0) {
            if (had) {
              finalQuotas.delete(quota);
              await send(classWrite('clusterresourcequotas', quotaObject(quota, had), 'DELETE'));
            }
          } else {
            const next = newQuota();
            finalQuotas.set(quota, next);
            await send(classWrite('clusterresourcequotas', quotaObject(quota, next), had ? 'UPDATE' : 'CREATE'));
          }
          const namespace = random.pick(namespaceNames);
          const was = finalNamespaces.get(namespace);
          if (random.intn(50) === 0) {
            if (was) {
              finalNamespaces.delete(namespace);
              await send(namespaceReview('DELETE', namespace, was));
            }
          } else {
            const next = newNamespace();
            finalNamespaces.set(namespace, next);
            await send(namespaceReview(was ? 'UPDATE' : 'CREATE', namespace, next));
          }
        }

        // checkState: a pod in every namespace, then each quota's ledger names its namespaces.
        for (const namespace of finalNamespaces.keys()) await judge(create(pod(namespace, 'probe')));
        for (const quota of quotaNames) {
          const selection = finalQuotas.get(quota);
          const expected = [...finalNamespaces]
            .filter(([, ns]) => selection !== undefined && matches(selection, ns))
            .map(([name]) => `${name}/probe`)
            .sort();
          expect(await charged(quota, own), `quota ${quota}`).toEqual(expected);
        }
      } finally {
        own.close();
      }
    },
    120_000,
  );
});
