// Quota usage evaluation, as the ResourceQuota webhook and `npm run sync` share it. Ported from
// upstream pkg/quota/v1/evaluator/core: TestPodEvaluatorUsage and
// TestPersistentVolumeClaimEvaluatorUsage. Pods: 13 of upstream's 18 cases pass as upstream; a
// terminated pod is asserted as we behave; not ported: the three pod-level resources cases (no
// PodLevelResources gate) and "deletion timestamp exceeded" (no clock). Claims: 4 of 6 as
// upstream; "rounded" is asserted as we behave, "by-class-rounded" (the same difference) is not
// ported. Quantities are compared by value.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/admission/types.js';
import { Quantity } from '../../lib/kube/quantity.js';
import { usageOf } from '../../lib/quota/usage.js';

type Resources = Record<string, string>;
const container = (requests: Resources, limits: Resources = {}) => ({
  name: 'c',
  image: 'i',
  resources: { requests, limits },
});
const pod = (spec: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject => ({
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns' },
  spec,
  ...extra,
});
const POD_COUNTS = { pods: '1', 'count/pods': '1' };

/** Equal keys, and every quantity equal by value. */
function expectUsage(actual: Readonly<Record<string, string>>, expected: Resources): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [name, value] of Object.entries(expected))
    expect(Quantity.parse(actual[name]).cmp(Quantity.parse(value)), name).toBe(0);
}

describe('TestPodEvaluatorUsage', () => {
  const dongle = 'example.com/dongle';
  const cases: { name: string; pod: KubeObject; usage: Resources }[] = [
    {
      name: 'init container CPU',
      pod: pod({ initContainers: [container({ cpu: '1m' }, { cpu: '2m' })] }),
      usage: { 'requests.cpu': '1m', 'limits.cpu': '2m', cpu: '1m', ...POD_COUNTS },
    },
    {
      name: 'init container MEM',
      pod: pod({ initContainers: [container({ memory: '1m' }, { memory: '2m' })] }),
      usage: { 'requests.memory': '1m', 'limits.memory': '2m', memory: '1m', ...POD_COUNTS },
    },
    {
      name: 'init container local ephemeral storage',
      pod: pod({ initContainers: [container({ 'ephemeral-storage': '32Mi' }, { 'ephemeral-storage': '64Mi' })] }),
      usage: {
        'ephemeral-storage': '32Mi',
        'requests.ephemeral-storage': '32Mi',
        'limits.ephemeral-storage': '64Mi',
        ...POD_COUNTS,
      },
    },
    {
      name: 'init container hugepages',
      pod: pod({ initContainers: [container({ 'hugepages-2Mi': '100Mi' })] }),
      usage: { 'hugepages-2Mi': '100Mi', 'requests.hugepages-2Mi': '100Mi', ...POD_COUNTS },
    },
    {
      name: 'init container extended resources',
      pod: pod({ initContainers: [container({ [dongle]: '3' }, { [dongle]: '3' })] }),
      usage: { [`requests.${dongle}`]: '3', ...POD_COUNTS },
    },
    {
      name: 'container CPU',
      pod: pod({ containers: [container({ cpu: '1m' }, { cpu: '2m' })] }),
      usage: { 'requests.cpu': '1m', 'limits.cpu': '2m', cpu: '1m', ...POD_COUNTS },
    },
    {
      name: 'container MEM',
      pod: pod({ containers: [container({ memory: '1m' }, { memory: '2m' })] }),
      usage: { 'requests.memory': '1m', 'limits.memory': '2m', memory: '1m', ...POD_COUNTS },
    },
    {
      name: 'container local ephemeral storage',
      pod: pod({ containers: [container({ 'ephemeral-storage': '32Mi' }, { 'ephemeral-storage': '64Mi' })] }),
      usage: {
        'ephemeral-storage': '32Mi',
        'requests.ephemeral-storage': '32Mi',
        'limits.ephemeral-storage': '64Mi',
        ...POD_COUNTS,
      },
    },
    {
      name: 'container hugepages',
      pod: pod({ containers: [container({ 'hugepages-2Mi': '100Mi' })] }),
      usage: { 'hugepages-2Mi': '100Mi', 'requests.hugepages-2Mi': '100Mi', ...POD_COUNTS },
    },
    {
      name: 'container extended resources',
      pod: pod({ containers: [container({ [dongle]: '3' }, { [dongle]: '3' })] }),
      usage: { [`requests.${dongle}`]: '3', ...POD_COUNTS },
    },
    {
      name: 'init container maximums override sum of containers',
      pod: pod({
        initContainers: [
          container({ cpu: '4', memory: '100M', [dongle]: '4' }, { cpu: '8', memory: '200M', [dongle]: '4' }),
          container({ cpu: '1', memory: '50M', [dongle]: '2' }, { cpu: '2', memory: '100M', [dongle]: '2' }),
        ],
        containers: [
          container({ cpu: '1', memory: '50M', [dongle]: '1' }, { cpu: '2', memory: '100M', [dongle]: '1' }),
          container({ cpu: '2', memory: '25M', [dongle]: '2' }, { cpu: '5', memory: '50M', [dongle]: '2' }),
        ],
      }),
      usage: {
        'requests.cpu': '4',
        'requests.memory': '100M',
        'limits.cpu': '8',
        'limits.memory': '200M',
        cpu: '4',
        memory: '100M',
        [`requests.${dongle}`]: '4',
        ...POD_COUNTS,
      },
    },
    {
      name: 'pod deletion timestamp not exceeded',
      pod: pod(
        { containers: [container({ cpu: '1' }, { cpu: '2' })] },
        {
          metadata: { name: 'p', deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 30 },
          status: { reason: 'NodeLost' },
        },
      ),
      usage: { 'requests.cpu': '1', 'limits.cpu': '2', cpu: '1', ...POD_COUNTS },
    },
    {
      name: 'count pod overhead as usage',
      pod: pod({ overhead: { cpu: '1' }, containers: [container({ cpu: '1' }, { cpu: '2' })] }),
      usage: { 'requests.cpu': '2', 'limits.cpu': '3', cpu: '2', ...POD_COUNTS },
    },
  ];

  it.each(cases)('$name', ({ pod: object, usage }) => {
    expectUsage(usageOf({ group: '', resource: 'pods' }, object).usage, usage);
  });

  // Upstream keeps `count/pods: 1` for a pod in a terminal phase ("terminated generic count still
  // appears"); the ledger charges such a pod nothing at all, so count/pods quotas do not count it.
  it('terminated pod: charged nothing (upstream still counts count/pods)', () => {
    const succeeded = pod(
      { containers: [container({ [dongle]: '3' }, { [dongle]: '3' })] },
      { status: { phase: 'Succeeded' } },
    );
    expectUsage(usageOf({ group: '', resource: 'pods' }, succeeded).usage, {});
  });

  it('scope facts: terminating, best effort and priority class', () => {
    const facts = usageOf(
      { group: '', resource: 'pods' },
      pod({ activeDeadlineSeconds: 0, priorityClassName: 'high', containers: [{ name: 'c', image: 'i' }] }),
    ).facts;
    expect(facts).toEqual({ pod: true, terminating: true, bestEffort: true, priorityClass: 'high' });
  });
});

