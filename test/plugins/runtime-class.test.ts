// Upstream's tables (plugin/pkg/admission/runtimeclass/admission_test.go) ported: TestSetOverhead
// (4 cases), TestSetScheduling (6), TestAdmit (3), TestValidate (3) and TestValidateOverhead (9).
// TestValidateInitialization (3) checks the informer and client wiring, which a webhook does not
// have. Upstream calls setOverhead, setScheduling and validateOverhead directly with a class in
// hand; here the class is learned through the plugin's own learning webhook (upstream's informer)
// and named by the pod, and every pod goes through the real Lambda handler: Admit as a real JSON
// patch, run again on its own output, then Validate on the result. The overhead rows run as 1.36
// (the default) and as 1.37, after upstream's change to pods with no or an empty overhead; each row
// says what each version answers. Plus: the version's configuration, dry runs and store failures.
import { describe, expect, it } from 'vitest';
import plugin, { type RuntimeClassConfig } from '../../functions/runtime-class/plugin.js';
import { configErrorOf } from '../support/config-error.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor } from '../support/dynamodb.js';
import { classClusters, classWrite, patchedObject } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';

type Invoke = ReturnType<typeof lambdaFor>;
const configure = (raw: unknown) => plugin.configure!(raw, { file: 'test', baseDir: '.' }) as RuntimeClassConfig;
const V136 = configure(undefined);
const V137 = configure({ kubernetesVersion: '1.37' });
const freshCluster = classClusters(plugin, 'runtimeclasses', V136);

const runtimeClass = (extra: Record<string, unknown> = {}): KubeObject => ({
  metadata: { name: 'foo' },
  handler: 'bar',
  ...extra,
});
const overheadClass = (cpu: string, memory: string) => runtimeClass({ overhead: { podFixed: { cpu, memory } } });
const guaranteed = { limits: { cpu: '1', memory: '10' }, requests: { cpu: '1', memory: '10' } };

/** newOverheadValidPod, naming the class when `runtimeClassName` is given. */
function overheadPod(
  name: string,
  resources: Record<string, unknown>,
  overhead: 'set' | 'empty' | 'none',
  runtimeClassName?: string,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'test' },
    spec: {
      containers: [{ image: 'foo:V0', resources, name: 'foo-0' }],
      ...(overhead === 'set' && { overhead: { cpu: '100m', memory: '1' } }),
      ...(overhead === 'empty' && { overhead: {} }),
      ...(runtimeClassName && { runtimeClassName }),
    },
  };
}

/** newSchedulingValidPod, naming the class foo. */
function schedulingPod(name: string, nodeSelector?: Record<string, string>, tolerations?: unknown[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'test' },
    spec: {
      containers: [{ name: 'c', image: 'i' }],
      runtimeClassName: 'foo',
      ...(nodeSelector && { nodeSelector }),
      ...(tolerations && { tolerations }),
    },
  };
}

const create = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({ object, ...extra });

/** Admit as a real patch, run again on its output (nothing more to do), then Validate on the result. */
async function admit(invoke: Invoke, pod: KubeObject): Promise<KubeObject> {
  const mutated = patchedObject(await invoke('mutate', create(pod)), pod);
  expect(patchedObject(await invoke('mutate', create(mutated)), mutated)).toEqual(mutated);
  const validated = (await invoke('validate', create(mutated))).review!.response!;
  expect(validated.allowed, validated.status?.message).toBe(true);
  return mutated;
}

async function refusal(invoke: Invoke, phase: 'mutate' | 'validate', pod: KubeObject) {
  const response = (await invoke(phase, create(pod))).review!.response!;
  expect(response.allowed).toBe(false);
  return response.status!;
}

const specOf = (pod: KubeObject) => pod.spec as Record<string, unknown>;

