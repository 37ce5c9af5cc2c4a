// Upstream's tables (plugin/pkg/admission/priority/admission_test.go) ported: TestPriorityClassAdmission
// (8 cases), TestDefaultPriority (5) and TestPodAdmission (16). Each case's PriorityClasses are
// learned through the plugin's own learning webhook (upstream's informer), on a table of its own;
// pods and classes go through the real Lambda handler, and every mutation is applied as a real JSON
// patch and run again on its own output (upstream's WithReinvocationTesting). Plus: the system
// classes known without being learned, updates keeping priority, dry runs and store failures.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/priority/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor } from '../support/dynamodb.js';
import { classClusters, classWrite, patchedObject } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';

const priorityClass = (
  name: string,
  value: number,
  extra: { globalDefault?: boolean; preemptionPolicy?: string; description?: string } = {},
): KubeObject => ({ metadata: { name }, value, ...extra });

const SYSTEM_CRITICAL_PRIORITY = 2000000000;
const defaultClass1 = priorityClass('default1', 1000, { globalDefault: true });
const defaultClass2 = priorityClass('default2', 2000, { globalDefault: true });
const nondefaultClass1 = priorityClass('nondefault1', 2000, { description: 'Just a test priority class' });
const systemClusterCritical = priorityClass('system-cluster-critical', SYSTEM_CRITICAL_PRIORITY, {
  globalDefault: true,
});
const neverPreemptionPolicyClass = priorityClass('nopreemptionpolicy', 2000, {
  globalDefault: true,
  preemptionPolicy: 'Never',
});
const preemptionPolicyClass = priorityClass('nopreemptionpolicy', 2000, {
  globalDefault: true,
  preemptionPolicy: 'PreemptLowerPriority',
});

type Invoke = ReturnType<typeof lambdaFor>;
const freshCluster = classClusters(plugin, 'priorityclasses');

const classReview = (object: KubeObject | null, operation: 'CREATE' | 'UPDATE' | 'DELETE', name: string) => ({
  ...classWrite('priorityclasses', object ?? { metadata: { name } }, operation),
  name,
});

describe('TestPriorityClassAdmission (upstream table)', () => {
  const systemClass = priorityClass('system-test', 1000000000 + 1, { description: 'Name has system critical prefix' });
  const apiserver = { username: 'system:apiserver', groups: ['system:masters'] };
  const cases: {
    name: string;
    existingClasses: KubeObject[];
    newClass: KubeObject;
    operation: 'CREATE' | 'UPDATE' | 'DELETE';
    userInfo?: ReviewInput['userInfo'];
    expectError: boolean;
  }[] = [
    {
      name: 'create operator with default class',
      existingClasses: [],
      newClass: defaultClass1,
      operation: 'CREATE',
      expectError: false,
    },
    {
      name: 'create operator with one existing default class',
      existingClasses: [defaultClass1],
      newClass: defaultClass2,
      operation: 'CREATE',
      expectError: true,
    },
    {
      name: 'create operator with system name and value allowed by admission controller',
      existingClasses: [],
      newClass: systemClass,
      operation: 'CREATE',
      userInfo: apiserver,
      expectError: false,
    },
    {
      name: 'update operator with default class',
      existingClasses: [],
      newClass: defaultClass1,
      operation: 'UPDATE',
      expectError: false,
    },
    {
      name: 'update operator with one existing default class',
      existingClasses: [defaultClass1],
      newClass: defaultClass2,
      operation: 'UPDATE',
      expectError: true,
    },
    {
      name: 'update operator with system name and value allowed by admission controller',
      existingClasses: [],
      newClass: systemClass,
      operation: 'UPDATE',
      userInfo: apiserver,
      expectError: false,
    },
    {
      name: 'update operator with different default classes',
      existingClasses: [defaultClass1],
      newClass: defaultClass2,
      operation: 'UPDATE',
      expectError: true,
    },
    {
      name: 'delete operation with default class',
      existingClasses: [],
      newClass: defaultClass1,
      operation: 'DELETE',
      expectError: false,
    },
  ];
  it.each(cases)('$name', async ({ existingClasses, newClass, operation, userInfo, expectError }) => {
    const { invoke } = await freshCluster(existingClasses);
    const input = { ...classWrite('priorityclasses', newClass, operation), ...(userInfo && { userInfo }) };
    const response = (await invoke('validate', input)).review!.response!;
    expect(response.allowed).toBe(!expectError);
    if (expectError) {
      expect(response.status?.message).toBe(
        `priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 is already marked as default. Only one default can exist`,
      );
    }
  });

  // The apiserver calls the learning and the judging webhook of one write concurrently: the
  // learning one may record the class first. Upstream's lister never holds the object being
  // judged, so every row answers as above with the learned state already holding it.
  it.each(cases)('$name, the write already learned', async ({ existingClasses, newClass, operation, ...row }) => {
    const { store, invoke } = await freshCluster(existingClasses);
    const name = newClass.metadata!.name!;
    const learner = store.state({ uid: 'learned-first', dryRun: false }).objectLearner;
    await learner.record({ kind: 'stored', of: 'priorityclasses', name, object: newClass }, 'learned-first');
    const input = {
      ...classWrite('priorityclasses', newClass, operation),
      ...(row.userInfo && { userInfo: row.userInfo }),
    };
    expect((await invoke('validate', input)).review!.response!.allowed).toBe(!row.expectError);
  });
});

