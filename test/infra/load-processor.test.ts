// The artillery processor (infra/load/processor.cjs) driven as artillery drives it: one user
// request's webhook calls, each answer checked as the apiserver would, and the counters the run's
// `ensure` thresholds and report read.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'load-processor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [] } };
const plan = {
  namespaces: ['load-a'],
  kinds: {
    podCreate: {
      review: {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'x', kind: { kind: 'Pod' }, operation: 'CREATE', object: pod },
      },
      calls: [
        { webhook: 'a.mutate', phase: 'mutate', path: '/a/mutate' },
        { webhook: 'b.validate', phase: 'validate', path: '/b/validate' },
      ],
    },
  },
};
const planFile = join(dir, 'plan.json');
writeFileSync(planFile, JSON.stringify(plan));
process.env.LOAD_PLAN = planFile;
process.env.LOAD_BASE_URL = 'https://127.0.0.1:8443/';
type Step = (...args: unknown[]) => void;
const processor = createRequire(import.meta.url)('../../infra/load/processor.cjs') as Record<string, Step>;

/** One virtual user: the starter, then each call sent and answered by `answer`. */
function replay(answer: (review: any, call: number) => { statusCode: number; body: unknown }) {
  const counters: string[] = [];
  const events = { emit: (_type: string, name: string) => counters.push(name) };
  const context: { vars: Record<string, any> } = { vars: {} };
  const errors: unknown[] = [];
  processor.podCreate(context, events, () => undefined);
  const urls: string[] = [];
  for (let call = 0; ; call++) {
    let more = false;
    processor.hasNextCall(context, (next: boolean) => {
      more = next;
    });
    if (!more) break;
    const params: Record<string, any> = { headers: {} };
    processor.nextCall(params, context, events, () => undefined);
    urls.push(params.url);
    processor.checkAnswer(params, answer(params.json, call), context, events, (error?: unknown) => {
      if (error) errors.push(error);
    });
    if (errors.length > 0) break;
  }
  return { counters, errors, urls, review: context.vars.admission.review };
}

const allowed = (review: any, extra: Record<string, unknown> = {}) => ({
  statusCode: 200,
  body: {
    apiVersion: review.apiVersion,
    kind: 'AdmissionReview',
    response: { uid: review.request.uid, allowed: true, ...extra },
  },
});
const addLabel = Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }])).toString(
  'base64',
);

describe('the load processor', () => {
  it('replays every call, applies the patch before the next one and counts the request as patched and allowed', () => {
    const seen: unknown[] = [];
    const run = replay((review, call) => {
      seen.push(structuredClone(review.request.object.metadata));
      return call === 0 ? allowed(review, { patchType: 'JSONPatch', patch: addLabel }) : allowed(review);
    });
    expect(run.errors).toEqual([]);
    expect(run.urls).toEqual([
      'https://127.0.0.1:8443/a/mutate?timeout=10s',
      'https://127.0.0.1:8443/b/validate?timeout=10s',
    ]);
    expect((seen[1] as { labels?: unknown }).labels).toEqual({ a: 'b' });
    expect(run.counters).toEqual(['admission.requests.podCreate', 'admission.patched', 'admission.allowed']);
  });

  it('stops at the first denial and counts it', () => {
    const run = replay((review) => ({
      statusCode: 200,
      body: {
        apiVersion: review.apiVersion,
        kind: 'AdmissionReview',
        response: { uid: review.request.uid, allowed: false },
      },
    }));
    expect(run.errors).toEqual([]);
    expect(run.urls).toHaveLength(1);
    expect(run.counters).toEqual(['admission.requests.podCreate', 'admission.denied']);
  });

  it('fails the user on what the apiserver counts as a failed call', () => {
    expect(replay(() => ({ statusCode: 500, body: 'boom' })).errors).toMatchObject([
      { message: 'HTTP 500 from a.mutate' },
    ]);
    expect(
      replay((review) => ({
        ...allowed(review),
        body: { ...allowed(review).body, response: { uid: 'other', allowed: true } },
      })).errors,
    ).toMatchObject([{ message: 'uid not echoed by a.mutate' }]);
    expect(
      replay((review, call) =>
        call === 1 ? allowed(review, { patchType: 'JSONPatch', patch: addLabel }) : allowed(review),
      ).errors,
    ).toMatchObject([{ message: 'patch from validating b.validate' }]);
  });
});