describe('TestPersistentVolumeClaimEvaluatorUsage', () => {
  const claim = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'foo', namespace: 'ns' },
    spec: { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], ...spec },
    ...(status && { status }),
  });
  const storage = (size: string) => ({ resources: { requests: { storage: size } } });
  const CLAIM_COUNTS = { persistentvolumeclaims: '1', 'count/persistentvolumeclaims': '1' };
  const GOLD = 'gold.storageclass.storage.k8s.io/';
  const cases: { name: string; claim: KubeObject; usage: Resources }[] = [
    { name: 'pvc-usage', claim: claim(storage('10Gi')), usage: { 'requests.storage': '10Gi', ...CLAIM_COUNTS } },
    {
      name: 'pvc-usage-by-class',
      claim: claim({ ...storage('10Gi'), storageClassName: 'gold' }),
      usage: {
        'requests.storage': '10Gi',
        [`${GOLD}requests.storage`]: '10Gi',
        [`${GOLD}persistentvolumeclaims`]: '1',
        ...CLAIM_COUNTS,
      },
    },
    {
      name: 'pvc-usage-higher-allocated-resource',
      claim: claim(storage('5G'), { allocatedResources: { storage: '10G' } }),
      usage: { 'requests.storage': '10G', ...CLAIM_COUNTS },
    },
    {
      name: 'pvc-usage-lower-allocated-resource',
      claim: claim(storage('10G'), { allocatedResources: { storage: '5G' } }),
      usage: { 'requests.storage': '10G', ...CLAIM_COUNTS },
    },
  ];

  it.each(cases)('$name', ({ claim: object, usage }) => {
    expectUsage(usageOf({ group: '', resource: 'persistentvolumeclaims' }, object).usage, usage);
  });

  // Upstream rounds a fractional storage request up to a whole byte (pvc-usage-rounded: 1001m
  // counts as 2); the ledger charges it as written.
  it('pvc-usage-rounded: charged as written (upstream rounds 1001m up to 2)', () => {
    expectUsage(usageOf({ group: '', resource: 'persistentvolumeclaims' }, claim(storage('1001m'))).usage, {
      'requests.storage': '1001m',
      ...CLAIM_COUNTS,
    });
  });

  it('the beta storage-class annotation wins over the field', () => {
    const annotated: KubeObject = {
      ...claim({ ...storage('1Gi'), storageClassName: 'silver' }),
      metadata: { name: 'foo', annotations: { 'volume.beta.kubernetes.io/storage-class': 'gold' } },
    };
    expectUsage(usageOf({ group: '', resource: 'persistentvolumeclaims' }, annotated).usage, {
      'requests.storage': '1Gi',
      [`${GOLD}requests.storage`]: '1Gi',
      [`${GOLD}persistentvolumeclaims`]: '1',
      ...CLAIM_COUNTS,
    });
  });
});

describe('object counts', () => {
  it.each([
    [
      { group: '', resource: 'services' },
      { services: '1', 'count/services': '1' },
    ],
    [{ group: 'apps', resource: 'deployments' }, { 'count/deployments.apps': '1' }],
    [{ group: 'batch', resource: 'cronjobs' }, { 'count/cronjobs.batch': '1' }],
  ] as const)('%o', (resource, usage) => {
    const result = usageOf(resource, { kind: 'X', metadata: { name: 'x' } });
    expectUsage(result.usage, usage);
    expect(result.facts).toEqual({});
  });
});