describe('a PriorityClass write judged beside its own observation', () => {
  it('a default created while its learning call runs is admitted, whichever lands first', async () => {
    for (let i = 0; i < 10; i++) {
      const { invoke } = await freshCluster([nondefaultClass1]);
      const write = classWrite('priorityclasses', defaultClass1);
      const answers = await Promise.all([invoke('learn', write), invoke('validate', write)]);
      expect(answers.map((a) => a.review?.response?.allowed)).toEqual([true, true]);
    }
  });

  it('an UPDATE is judged against the stored class (oldObject), not the learned new one', async () => {
    // default2 exists; nondefault1 becomes a default. The learned state already holds the new
    // nondefault1 at 500 (lower than default2): the lister would still hold the old one.
    const { store, invoke } = await freshCluster([defaultClass2]);
    const promoted = priorityClass('nondefault1', 500, { globalDefault: true });
    await store
      .state({ uid: 'learned-first', dryRun: false })
      .objectLearner.record({ kind: 'stored', of: 'priorityclasses', name: 'nondefault1', object: promoted }, 'l');
    const update = { ...classWrite('priorityclasses', promoted, 'UPDATE'), oldObject: nondefaultClass1 };
    const response = (await invoke('validate', update)).review!.response!;
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe(
      'priorityclasses.scheduling.k8s.io "nondefault1" is forbidden: PriorityClass default2 is already marked as default. Only one default can exist',
    );
  });

  it('an UPDATE of the default that keeps it the default is admitted, another default learned or not', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const relabelled = { ...defaultClass1, description: 'still the default' };
    const update = { ...classWrite('priorityclasses', relabelled, 'UPDATE'), oldObject: defaultClass1 };
    expect((await invoke('validate', update)).review!.response!.allowed).toBe(true);
  });
});

const pod = (
  name: string,
  namespace: string,
  spec: Record<string, unknown> = {},
  annotations?: Record<string, string>,
) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(annotations && { annotations }) },
    spec: { containers: [{ name: 'container' }], ...spec },
  }) satisfies KubeObject;
const podCreate = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({ object, ...extra });
const specOf = (object: KubeObject) =>
  object.spec as { priority?: number; priorityClassName?: string; preemptionPolicy?: string };

/** Mutates, applies the patch and runs the mutation again on its own output: nothing more to do. */
async function admitPod(invoke: Invoke, object: KubeObject): Promise<KubeObject> {
  const mutated = patchedObject(await invoke('mutate', podCreate(object)), object);
  expect(patchedObject(await invoke('mutate', podCreate(mutated)), mutated)).toEqual(mutated);
  return mutated;
}

// getDefaultPriority's name, value and preemptionPolicy: with no default class, PreemptLowerPriority.
type Resolved = [string, number, string | undefined];
const NO_DEFAULT: Resolved = ['', 0, 'PreemptLowerPriority'];

