// OpenShift's tables (openshift/kubernetes openshift-kube-apiserver/admission/autoscaling/
// clusterresourceoverride/admission_test.go) ported: TestConfigReader (6) and
// TestLimitRequestAdmission (16), each with upstream's follow-up checks (Validate accepts the
// mutated pod and refuses the original one when the mutation changed it). Namespaces and each
// case's LimitRanges (upstream's namespaceLimits) are learned through the plugin's learning webhook;
// namespaces carry the operator's opt-in label.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { type ClusterResourceOverrideConfig } from '../../functions/cluster-resource-override/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { Quantity } from '../../lib/kube/quantity.js';
import { configErrorOf } from '../support/config-error.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { classWrite } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, requestOf, runPhase } from '../support/review.js';

const SOURCE = { file: 'test', baseDir: '.' };
const BASE = { apiVersion: 'autoscaling.openshift.io/v1', kind: 'ClusterResourceOverrideConfig' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as ClusterResourceOverrideConfig;
const testConfig = (lc2mr: number, cr2lr: number, mr2lr: number) =>
  configure({
    ...BASE,
    limitCPUToMemoryPercent: lc2mr,
    cpuRequestToLimitPercent: cr2lr,
    memoryRequestToLimitPercent: mr2lr,
  });
const OPT_IN = 'clusterresourceoverrides.admission.autoscaling.openshift.io/enabled';
const PROJECT_ANNOTATION = 'autoscaling.openshift.io/cluster-resource-override-enabled';

let store: TestStore;
let nsIndex = 0;
beforeAll(async () => {
  store = await testStore('cluster-resource-override');
});
afterAll(() => store.close());

/** fakeNamespace(pluginEnabled), opted in with the operator's label, learned through the webhook. */
async function fakeNamespace(
  pluginEnabled: boolean,
  labels: Record<string, string> = { [OPT_IN]: 'true' },
  name = `fakens${++nsIndex}`,
): Promise<string> {
  const annotations: Record<string, string> = pluginEnabled ? {} : { [PROJECT_ANNOTATION]: 'false' };
  const result = await lambdaFor(
    plugin,
    store,
    testConfig(100, 50, 50),
  )('learn', namespaceReview('CREATE', name, { labels, annotations }));
  expect(result.review!.response!.allowed).toBe(true);
  return name;
}

const container = (resources: Record<string, unknown>) => ({ name: 'c', image: 'i', resources });
const podWith = (namespace: string, resources: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'name', namespace },
  spec: { initContainers: [{ ...container(resources), name: 'init' }], containers: [container(resources)] },
});
const testBestEffortPod = (ns: string) => podWith(ns, {});
const testPod = (ns: string, memLimit: string, memRequest: string, cpuLimit: string, cpuRequest: string) =>
  podWith(ns, { limits: { cpu: cpuLimit, memory: memLimit }, requests: { cpu: cpuRequest, memory: memRequest } });
const stateFor = (input: ReviewInput) => store.state(requestOf(input));

interface Case {
  name: string;
  config: ClusterResourceOverrideConfig;
  pod: (ns: string) => KubeObject;
  expectedMemRequest: string;
  expectedCpuLimit: string;
  expectedCpuRequest: string;
  pluginEnabled: boolean;
  /** Upstream's namespaceLimits: one LimitRange per entry, one Container (or claim) `min` each. */
  namespaceLimits?: { type: 'Container' | 'PersistentVolumeClaim'; min: Record<string, string> }[];
}

/** fakeMinCPULimitRange, fakeMinMemoryLimitRange, fakeMinStorageLimitRange */
const minCPU = (cpu: string) => ({ type: 'Container' as const, min: { cpu } });
const minMemory = (memory: string) => ({ type: 'Container' as const, min: { memory } });
const minStorage = (storage: string) => ({ type: 'PersistentVolumeClaim' as const, min: { storage } });
const LIMITS = [minCPU('567m'), minCPU('678m'), minMemory('700Gi'), minMemory('456Gi')];
const HIGH_LIMITS = [minCPU('10567m'), minCPU('20678m'), minMemory('700Gi'), minMemory('456Gi')];

/** Each LimitRange learned through the plugin's own learning webhook, as the apiserver sends its writes. */
async function learnLimitRanges(namespace: string, limits: NonNullable<Case['namespaceLimits']>): Promise<void> {
  const learn = lambdaFor(plugin, store, testConfig(100, 50, 50));
  for (const [i, item] of limits.entries()) {
    const limitRange = { metadata: { name: `lr-${i}`, namespace }, spec: { limits: [item] } };
    expect((await learn('learn', classWrite('limitranges', limitRange))).review?.response?.allowed).toBe(true);
  }
}

