// The in-memory state of `npm run check` and `npm run audit`: what one request records the next
// one reads, as over the DynamoDB table, and the dryRun gate (and audit's read-only run) writes
// nothing at all.
import { describe, expect, it } from 'vitest';
import { MemoryState } from '../../infra/check/memory-state.js';
import type { ChargedObject, QuotaSnapshot } from '../../lib/admission/ports.js';
import { namespaceReview } from '../support/dynamodb.js';
import { requestOf } from '../support/review.js';

const pod: ChargedObject = { namespace: 'team-a', resource: 'pods', name: 'web' };
const charge = { usage: { pods: '1' }, facts: {} };
const fitsOne = (snapshot: QuotaSnapshot) => (snapshot.charges.length >= 1 ? 'full' : undefined);

describe('MemoryState', () => {
  it('learns a namespace from one request for the next', async () => {
    const memory = new MemoryState();
    const create = requestOf(namespaceReview('CREATE', 'team-a', { labels: { env: 'prod' } }));
    await memory.state(create, 'p').namespaceLearner.observe(create);
    const learned = await memory.state(requestOf(), 'p').learnedNamespaces.get('team-a');
    expect(learned).toMatchObject({ name: 'team-a', labels: { env: 'prod' }, phase: 'Active' });
  });

  it('holds a reservation: a retry counts once, another request finds the name taken or the quota full', async () => {
    const memory = new MemoryState();
    const first = memory.state({ uid: 'a', dryRun: false }, 'resource-quota').quotaLedger;
    expect(await first.reserve(pod, charge, fitsOne)).toEqual({ kind: 'reserved' });
    expect(await first.reserve(pod, charge, fitsOne)).toEqual({ kind: 'already-counted' });
    const other = memory.state({ uid: 'b', dryRun: false }, 'resource-quota').quotaLedger;
    expect(await other.reserve(pod, charge, fitsOne)).toEqual({ kind: 'name-taken' });
    expect(await other.reserve({ ...pod, name: 'web-2' }, charge, fitsOne)).toEqual({
      kind: 'refused',
      refusal: 'full',
    });
  });

  it.each([
    ['a dry run', new MemoryState(), true],
    ['a read-only run (audit)', new MemoryState(true), false],
  ])('%s writes nothing', async (_what, memory, dryRun) => {
    const create = requestOf(namespaceReview('CREATE', 'team-a', { labels: { env: 'prod' } }, { dryRun }));
    const state = memory.state(create, 'p');
    await state.namespaceLearner.observe(create);
    expect(await state.quotaLedger.reserve(pod, charge, fitsOne)).toEqual({ kind: 'reserved' });
    expect(await state.tokenBuckets.take([{ key: 'k', spec: { qps: 0, burst: 1 } }])).toBe(-1);
    await state.decisionCache.put('image', { allowed: true, reason: '', annotations: {} }, 60);
    // A later request finds none of it: no namespace, the name free, the token there, no cache.
    const next = memory.state({ uid: 'next', dryRun: false }, 'p');
    expect(await next.learnedNamespaces.get('team-a')).toBeUndefined();
    expect(await next.quotaLedger.reserve(pod, charge, fitsOne)).toEqual({ kind: 'reserved' });
    expect(await next.tokenBuckets.take([{ key: 'k', spec: { qps: 0, burst: 1 } }])).toBe(-1);
    expect(await next.decisionCache.get('image')).toBeUndefined();
  });

  it('keeps one ledger per ClusterResourceQuota, across the namespaces it selects', async () => {
    const memory = new MemoryState();
    const full = (charges: readonly unknown[]) => (charges.length >= 1 ? 'full' : undefined);
    const first = memory.state({ uid: 'u1', dryRun: false }, 'cluster-resource-quota').clusterQuotaLedger;
    expect(await first.reserve('team-quota', pod, charge, full)).toEqual({ kind: 'reserved' });
    const second = memory.state({ uid: 'u2', dryRun: false }, 'cluster-resource-quota').clusterQuotaLedger;
    // The same name in another namespace is another object, and it finds the quota full.
    const elsewhere = { ...pod, namespace: 'team-b' };
    expect(await second.reserve('team-quota', elsewhere, charge, full)).toEqual({ kind: 'refused', refusal: 'full' });
    expect(await second.reserve('other-quota', elsewhere, charge, full)).toEqual({ kind: 'reserved' });
    // A namespace's own ResourceQuota ledger is not the cluster quota's.
    const own = memory.state({ uid: 'u3', dryRun: false }, 'resource-quota').quotaLedger;
    expect(await own.reserve(elsewhere, charge, fitsOne)).toEqual({ kind: 'reserved' });
    await first.release('team-quota', pod);
    expect(await second.reserve('team-quota', elsewhere, charge, full)).toEqual({ kind: 'reserved' });
  });

  it('takes tokens all or none, once per request uid', async () => {
    const memory = new MemoryState(false, () => 0);
    const buckets = [
      { key: 'server', spec: { qps: 0, burst: 2 } },
      { key: 'user', spec: { qps: 0, burst: 1 } },
    ];
    const a = memory.state({ uid: 'a', dryRun: false }, 'event-rate-limit').tokenBuckets;
    expect(await a.takeAll(buckets)).toEqual([]);
    expect(await a.takeAll(buckets)).toEqual([]); // a retry pays nothing twice
    const b = memory.state({ uid: 'b', dryRun: false }, 'event-rate-limit').tokenBuckets;
    expect(await b.takeAll(buckets)).toEqual([1]);
    // b took nothing: the server bucket still has its second token.
    expect(await b.takeAll([buckets[0]])).toEqual([]);
  });

  it('keeps each plugin’s cached decisions apart', async () => {
    const memory = new MemoryState();
    await memory
      .state({ uid: 'a', dryRun: false }, 'image-policy-webhook')
      .decisionCache.put('k', { allowed: false, reason: 'no', annotations: {} }, 60);
    expect(await memory.state({ uid: 'b', dryRun: false }, 'other').decisionCache.get('k')).toBeUndefined();
    expect(await memory.state({ uid: 'b', dryRun: false }, 'image-policy-webhook').decisionCache.get('k')).toEqual({
      allowed: false,
      reason: 'no',
      annotations: {},
    });
  });
});