describe('TestDefaultPriority (upstream table)', () => {
  const updatedDefaultClass1 = { ...defaultClass1, globalDefault: false };
  const cases: {
    name: string;
    classesBefore: KubeObject[];
    write?: ReviewInput;
    expectedBefore: Resolved;
    expectedAfter: Resolved;
  }[] = [
    {
      name: 'simple resolution with a default class',
      classesBefore: [defaultClass1],
      expectedBefore: ['default1', 1000, undefined],
      expectedAfter: ['default1', 1000, undefined],
    },
    {
      name: 'add a default class',
      classesBefore: [nondefaultClass1],
      write: classReview(defaultClass1, 'CREATE', 'default1'),
      expectedBefore: NO_DEFAULT,
      expectedAfter: ['default1', 1000, undefined],
    },
    {
      name: 'multiple default classes resolves to the minimum value among them',
      classesBefore: [defaultClass1, defaultClass2],
      write: classReview(defaultClass1, 'DELETE', 'default1'),
      expectedBefore: ['default1', 1000, undefined],
      expectedAfter: ['default2', 2000, undefined],
    },
    {
      name: 'delete default priority class',
      classesBefore: [defaultClass1],
      write: classReview(defaultClass1, 'DELETE', 'default1'),
      expectedBefore: ['default1', 1000, undefined],
      expectedAfter: NO_DEFAULT,
    },
    {
      name: 'update default class and remove its global default',
      classesBefore: [defaultClass1],
      write: classReview(updatedDefaultClass1, 'UPDATE', 'default1'),
      expectedBefore: ['default1', 1000, undefined],
      expectedAfter: NO_DEFAULT,
    },
  ];
  // Upstream asks getDefaultPriority; here a pod without a class shows what it resolves to.
  const resolvedDefault = async (invoke: Invoke): Promise<Resolved> => {
    const spec = specOf(await admitPod(invoke, pod('no-class', 'namespace')));
    return [spec.priorityClassName ?? '', spec.priority!, spec.preemptionPolicy];
  };
  it.each(cases)('$name', async ({ classesBefore, write, expectedBefore, expectedAfter }) => {
    // Two defaults can only exist after a race (the plugin refuses the second): learned through sync.
    const { store, invoke } = await freshCluster([]);
    const loader = store.state({ uid: 'sync', dryRun: false }).objectLearner;
    for (const object of classesBefore) {
      await loader.record({ kind: 'stored', of: 'priorityclasses', name: object.metadata!.name!, object }, 'sync');
    }
    expect(await resolvedDefault(invoke)).toEqual(expectedBefore);
    if (write) {
      // The apiserver sends the write to the judge (which admits it) and to the learning webhook.
      expect((await invoke('validate', write)).review?.response?.allowed).toBe(true);
      expect((await invoke('learn', write)).review?.response?.allowed).toBe(true);
    }
    expect(await resolvedDefault(invoke)).toEqual(expectedAfter);
  });
});