const nilConfig = configure(undefined);
const cases: Case[] = [
  {
    name: 'ignore pods that have no memory limit specified',
    config: testConfig(100, 50, 50),
    pod: testBestEffortPod,
    expectedMemRequest: '0',
    expectedCpuLimit: '0',
    expectedCpuRequest: '0',
    pluginEnabled: true,
  },
  {
    name: 'with namespace limits, ignore pods that have no memory limit specified',
    config: testConfig(100, 50, 50),
    pod: testBestEffortPod,
    expectedMemRequest: '0',
    expectedCpuLimit: '0',
    expectedCpuRequest: '0',
    pluginEnabled: true,
    namespaceLimits: LIMITS,
  },
  {
    name: 'test floor for memory and cpu',
    config: testConfig(100, 50, 50),
    pod: (ns) => testPod(ns, '1Mi', '0', '0', '0'),
    expectedMemRequest: '1Mi',
    expectedCpuLimit: '1m',
    expectedCpuRequest: '1m',
    pluginEnabled: true,
  },
  {
    name: 'with namespace limits, test floor for memory and cpu',
    config: testConfig(100, 50, 50),
    pod: (ns) => testPod(ns, '1Mi', '0', '0', '0'),
    expectedMemRequest: '456Gi',
    expectedCpuLimit: '567m',
    expectedCpuRequest: '567m',
    pluginEnabled: true,
    namespaceLimits: LIMITS,
  },
  {
    name: 'nil config',
    config: nilConfig,
    pod: (ns) => testPod(ns, '1', '1', '1', '1'),
    expectedMemRequest: '1',
    expectedCpuLimit: '1',
    expectedCpuRequest: '1',
    pluginEnabled: true,
  },
  {
    name: 'with namespace limits, nil config',
    config: nilConfig,
    pod: (ns) => testPod(ns, '1', '1', '1', '1'),
    expectedMemRequest: '1',
    expectedCpuLimit: '1',
    expectedCpuRequest: '1',
    pluginEnabled: true,
    namespaceLimits: LIMITS,
  },
  {
    name: 'all values are adjusted',
    config: testConfig(100, 50, 50),
    pod: (ns) => testPod(ns, '1Gi', '0', '2000m', '0'),
    expectedMemRequest: '512Mi',
    expectedCpuLimit: '1',
    expectedCpuRequest: '500m',
    pluginEnabled: true,
  },
  {
    name: 'with namespace limits, all values are adjusted to floor of namespace limits',
    config: testConfig(100, 50, 50),
    pod: (ns) => testPod(ns, '1Gi', '0', '2000m', '0'),
    expectedMemRequest: '456Gi',
    expectedCpuLimit: '10567m',
    expectedCpuRequest: '10567m',
    pluginEnabled: true,
    namespaceLimits: HIGH_LIMITS,
  },
  {
    name: 'just requests are adjusted',
    config: testConfig(0, 50, 50),
    pod: (ns) => testPod(ns, '10Mi', '0', '50m', '0'),
    expectedMemRequest: '5Mi',
    expectedCpuLimit: '50m',
    expectedCpuRequest: '25m',
    pluginEnabled: true,
  },
  {
    name: 'with namespace limits, all requests are adjusted to floor of namespace limits',
    config: testConfig(0, 50, 50),
    pod: (ns) => testPod(ns, '10Mi', '0', '50m', '0'),
    expectedMemRequest: '456Gi',
    expectedCpuLimit: '50m',
    expectedCpuRequest: '10567m',
    pluginEnabled: true,
    namespaceLimits: HIGH_LIMITS,
  },
  {
    name: 'project annotation disables overrides',
    config: testConfig(0, 50, 50),
    pod: (ns) => testPod(ns, '10Mi', '0', '50m', '0'),
    expectedMemRequest: '0',
    expectedCpuLimit: '50m',
    expectedCpuRequest: '0',
    pluginEnabled: false,
  },
  {
    name: 'with namespace limits, project annotation disables overrides',
    config: testConfig(0, 50, 50),
    pod: (ns) => testPod(ns, '10Mi', '0', '50m', '0'),
    expectedMemRequest: '0',
    expectedCpuLimit: '50m',
    expectedCpuRequest: '0',
    pluginEnabled: false,
    namespaceLimits: HIGH_LIMITS,
  },
  {
    name: "large values don't overflow",
    config: testConfig(100, 50, 50),
    pod: (ns) => testPod(ns, '1Ti', '0', '0', '0'),
    expectedMemRequest: '512Gi',
    expectedCpuLimit: '1024',
    expectedCpuRequest: '512',
    pluginEnabled: true,
  },
  {
    name: 'little values mess things up',
    config: testConfig(500, 10, 10),
    pod: (ns) => testPod(ns, '1.024Mi', '0', '0', '0'),
    expectedMemRequest: '1Mi',
    expectedCpuLimit: '5m',
    expectedCpuRequest: '1m',
    pluginEnabled: true,
  },
  {
    name: 'test fractional memory requests round up',
    config: testConfig(500, 10, 60),
    pod: (ns) => testPod(ns, '512Mi', '0', '0', '0'),
    expectedMemRequest: '307Mi',
    expectedCpuLimit: '2.5',
    expectedCpuRequest: '250m',
    pluginEnabled: true,
  },
  {
    name: 'test only containers types are considered with namespace limits',
    config: testConfig(100, 50, 50),
    pod: (ns) => testPod(ns, '1Gi', '0', '2000m', '0'),
    expectedMemRequest: '512Mi',
    expectedCpuLimit: '1',
    expectedCpuRequest: '500m',
    pluginEnabled: true,
    namespaceLimits: [minStorage('1567Mi')],
  },
];

