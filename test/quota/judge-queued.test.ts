// What a create behind others in a namespace's queue can tell about each of them from its charge
// alone: whether upstream's CheckRequest would refuse it beside what those before it took, admit
// it, or needs the object itself to say (a pod under a quota on compute resources must state them
// in every container). The ledger refuses a create at once only on `exceeds` and `fits`.
import { describe, expect, it } from 'vitest';
import type { LearnedQuota, QueuedVerdict } from '../../lib/admission/ports.js';
import type { LimitedResource } from '../../lib/quota/check.js';
import { judgeQueued } from '../../lib/quota/check.js';
import type { Usage } from '../../lib/quota/quota.js';

const quota = (hard: Record<string, string>, scopes: string[] = []): LearnedQuota => ({
  namespace: 'ns',
  name: 'q',
  hard,
  scopes,
});
const podCharge = (usage: Record<string, string>, facts: Record<string, string | boolean> = {}): Usage => ({
  usage: { pods: '1', 'count/pods': '1', ...usage },
  facts: { pod: true, bestEffort: false, terminating: false, priorityClass: '', ...facts },
});
const claimCharge = (storage: string): Usage => ({
  usage: { persistentvolumeclaims: '1', 'requests.storage': storage },
  facts: {},
});
const gpuLimited: LimitedResource[] = [{ apiGroup: '', resource: 'pods', matchContains: ['example.com/gpu'] }];

describe('judgeQueued', () => {
  it.each<{
    name: string;
    hard: Record<string, string>;
    scopes?: string[];
    charges: Usage[];
    queued: Usage;
    verdict: QueuedVerdict;
  }>([
    { name: 'room left: fits', hard: { pods: '2' }, charges: [podCharge({})], queued: podCharge({}), verdict: 'fits' },
    {
      name: 'the quota full with those before it: exceeds',
      hard: { pods: '2' },
      charges: [podCharge({}), podCharge({})],
      queued: podCharge({}),
      verdict: 'exceeds',
    },
    {
      name: 'a quota whose scope does not match it: fits',
      hard: { pods: '1' },
      scopes: ['Terminating'],
      charges: [podCharge({}, { terminating: true })],
      queued: podCharge({}),
      verdict: 'fits',
    },
    {
      name: 'a pod under a quota on limits.cpu: unknown, its containers decide',
      hard: { pods: '5', 'limits.cpu': '4' },
      charges: [],
      queued: podCharge({ 'limits.cpu': '1' }),
      verdict: 'unknown',
    },
    {
      name: 'a pod under a quota on cpu (requests.cpu): unknown',
      hard: { cpu: '4' },
      charges: [],
      queued: podCharge({}),
      verdict: 'unknown',
    },
    {
      name: 'a claim under a quota on storage: no containers to state anything',
      hard: { 'requests.storage': '5Gi' },
      charges: [claimCharge('4Gi')],
      queued: claimCharge('2Gi'),
      verdict: 'exceeds',
    },
  ])('$name', ({ hard, scopes = [], charges, queued, verdict }) => {
    expect(judgeQueued({ quotas: [quota(hard, scopes)], charges }, queued, 'pods', [])).toBe(verdict);
  });

  it('limitedResources: a queued pod consuming a limited resource no quota covers is refused', () => {
    const gpu = podCharge({ 'requests.example.com/gpu': '1' });
    expect(judgeQueued({ quotas: [quota({ pods: '5' })], charges: [] }, gpu, 'pods', gpuLimited)).toBe('exceeds');
    expect(
      judgeQueued({ quotas: [quota({ 'requests.example.com/gpu': '2' })], charges: [] }, gpu, 'pods', gpuLimited),
    ).toBe('fits');
    // The limited resource is pods in the core group: a deployment is not limited by it.
    const deployment: Usage = { usage: { 'count/deployments.apps': '1', 'requests.example.com/gpu': '1' }, facts: {} };
    expect(judgeQueued({ quotas: [], charges: [] }, deployment, 'deployments.apps', gpuLimited)).toBe('fits');
  });
});