describe('TestPodAdmission (upstream table)', () => {
  const NS_SYSTEM = 'kube-system';
  const mirror = { 'kubernetes.io/config.mirror': '' };
  const pods = [
    pod('pod-w-priorityclass', 'namespace', { priorityClassName: 'default1' }),
    pod('pod-wo-priorityclass', 'namespace'),
    pod('pod-w-non-existing-priorityclass', 'namespace', { priorityClassName: 'non-existing' }),
    pod('pod-w-integer-priority', 'namespace', { priorityClassName: 'default1', priority: 1000 }),
    pod('pod-w-system-priority', NS_SYSTEM, { priorityClassName: 'system-cluster-critical' }),
    pod('mirror-pod-w-system-priority', NS_SYSTEM, { priorityClassName: 'system-cluster-critical' }, mirror),
    pod('mirror-pod-w-integer-priority', 'namespace', { priorityClassName: 'default1', priority: 1000 }, mirror),
    pod('pod-w-system-priority-in-nonsystem-namespace', 'non-system-namespace', {
      priorityClassName: 'system-cluster-critical',
    }),
    pod('pod-w-zero-priority-in-nonsystem-namespace', 'non-system-namespace', { priority: 0 }),
    pod('pod-w-priority-matching-default-priority', 'non-system-namespace', { priority: 2000 }),
    pod('pod-w-priority-matching-resolved-default-priority', NS_SYSTEM, {
      priorityClassName: 'system-cluster-critical',
      priority: SYSTEM_CRITICAL_PRIORITY,
    }),
    pod('pod-never-preemption-policy-matching-resolved-preemption-policy', NS_SYSTEM, {
      priorityClassName: 'nopreemptionpolicy',
      priority: 2000,
    }),
    pod('pod-preemption-policy-matching-resolved-preemption-policy', NS_SYSTEM, {
      priorityClassName: 'nopreemptionpolicy',
      priority: 2000,
      preemptionPolicy: 'PreemptLowerPriority',
    }),
    pod('pod-preemption-policy-not-matching-resolved-preemption-policy', NS_SYSTEM, {
      priorityClassName: 'nopreemptionpolicy',
      priority: 2000,
      preemptionPolicy: 'Never',
    }),
  ];
  const cases: {
    name: string;
    existingClasses: KubeObject[];
    pod: KubeObject;
    expectedPriority: number;
    error?: string;
    expectPreemptionPolicy?: string;
  }[] = [
    {
      name: 'Pod with priority class',
      existingClasses: [defaultClass1, nondefaultClass1],
      pod: pods[0],
      expectedPriority: 1000,
    },
    { name: 'Pod without priority class', existingClasses: [defaultClass1], pod: pods[1], expectedPriority: 1000 },
    {
      name: 'pod without priority class and no existing priority class',
      existingClasses: [],
      pod: pods[1],
      expectedPriority: 0,
      expectPreemptionPolicy: 'PreemptLowerPriority',
    },
    {
      name: 'pod without priority class and no default class',
      existingClasses: [nondefaultClass1],
      pod: pods[1],
      expectedPriority: 0,
      expectPreemptionPolicy: 'PreemptLowerPriority',
    },
    {
      name: 'pod with a system priority class',
      existingClasses: [systemClusterCritical],
      pod: pods[4],
      expectedPriority: SYSTEM_CRITICAL_PRIORITY,
    },
    {
      name: 'Pod with non-existing priority class',
      existingClasses: [defaultClass1, nondefaultClass1],
      pod: pods[2],
      expectedPriority: 0,
      error: 'pods "pod-w-non-existing-priorityclass" is forbidden: no PriorityClass with name non-existing was found',
    },
    {
      name: 'pod with integer priority',
      existingClasses: [],
      pod: pods[3],
      expectedPriority: 0,
      error: 'pods "pod-w-integer-priority" is forbidden: no PriorityClass with name default1 was found',
    },
    {
      name: 'mirror pod with system priority class',
      existingClasses: [systemClusterCritical],
      pod: pods[5],
      expectedPriority: SYSTEM_CRITICAL_PRIORITY,
    },
    {
      name: 'mirror pod with integer priority',
      existingClasses: [],
      pod: pods[6],
      expectedPriority: 0,
      error: 'pods "mirror-pod-w-integer-priority" is forbidden: no PriorityClass with name default1 was found',
    },
    {
      name: 'pod with system critical priority in non-system namespace',
      existingClasses: [systemClusterCritical],
      pod: pods[7],
      expectedPriority: SYSTEM_CRITICAL_PRIORITY,
    },
    {
      name: 'pod with priority that matches computed priority',
      existingClasses: [nondefaultClass1],
      pod: pods[8],
      expectedPriority: 0,
    },
    {
      name: 'pod with priority that matches default priority',
      existingClasses: [defaultClass2],
      pod: pods[9],
      expectedPriority: 2000,
    },
    {
      name: 'pod with priority that matches resolved priority',
      existingClasses: [systemClusterCritical],
      pod: pods[10],
      expectedPriority: SYSTEM_CRITICAL_PRIORITY,
    },
    {
      name: 'pod with nil preemtpion policy',
      existingClasses: [preemptionPolicyClass],
      pod: pods[11],
      expectedPriority: 2000,
      expectPreemptionPolicy: 'PreemptLowerPriority',
    },
    {
      name: 'pod with preemtpion policy that matches resolved preemtpion policy',
      existingClasses: [preemptionPolicyClass],
      pod: pods[12],
      expectedPriority: 2000,
      expectPreemptionPolicy: 'PreemptLowerPriority',
    },
    {
      name: "pod with preemtpion policy that does't matches resolved preemtpion policy",
      existingClasses: [preemptionPolicyClass],
      pod: pods[13],
      expectedPriority: 2000,
      error:
        'pods "pod-preemption-policy-not-matching-resolved-preemption-policy" is forbidden: the string value of ' +
        'PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed ' +
        'PreemptLowerPriority from the given PriorityClass name',
    },
  ];
  it.each(cases)('$name', async ({ existingClasses, pod: input, expectedPriority, error, expectPreemptionPolicy }) => {
    const { invoke } = await freshCluster(existingClasses);
    if (error !== undefined) {
      const response = (await invoke('mutate', podCreate(input))).review!.response!;
      expect(response.allowed).toBe(false);
      expect(response.status).toMatchObject({ code: 403, message: error });
      return;
    }
    const spec = specOf(await admitPod(invoke, input));
    expect(spec.priority).toBe(expectedPriority);
    if (expectPreemptionPolicy !== undefined) expect(spec.preemptionPolicy).toBe(expectPreemptionPolicy);
  });

  it('a priority other than the resolved one is refused with upstream message', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const response = (await invoke('mutate', podCreate(pod('p', 'namespace', { priority: 5 })))).review!.response!;
    expect(response.status?.message).toBe(
      'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; ' +
        'priority admission controller computed 1000 from the given PriorityClass name',
    );
  });

  it('a never-preempting class sets preemptionPolicy Never', async () => {
    const { invoke } = await freshCluster([neverPreemptionPolicyClass]);
    const spec = specOf(await admitPod(invoke, pod('p', 'namespace', { priorityClassName: 'nopreemptionpolicy' })));
    expect(spec).toMatchObject({ priority: 2000, preemptionPolicy: 'Never' });
  });
});