const amount = (list: Record<string, unknown> | undefined, name: string) => Quantity.parse(String(list?.[name] ?? '0'));

describe('TestLimitRequestAdmission', () => {
  it.each(cases)('$name', async (c) => {
    const namespace = await fakeNamespace(c.pluginEnabled);
    if (c.namespaceLimits) await learnLimitRanges(namespace, c.namespaceLimits);
    const original = c.pod(namespace);
    const input: ReviewInput = { object: original };
    const result = await mutateIdempotently(plugin, input, c.config, stateFor(input));
    expect(deniedMessage(result)).toBeUndefined();
    const mutated = result.patchedObject!;
    const checked: ReviewInput = { object: mutated };
    expect(deniedMessage(await runPhase(plugin, 'validate', checked, c.config, stateFor(checked)))).toBeUndefined();
    if (result.patch.length > 0)
      expect(deniedMessage(await runPhase(plugin, 'validate', input, c.config, stateFor(input)))).toMatch(
        /^pods "name" is forbidden: spec\.initContainers\[0\]\.resources\./,
      );
    const spec = mutated.spec as {
      initContainers: { resources: { limits?: Record<string, unknown>; requests?: Record<string, unknown> } }[];
      containers: { resources: { limits?: Record<string, unknown>; requests?: Record<string, unknown> } }[];
    };
    for (const { resources } of [spec.initContainers[0], spec.containers[0]]) {
      expect(amount(resources.requests, 'memory').cmp(Quantity.parse(c.expectedMemRequest))).toBe(0);
      expect(amount(resources.requests, 'cpu').cmp(Quantity.parse(c.expectedCpuRequest))).toBe(0);
      expect(amount(resources.limits, 'cpu').cmp(Quantity.parse(c.expectedCpuLimit))).toBe(0);
    }
  });
});

describe('TestConfigReader', () => {
  it('process nil config: disabled', () => {
    expect(configure(undefined).enabled).toBe(false);
  });

  it.each([
    [
      'deserialize initialConfig yaml',
      { ...BASE, limitCPUToMemoryPercent: 10, cpuRequestToLimitPercent: 20, memoryRequestToLimitPercent: 30 },
      [0.1, 0.2, 0.3],
    ],
    [
      'deserialize yamlConfig',
      { ...BASE, limitCPUToMemoryPercent: 100, cpuRequestToLimitPercent: 10, memoryRequestToLimitPercent: 25 },
      [1, 0.1, 0.25],
    ],
  ])('%s', (_, raw, [lc, cr, mr]) => {
    expect(configure(raw)).toMatchObject({
      enabled: true,
      limitCPUToMemoryRatio: lc,
      cpuRequestToLimitRatio: cr,
      memoryRequestToLimitRatio: mr,
    });
  });

  it.each([
    ['completely broken config', 'asdfasdfasdF', 'configuration', 'must be a ClusterResourceOverrideConfig object'],
    [
      'choke on out-of-bounds ratio',
      { ...BASE, cpuRequestToLimitPercent: 200 },
      'cpuRequestToLimitPercent',
      'Invalid value: 200: must be between 0 and 100',
    ],
  ])('%s', (_, raw, field, detail) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(
      `autoscaling.openshift.io/ClusterResourceOverride: ${field}: ${detail}`,
    );
  });

  it('complain about no settings', () => {
    expect(configErrorOf(() => configure(BASE)).message).toBe(
      'autoscaling.openshift.io/ClusterResourceOverride: Forbidden: plugin enabled but no percentages were specified',
    );
  });
});