describe('TestSetOverhead (upstream table)', () => {
  it('overhead, no container requirements', async () => {
    const { invoke } = await freshCluster([overheadClass('100m', '1')]);
    const pod = overheadPod('no-resource-req-no-overhead', {}, 'none', 'foo');
    expect(await admit(invoke, pod)).toEqual(overheadPod('no-resource-req-no-overhead', {}, 'set', 'foo'));
  });

  it('overhead, guaranteed pod', async () => {
    const { invoke } = await freshCluster([overheadClass('100m', '1')]);
    const pod = overheadPod('guaranteed', guaranteed, 'none', 'foo');
    expect(specOf(await admit(invoke, pod)).overhead).toEqual({ cpu: '100m', memory: '1' });
  });

  it('overhead, pod with differing overhead already set', async () => {
    const { invoke } = await freshCluster([overheadClass('10', '10G')]);
    const status = await refusal(invoke, 'mutate', overheadPod('empty-requiremennts-overhead', {}, 'set', 'foo'));
    expect(status.message).toBe(
      `pods "empty-requiremennts-overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
    );
  });

  it('overhead, pod with same overhead already set', async () => {
    const { invoke } = await freshCluster([overheadClass('100m', '1')]);
    const pod = overheadPod('empty-requiremennts-overhead', {}, 'set', 'foo');
    expect(await admit(invoke, pod)).toEqual(pod);
  });
});

describe('TestSetScheduling (upstream table)', () => {
  const tolerationFoo = { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' };
  const tolerationFizz = { key: 'fizz', operator: 'Equal', value: 'buzz', effect: 'NoSchedule' };
  const cases: { name: string; scheduling: unknown; pod: KubeObject; expected?: KubeObject; error?: string }[] = [
    {
      name: 'scheduling, nil scheduling',
      scheduling: undefined,
      pod: schedulingPod('pod-with-conflict-node-selector', { foo: 'bar' }, []),
      expected: schedulingPod('pod-with-conflict-node-selector', { foo: 'bar' }, []),
    },
    {
      name: 'scheduling, conflict node selector',
      scheduling: { nodeSelector: { foo: 'conflict' } },
      pod: schedulingPod('pod-with-conflict-node-selector', { foo: 'bar' }, []),
      error:
        'pods "pod-with-conflict-node-selector" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[foo] = conflict; pod.spec.nodeSelector[foo] = bar',
    },
    {
      name: 'scheduling, nil node selector',
      scheduling: { nodeSelector: { foo: 'bar' } },
      pod: schedulingPod('pod-with-conflict-node-selector'),
      expected: schedulingPod('pod-with-conflict-node-selector', { foo: 'bar' }),
    },
    {
      name: 'scheduling, node selector with the same key value',
      scheduling: { nodeSelector: { foo: 'bar' } },
      pod: schedulingPod('pod-with-same-key-value-node-selector', { foo: 'bar' }),
      expected: schedulingPod('pod-with-same-key-value-node-selector', { foo: 'bar' }),
    },
    {
      name: 'scheduling, node selector with different key value',
      scheduling: { nodeSelector: { foo: 'bar', fizz: 'buzz' } },
      pod: schedulingPod('pod-with-different-key-value-node-selector', { foo: 'bar' }),
      expected: schedulingPod('pod-with-different-key-value-node-selector', { foo: 'bar', fizz: 'buzz' }),
    },
    {
      name: 'scheduling, multiple tolerations',
      scheduling: { tolerations: [tolerationFoo, tolerationFizz] },
      pod: schedulingPod('pod-with-tolerations', { foo: 'bar' }, [tolerationFoo]),
      expected: schedulingPod('pod-with-tolerations', { foo: 'bar' }, [tolerationFoo, tolerationFizz]),
    },
  ];
  it.each(cases)('$name', async ({ scheduling, pod, expected, error }) => {
    const { invoke } = await freshCluster([runtimeClass(scheduling ? { scheduling } : {})]);
    if (error !== undefined) {
      expect((await refusal(invoke, 'mutate', pod)).message).toBe(error);
      return;
    }
    expect(await admit(invoke, pod)).toEqual(expected);
  });
});

describe('TestAdmit (upstream table)', () => {
  const rc: KubeObject = { metadata: { name: 'runtimeClassName' }, handler: 'h' };
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'podname', namespace: 'ns' },
    spec: { containers: [{ name: 'c', image: 'i' }], runtimeClassName: 'runtimeClassName' },
  };

  it('runtimeClass found by lister (learned from its write)', async () => {
    const { invoke } = await freshCluster([rc]);
    expect(await admit(invoke, pod)).toEqual(pod);
  });

  it('runtimeClass found by client (here: loaded by `npm run sync`)', async () => {
    const { store, invoke } = await freshCluster([]);
    await store
      .state({ uid: 'sync', dryRun: false })
      .objectLearner.replaceAll(
        'runtimeclasses',
        [{ kind: 'stored', of: 'runtimeclasses', name: 'runtimeClassName', object: rc }],
        'sync',
      );
    expect(await admit(invoke, pod)).toEqual(pod);
  });

  it('runtimeClass not found by lister nor client: upstream Forbidden, in both phases', async () => {
    const { invoke } = await freshCluster([]);
    const message = 'pods "podname" is forbidden: pod rejected: RuntimeClass "runtimeClassName" not found';
    expect(await refusal(invoke, 'mutate', pod)).toMatchObject({ code: 403, message });
    expect(await refusal(invoke, 'validate', pod)).toMatchObject({ code: 403, message });
  });
});

const WITHOUT_CLASS =
  'pods "no-resource-req-no-overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead';
const MISMATCH = `pods "no-resource-req-no-overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`;

describe('TestValidate (upstream table: a plugin with no classes, pods naming none)', () => {
  const cases: { name: string; pod: KubeObject; error?: string }[] = [
    {
      name: 'No Overhead in RunntimeClass, Overhead set in pod',
      pod: overheadPod('no-resource-req-no-overhead', guaranteed, 'set'),
      error: WITHOUT_CLASS,
    },
    {
      name: 'Non-matching Overheads',
      pod: overheadPod('no-resource-req-no-overhead', {}, 'set'),
      error: WITHOUT_CLASS,
    },
    { name: 'Matching Overheads', pod: overheadPod('no-resource-req-no-overhead', {}, 'none') },
  ];
  describe.each([
    ['1.36', V136],
    ['1.37', V137],
  ])('as %s', (_, config) => {
    it.each(cases)('$name', async ({ pod, error }) => {
      const { invoke } = await freshCluster([], config);
      const response = (await invoke('validate', create(pod))).review!.response!;
      expect(response.allowed).toBe(error === undefined);
      if (error !== undefined) expect(response.status?.message).toBe(error);
    });
  });
});

describe('TestValidateOverhead (upstream table, each row as 1.36 and as 1.37)', () => {
  const noOverheadClass = runtimeClass();
  // Up to 1.36 a pod without an overhead is compared with the class's (nil is not {cpu, memory}),
  // and an empty `overhead: {}` counts as set; from 1.37 both pass Validate.
  const cases: {
    name: string;
    runtimeClass?: KubeObject;
    overhead: 'set' | 'empty' | 'none';
    v136?: string;
    v137?: string;
  }[] = [
    {
      name: 'Overhead part of RuntimeClass, no Overhead defined in pod',
      runtimeClass: overheadClass('100m', '1'),
      overhead: 'none',
      v136: MISMATCH,
    },
    {
      name: 'No Overhead in RunntimeClass, Overhead set in pod',
      runtimeClass: noOverheadClass,
      overhead: 'set',
      v136: WITHOUT_CLASS,
      v137: WITHOUT_CLASS,
    },
    { name: 'No RunntimeClass, Overhead set in pod', overhead: 'set', v136: WITHOUT_CLASS, v137: WITHOUT_CLASS },
    { name: 'No RunntimeClass, empty Overhead set in pod', overhead: 'empty', v136: WITHOUT_CLASS },
    { name: 'No RunntimeClass, Overhead is nil in pod', overhead: 'none' },
    {
      name: 'Non-matching Overheads',
      runtimeClass: overheadClass('10', '10G'),
      overhead: 'set',
      v136: MISMATCH,
      v137: MISMATCH,
    },
    {
      name: 'RuntimeClass is set, empty Overhead is in pod',
      runtimeClass: overheadClass('10', '10G'),
      overhead: 'empty',
      v136: MISMATCH,
    },
    {
      name: 'RuntimeClass is set, Overhead is nil in pod',
      runtimeClass: overheadClass('10', '10G'),
      overhead: 'none',
      v136: MISMATCH,
    },
    { name: 'Matching Overheads', runtimeClass: overheadClass('100m', '1'), overhead: 'set' },
  ];
  const rows = cases.flatMap(({ v136, v137, ...row }) => [
    { ...row, version: '1.36', config: V136, error: v136 },
    { ...row, version: '1.37', config: V137, error: v137 },
  ]);
  it.each(rows)('$name (as $version)', async ({ runtimeClass: rc, overhead, config, error }) => {
    const { invoke } = await freshCluster(rc ? [rc] : [], config);
    const resources = rc === undefined || rc === noOverheadClass ? guaranteed : {};
    const pod = overheadPod('no-resource-req-no-overhead', resources, overhead, rc ? 'foo' : undefined);
    const response = (await invoke('validate', create(pod))).review!.response!;
    expect(response.allowed).toBe(error === undefined);
    if (error !== undefined) expect(response.status?.message).toBe(error);
  });
});

describe("Admit and an empty overhead, by version (setOverhead's nil test, then its length test)", () => {
  it("1.36: an empty overhead is set, and not the class's: refused", async () => {
    const { invoke } = await freshCluster([overheadClass('100m', '1')], V136);
    expect((await refusal(invoke, 'mutate', overheadPod('p', {}, 'empty', 'foo'))).message).toBe(
      `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
    );
  });

  it("1.37: an empty overhead is none: the class's is set", async () => {
    const { invoke } = await freshCluster([overheadClass('100m', '1')], V137);
    expect(specOf(await admit(invoke, overheadPod('p', {}, 'empty', 'foo'))).overhead).toEqual({
      cpu: '100m',
      memory: '1',
    });
  });
});

describe('the Kubernetes version served', () => {
  it('defaults to 1.36, the newest released, with or without an entry', () => {
    expect(configure(undefined)).toEqual({ kubernetesVersion: '1.36' });
    expect(configure({})).toEqual({ kubernetesVersion: '1.36' });
    expect(configure({ kubernetesVersion: '1.30' })).toEqual({ kubernetesVersion: '1.30' });
  });

  it.each([
    [{ kubernetesVersion: '1.29' }, 'kubernetesVersion: Unsupported value: "1.29": supported values: "1.30", '],
    [{ kubernetesVersion: 1.37 }, 'kubernetesVersion: Invalid value: 1.37: must be a string'],
    [
      { kubernetesVersoin: '1.37' },
      'kubernetesVersoin: unknown field "kubernetesVersoin"; did you mean "kubernetesVersion"?',
    ],
  ])('%j is refused naming the field', (raw, message) => {
    expect(configErrorOf(() => configure(raw)).message).toContain(`RuntimeClass: ${message}`);
  });
});

describe('beyond the tables', () => {
  it('quantities compare by value: 0.1 CPU is 100m', async () => {
    const { invoke } = await freshCluster([overheadClass('0.1', '1')]);
    const pod = overheadPod('p', {}, 'set', 'foo');
    expect((await invoke('validate', create(pod))).review?.response?.allowed).toBe(true);
  });

  it('updates, subresources and objects that are not pods', async () => {
    const { invoke } = await freshCluster([]);
    const named = overheadPod('p', {}, 'none', 'unknown');
    expect(
      (await invoke('mutate', create(named, { operation: 'UPDATE', oldObject: named }))).review?.response?.allowed,
    ).toBe(true);
    expect((await invoke('mutate', create(named, { subResource: 'status' }))).review?.response?.allowed).toBe(true);
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'test' }, spec: {} };
    expect((await invoke('mutate', create(service))).review?.response?.status).toMatchObject({
      code: 400,
      message: 'Resource was marked with kind Pod but was unable to be converted',
    });
  });

  it('a RuntimeClass deleted is no longer found', async () => {
    const { invoke } = await freshCluster([overheadClass('100m', '1')]);
    await invoke('learn', classWrite('runtimeclasses', overheadClass('100m', '1'), 'DELETE'));
    expect((await refusal(invoke, 'mutate', overheadPod('p', {}, 'none', 'foo'))).code).toBe(403);
  });

  it('is opt-in: off until its AdmissionConfiguration entry names it', () => {
    expect(plugin.metadata.optIn).toBe(true);
  });
});

describe('the dryRun gate', () => {
  it('a dry-run RuntimeClass write sends zero writes and teaches nothing', async () => {
    const { store, invoke } = await freshCluster([]);
    store.reset();
    const dry = classWrite('runtimeclasses', overheadClass('100m', '1'), 'CREATE', { dryRun: true });
    expect((await invoke('learn', dry)).review?.response?.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect((await refusal(invoke, 'mutate', overheadPod('p', {}, 'none', 'foo'))).code).toBe(403);
  });
});

describe('store failures are HTTP 500, so failurePolicy decides', () => {
  it('an unreachable store answers 500, never an allow', async () => {
    const { store } = await freshCluster([]);
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    try {
      const broken = {
        ...store,
        state: (request: { uid: string; dryRun: boolean }) =>
          createRequestState(request, { client, tableName: store.tableName, plugin: plugin.metadata.name }),
      } as TestStore;
      const pod = overheadPod('p', {}, 'none', 'foo');
      expect((await lambdaFor(plugin, broken)('mutate', create(pod))).statusCode).toBe(500);
    } finally {
      client.destroy();
    }
  });
});