describe('beyond the tables', () => {
  it('the system classes resolve without being learned', async () => {
    const { invoke } = await freshCluster([]);
    const critical = pod('node-agent', 'namespace', { priorityClassName: 'system-node-critical' });
    expect(specOf(await admitPod(invoke, critical))).toMatchObject({
      priority: 2000001000,
      preemptionPolicy: 'PreemptLowerPriority',
    });
  });

  it('an update that drops priority and preemptionPolicy keeps the old ones', async () => {
    const { invoke } = await freshCluster([]);
    const old = pod('p', 'namespace', { priority: 7, preemptionPolicy: 'Never' });
    const next = pod('p', 'namespace');
    const result = await invoke('mutate', { operation: 'UPDATE', object: next, oldObject: old });
    expect(specOf(patchedObject(result, next))).toMatchObject({ priority: 7, preemptionPolicy: 'Never' });
  });

  it('a refused second default is not learned', async () => {
    const { invoke } = await freshCluster([defaultClass2]);
    const second = classReview(defaultClass1, 'CREATE', 'default1');
    expect((await invoke('validate', second)).review?.response?.allowed).toBe(false);
    // The learning webhook, sent the same write, admits it (it never judges) and learns nothing.
    expect((await invoke('learn', second)).review?.response?.allowed).toBe(true);
    expect(specOf(await admitPod(invoke, pod('p', 'namespace'))).priority).toBe(2000);
  });

  it('pod subresources and objects that are not pods', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const status = (await invoke('mutate', podCreate(pod('p', 'namespace'), { subResource: 'status' }))).review!
      .response!;
    expect(status.patch).toBeUndefined();
    const notPod = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'p', namespace: 'namespace' }, spec: {} };
    expect((await invoke('mutate', podCreate(notPod))).review!.response!.status).toMatchObject({
      code: 400,
      message: 'resource was marked with kind Pod but was unable to be converted',
    });
  });
});

describe('the dryRun gate', () => {
  it('a dry-run PriorityClass write sends zero writes and teaches nothing', async () => {
    const { store, invoke } = await freshCluster([]);
    store.reset();
    const dry = { ...classReview(defaultClass1, 'CREATE', 'default1'), dryRun: true };
    expect((await invoke('validate', dry)).review?.response?.allowed).toBe(true);
    expect((await invoke('learn', dry)).review?.response?.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(specOf(await admitPod(invoke, pod('p', 'namespace'))).priority).toBe(0);
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
      expect((await lambdaFor(plugin, broken)('mutate', podCreate(pod('p', 'namespace')))).statusCode).toBe(500);
    } finally {
      client.destroy();
    }
  });
});