describe('which namespaces', () => {
  const config = testConfig(100, 50, 50);
  const changes = async (namespace: string) => {
    const input: ReviewInput = { object: testPod(namespace, '1Gi', '0', '2000m', '0') };
    return (await runPhase(plugin, 'mutate', input, config, stateFor(input))).patch.length > 0;
  };

  it('only those opted in with the label "true"', async () => {
    expect(await changes(await fakeNamespace(true, {}))).toBe(false);
    expect(await changes(await fakeNamespace(true, { [OPT_IN]: 'false' }))).toBe(false);
    expect(await changes(await fakeNamespace(true))).toBe(true);
  });

  it.each(['openshift', 'kubernetes', 'kube', 'openshift-monitoring', 'kubernetes-dashboard', 'kube-flannel'])(
    '%s is exempted even when opted in',
    async (name) => {
      expect(await changes(await fakeNamespace(true, { [OPT_IN]: 'true' }, name))).toBe(false);
    },
  );

  it('a namespace never seen is left alone with a warning (warn, the default), silently (skip), or refused (reject)', async () => {
    expect(config.unknownNamespace).toBe('warn');
    expect(await changes('never-seen')).toBe(false);
    const input: ReviewInput = { object: testPod('never-seen', '1Gi', '0', '2000m', '0') };
    const twin = await runPhase(plugin, 'validate', input, config, stateFor(input));
    expect(twin.wire.response!.allowed).toBe(true);
    expect(twin.wire.response!.warnings).toEqual([
      'autoscaling.openshift.io/ClusterResourceOverride: namespace "never-seen" is not learned yet, so whether it opted in to resource overrides is unknown and none were applied; load the cluster\'s existing namespaces with npm run sync (docs/seed-state.md)',
    ]);
    const skipped = await runPhase(plugin, 'validate', input, { ...config, unknownNamespace: 'skip' }, stateFor(input));
    expect(skipped.wire.response!.warnings).toBeUndefined();
    expect(
      deniedMessage(
        await runPhase(plugin, 'mutate', input, { ...config, unknownNamespace: 'reject' }, stateFor(input)),
      ),
    ).toBe('pods "name" is forbidden: namespace "never-seen" not found');
    expect(
      deniedMessage(
        await runPhase(plugin, 'validate', input, { ...config, unknownNamespace: 'reject' }, stateFor(input)),
      ),
    ).toBeUndefined();
  });
});

describe('the validating twin', () => {
  it("refuses, with upstream's message, a pod whose values the mutation would change", async () => {
    const namespace = await fakeNamespace(true);
    const input: ReviewInput = { object: testPod(namespace, '1Gi', '1Gi', '2000m', '0') };
    expect(deniedMessage(await runPhase(plugin, 'validate', input, testConfig(100, 50, 50), stateFor(input)))).toBe(
      'pods "name" is forbidden: spec.initContainers[0].resources.requests.memory mutated, expected: 512Mi, got 1Gi',
    );
    const absent: ReviewInput = { object: podWith(namespace, { limits: { memory: '1Gi' } }) };
    expect(deniedMessage(await runPhase(plugin, 'validate', absent, testConfig(0, 0, 50), stateFor(absent)))).toBe(
      'pods "name" is forbidden: spec.initContainers[0].resources.requests.memory mutated, expected: 512Mi, now absent',
    );
  });

  it('leaves updates and subresources alone', async () => {
    const namespace = await fakeNamespace(true);
    for (const input of [
      {
        operation: 'UPDATE' as const,
        object: testPod(namespace, '1Gi', '1Gi', '2', '2'),
        oldObject: testPod(namespace, '1Gi', '1Gi', '2', '2'),
      },
      { subResource: 'status', object: testPod(namespace, '1Gi', '1Gi', '2', '2') },
    ]) {
      expect(
        deniedMessage(await runPhase(plugin, 'validate', input, testConfig(100, 50, 50), stateFor(input))),
      ).toBeUndefined();
    }
  });
});

describe('the dryRun gate', () => {
  it('a dry-run Namespace write sends zero writes', async () => {
    store.reset();
    const result = await lambdaFor(
      plugin,
      store,
      testConfig(100, 50, 50),
    )('learn', namespaceReview('CREATE', 'dry', { labels: { [OPT_IN]: 'true' } }, { dryRun: true }));
    expect(result.review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
  });
});

describe('configuration', () => {
  it.each([
    [
      { ...BASE, cpuRequestToLimitPercentage: 5 },
      'cpuRequestToLimitPercentage',
      'unknown field "cpuRequestToLimitPercentage"; did you mean "cpuRequestToLimitPercent"?',
    ],
    [{ ...BASE, limitCPUToMemoryPercent: -1 }, 'limitCPUToMemoryPercent', 'Invalid value: -1: must be positive'],
    [
      { ...BASE, memoryRequestToLimitPercent: 101 },
      'memoryRequestToLimitPercent',
      'Invalid value: 101: must be between 0 and 100',
    ],
    [{ ...BASE, memoryRequestToLimitPercent: '50' }, 'memoryRequestToLimitPercent', 'must be an integer, got "50"'],
  ])('%j is refused at %s', (raw, field, detail) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(
      `autoscaling.openshift.io/ClusterResourceOverride: ${field}: ${detail}`,
    );
  });
});
