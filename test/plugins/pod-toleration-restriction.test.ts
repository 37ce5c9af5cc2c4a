// Upstream's tables (plugin/pkg/admission/podtolerationrestriction/admission_test.go, the version
// with MergeTolerations' superset semantics and reinvocation testing) ported: TestPodAdmission (13
// of 13 cases, each through the mutating phase, proven idempotent, then the validating twin on the
// result), TestHandles (4 of 4) and TestIgnoreUpdatingInitializedPod (1 of 1). Namespaces are
// learned only through the plugin's learning webhook, over DynamoDB Local.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, {
  isBestEffort,
  NS_DEFAULT_TOLERATIONS,
  NS_WHITELIST_TOLERATIONS,
} from '../../functions/pod-toleration-restriction/plugin.js';
import type { PodTolerationRestrictionConfig } from '../../functions/pod-toleration-restriction/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { Toleration } from '../../lib/kube/tolerations.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { itHandles } from '../support/handles.js';

let store: TestStore;
beforeAll(async () => {
  store = await testStore('pod-toleration-restriction');
});
afterAll(() => store.close());

const configOf = (
  defaults: Toleration[] = [],
  whitelist: Toleration[] = [],
  unknownNamespace: 'warn' | 'default' | 'reject' = 'default',
): PodTolerationRestrictionConfig => ({ default: defaults, whitelist, unknownNamespace });

const tol = (value: string): Toleration => ({ key: 'testKey', operator: 'Equal', value, effect: 'NoSchedule' });
const MEMORY_PRESSURE: Toleration = {
  key: 'node.kubernetes.io/memory-pressure',
  operator: 'Exists',
  effect: 'NoSchedule',
};

type Resources = { limits?: Record<string, string>; requests?: Record<string, string> };
const podOf = (namespace: string, resources: Resources | undefined, tolerations: Toleration[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'testPod', namespace },
  spec: { containers: [{ name: 'test', image: 'i', ...(resources && { resources }) }], tolerations },
});
const bestEffort = undefined;
const burstable: Resources = { limits: { cpu: '1000m' }, requests: { cpu: '500m' } };
const guaranteed: Resources = { limits: { cpu: '1000m' }, requests: { cpu: '1000m' } };

/** assert.ElementsMatch: the same tolerations in any order. */
const asSet = (ts: readonly Toleration[]) =>
  ts
    .map((t) =>
      JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '', t.tolerationSeconds ?? null]),
    )
    .sort();
const tolerationsOf = (object: KubeObject | null) =>
  (object?.spec as { tolerations?: Toleration[] } | undefined)?.tolerations ?? [];

interface Case {
  testName: string;
  pod: Resources | undefined;
  defaultClusterTolerations?: Toleration[];
  /** undefined: the namespace has no defaultTolerations annotation (Go's nil). */
  namespaceTolerations?: Toleration[];
  whitelist?: Toleration[];
  clusterWhitelist?: Toleration[];
  podTolerations: Toleration[];
  mergedTolerations?: Toleration[];
  admit: boolean;
}

const cases: Case[] = [
  {
    testName: 'default cluster tolerations with empty pod tolerations and nil namespace tolerations',
    pod: bestEffort,
    defaultClusterTolerations: [tol('testValue')],
    podTolerations: [],
    mergedTolerations: [tol('testValue')],
    admit: true,
  },
  {
    testName: 'default cluster tolerations with pod tolerations specified',
    pod: bestEffort,
    defaultClusterTolerations: [tol('testValue')],
    namespaceTolerations: [],
    podTolerations: [tol('testValue')],
    mergedTolerations: [tol('testValue')],
    admit: true,
  },
  {
    testName: 'namespace tolerations',
    pod: bestEffort,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    podTolerations: [tol('testValue')],
    mergedTolerations: [tol('testValue')],
    admit: true,
  },
  {
    testName: 'no pod tolerations',
    pod: bestEffort,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    podTolerations: [],
    mergedTolerations: [tol('testValue')],
    admit: true,
  },
  {
    testName: 'duplicate key pod and namespace tolerations',
    pod: bestEffort,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    podTolerations: [tol('testValue1')],
    mergedTolerations: [tol('testValue'), tol('testValue1')],
    admit: true,
  },
  {
    testName: 'conflicting pod and default cluster tolerations but overridden by empty namespace tolerations',
    pod: bestEffort,
    defaultClusterTolerations: [tol('testValue2')],
    namespaceTolerations: [],
    podTolerations: [tol('testValue1')],
    mergedTolerations: [tol('testValue1')],
    admit: true,
  },
  {
    testName: 'merged pod tolerations satisfy whitelist',
    pod: bestEffort,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    whitelist: [tol('testValue')],
    podTolerations: [],
    mergedTolerations: [tol('testValue')],
    admit: true,
  },
  {
    testName: 'Override default cluster toleration by empty namespace level toleration',
    pod: bestEffort,
    defaultClusterTolerations: [tol('testValue')],
    namespaceTolerations: [],
    podTolerations: [],
    mergedTolerations: [],
    admit: true,
  },
  {
    testName:
      'pod toleration conflicts with default cluster white list which is overridden by empty namespace whitelist',
    pod: bestEffort,
    whitelist: [],
    clusterWhitelist: [tol('testValue1')],
    podTolerations: [tol('testValue')],
    mergedTolerations: [tol('testValue')],
    admit: true,
  },
  {
    testName: 'merged pod tolerations conflict with the whitelist',
    pod: bestEffort,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    whitelist: [tol('testValue1')],
    podTolerations: [],
    admit: false,
  },
  {
    testName: 'added memoryPressure/DiskPressure for Burstable pod',
    pod: burstable,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    whitelist: [],
    podTolerations: [],
    mergedTolerations: [MEMORY_PRESSURE, tol('testValue')],
    admit: true,
  },
  {
    testName: 'Pod with duplicate key tolerations should not be modified',
    pod: bestEffort,
    defaultClusterTolerations: [],
    namespaceTolerations: [],
    whitelist: [],
    podTolerations: [tol('testValue'), tol('testValue1')],
    mergedTolerations: [tol('testValue'), tol('testValue1')],
    admit: true,
  },
  {
    testName: 'added memoryPressure/DiskPressure for Guaranteed pod',
    pod: guaranteed,
    defaultClusterTolerations: [],
    namespaceTolerations: [tol('testValue')],
    whitelist: [],
    podTolerations: [],
    mergedTolerations: [MEMORY_PRESSURE, tol('testValue')],
    admit: true,
  },
];

/** Teaches the plugin a namespace through its learning webhook, as the apiserver would. */
async function learnNamespace(
  name: string,
  annotations: Record<string, string> | undefined,
  config: PodTolerationRestrictionConfig,
) {
  const learned = await lambdaFor(
    plugin,
    store,
    config,
  )('learn', namespaceReview('CREATE', name, annotations ? { annotations } : {}));
  expect(learned.review!.response!.allowed).toBe(true);
}

function annotationsOf(c: Pick<Case, 'namespaceTolerations' | 'whitelist'>): Record<string, string> | undefined {
  const annotations: Record<string, string> = {};
  if (c.namespaceTolerations !== undefined)
    annotations[NS_DEFAULT_TOLERATIONS] = JSON.stringify(c.namespaceTolerations);
  if (c.whitelist !== undefined) annotations[NS_WHITELIST_TOLERATIONS] = JSON.stringify(c.whitelist);
  return Object.keys(annotations).length ? annotations : undefined;
}

describe('TestPodAdmission', () => {
  it.each(cases.map((c, i) => ({ ...c, i })))('$testName', async (test) => {
    const namespace = `ptr-case-${test.i}`;
    const config = configOf(test.defaultClusterTolerations, test.clusterWhitelist);
    await learnNamespace(namespace, annotationsOf(test), config);
    const pod = podOf(namespace, test.pod, test.podTolerations);
    const uid = `ptr-pod-${test.i}`;
    const state = store.state({ uid, dryRun: false });

    const mutated = await mutateIdempotently(plugin, { object: pod, uid }, config, state);
    if (test.admit) {
      expect(deniedMessage(mutated)).toBeUndefined();
      expect(asSet(tolerationsOf(mutated.patchedObject))).toEqual(asSet(test.mergedTolerations!));
      expect(
        deniedMessage(await runPhase(plugin, 'validate', { object: mutated.patchedObject, uid }, config, state)),
      ).toBeUndefined();
    } else {
      expect(mutated.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        message:
          'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
      });
      // The validating twin refuses the pod as the mutation would have made it.
      const merged = podOf(namespace, test.pod, [...test.podTolerations, ...(test.namespaceTolerations ?? [])]);
      expect(deniedMessage(await runPhase(plugin, 'validate', { object: merged, uid }, config, state))).toBe(
        'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
      );
    }
  });

  it('the deployed handler patches the pod the same way (namespace defaults + memory pressure)', async () => {
    const config = configOf();
    await learnNamespace('ptr-handler', { [NS_DEFAULT_TOLERATIONS]: JSON.stringify([tol('v')]) }, config);
    const result = await lambdaFor(plugin, store, config)('mutate', { object: podOf('ptr-handler', burstable, []) });
    const response = result.review!.response!;
    expect(response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(response.patch!, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/tolerations/0', value: tol('v') },
      { op: 'add', path: '/spec/tolerations/1', value: MEMORY_PRESSURE },
    ]);
  });

  it('the cluster whitelist applies to a namespace without its own, and the message says so', async () => {
    const config = configOf([], [tol('allowed')]);
    await learnNamespace('ptr-cluster-wl', undefined, config);
    const result = await runPhase(
      plugin,
      'validate',
      { object: podOf('ptr-cluster-wl', bestEffort, [tol('other')]) },
      config,
      store.state({ uid: 'cwl', dryRun: false }),
    );
    expect(deniedMessage(result)).toBe(
      'pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist',
    );
    const ok = await runPhase(
      plugin,
      'validate',
      { object: podOf('ptr-cluster-wl', bestEffort, [tol('allowed')]) },
      config,
      store.state({ uid: 'cwl2', dryRun: false }),
    );
    expect(deniedMessage(ok)).toBeUndefined();
  });
});

describe('TestHandles: CREATE and UPDATE of pods', () => {
  const config = configOf([tol('x')]);
  itHandles(plugin, ['CREATE', 'UPDATE'], {
    object: podOf('ptr-handles', burstable, []),
    config,
    state: (operation) => store.state({ uid: `h-${operation}`, dryRun: false }),
    phases: ['mutate'],
  });

  it('subresources and other resources are ignored', async () => {
    const pod = podOf('ptr-handles', burstable, []);
    const state = store.state({ uid: 'sub', dryRun: false });
    expect(
      (
        await runPhase(
          plugin,
          'mutate',
          { operation: 'UPDATE', subResource: 'status', object: pod, oldObject: pod },
          config,
          state,
        )
      ).patch,
    ).toEqual([]);
    const cm: KubeObject = { kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ptr-handles' } };
    expect(
      (
        await runPhase(
          plugin,
          'mutate',
          { kind: { kind: 'ConfigMap' }, resource: { resource: 'configmaps' }, object: cm },
          config,
          state,
        )
      ).wire.response,
    ).toMatchObject({ allowed: true });
  });
});

describe('TestIgnoreUpdatingInitializedPod', () => {
  it('an UPDATE does not merge the namespace defaults, even conflicting ones', async () => {
    const config = configOf();
    await learnNamespace('ptr-update', { [NS_DEFAULT_TOLERATIONS]: JSON.stringify([tol('testValue2')]) }, config);
    const pod = podOf('ptr-update', bestEffort, [tol('testValue1')]);
    const result = await mutateIdempotently(
      plugin,
      { operation: 'UPDATE', object: pod, oldObject: pod },
      config,
      store.state({ uid: 'upd', dryRun: false }),
    );
    expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
  });
});

describe('QoS: the memory-pressure toleration goes to every pod that is not BestEffort', () => {
  it.each([
    ['no resources', { containers: [{ name: 'c' }] }, true],
    ['zero requests', { containers: [{ name: 'c', resources: { requests: { cpu: '0' } } }] }, true],
    [
      'only an extended resource',
      { containers: [{ name: 'c', resources: { limits: { 'example.com/gpu': '1' } } }] },
      true,
    ],
    [
      'an init container with memory',
      { containers: [{ name: 'c' }], initContainers: [{ name: 'i', resources: { limits: { memory: '1Gi' } } }] },
      false,
    ],
    ['pod-level resources', { containers: [{ name: 'c' }], resources: { requests: { cpu: '100m' } } }, false],
  ])('%s: BestEffort %s', (_name, spec, expected) => {
    expect(isBestEffort({ kind: 'Pod', spec } as never)).toBe(expected);
  });
});

describe('never-seen namespaces, dry runs, broken annotations', () => {
  const pod = podOf('ptr-unseen', bestEffort, []);

  it('warn (the default): no default merged and no whitelist checked, and the validating webhook says why', async () => {
    const config = configOf([tol('cluster')], [tol('cluster')], 'warn');
    const state = store.state({ uid: 'u0', dryRun: false });
    // Outside the cluster whitelist: not refused, the namespace may whitelist it.
    const outside = podOf('ptr-unseen', bestEffort, [tol('other')]);
    const mutated = await runPhase(plugin, 'mutate', { object: outside }, config, state);
    expect(mutated.wire.response).toEqual({ uid: mutated.wire.response!.uid, allowed: true });
    const validated = await runPhase(plugin, 'validate', { object: outside }, config, state);
    expect(validated.wire.response!.allowed).toBe(true);
    expect(validated.wire.response!.warnings).toEqual([
      'PodTolerationRestriction: namespace "ptr-unseen" is not learned yet, so its default tolerations and toleration whitelist were not applied; load the cluster\'s existing namespaces with npm run sync (docs/seed-state.md)',
    ]);
    // What depends on the pod alone still happens: a Burstable pod tolerates memory pressure.
    const burstable = podOf('ptr-unseen', { requests: { cpu: '100m' } }, []);
    const result = await mutateIdempotently(plugin, { object: burstable }, config, state);
    expect(tolerationsOf(result.patchedObject)).toEqual([MEMORY_PRESSURE]);
  });

  it('default: a never-seen namespace gets the cluster default and whitelist', async () => {
    const result = await mutateIdempotently(
      plugin,
      { object: pod },
      configOf([tol('cluster')]),
      store.state({ uid: 'u1', dryRun: false }),
    );
    expect(tolerationsOf(result.patchedObject)).toEqual([tol('cluster')]);
  });

  it('reject: refused as upstream refuses a namespace it cannot find (404)', async () => {
    const result = await runPhase(
      plugin,
      'mutate',
      { object: pod },
      configOf([], [], 'reject'),
      store.state({ uid: 'u2', dryRun: false }),
    );
    expect(result.wire.response!.status).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'namespaces "ptr-unseen" not found',
    });
  });

  it('a dry-run namespace write sends zero writes to the store and teaches nothing', async () => {
    store.reset();
    const result = await lambdaFor(
      plugin,
      store,
      configOf(),
    )(
      'learn',
      namespaceReview('CREATE', 'ptr-dry', { annotations: { [NS_DEFAULT_TOLERATIONS]: '[]' } }, { dryRun: true }),
    );
    expect(result.review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(await store.state({ uid: 'r', dryRun: false }).learnedNamespaces.get('ptr-dry')).toBeUndefined();
  });

  it('an annotation that is not a JSON list of tolerations is an internal error, as upstream', async () => {
    const config = configOf();
    await learnNamespace('ptr-broken', { [NS_DEFAULT_TOLERATIONS]: '{not json' }, config);
    const result = await runPhase(
      plugin,
      'mutate',
      { object: podOf('ptr-broken', bestEffort, []) },
      config,
      store.state({ uid: 'b', dryRun: false }),
    );
    expect(result.wire.response!.status).toMatchObject({ code: 500, reason: 'InternalError' });
  });
});

describe('configure: upstream Configuration, validated at start', () => {
  const source = { file: 'admission.yaml', baseDir: '.' };
  it('reads default and whitelist', () => {
    const raw = {
      apiVersion: 'podtolerationrestriction.admission.k8s.io/v1alpha1',
      kind: 'Configuration',
      default: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
      whitelist: [{ operator: 'Exists' }],
    };
    expect(plugin.configure!(raw, source)).toEqual({
      default: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
      whitelist: [{ operator: 'Exists' }],
      unknownNamespace: 'warn',
    });
    expect(plugin.configure!(undefined, source)).toEqual({ default: [], whitelist: [], unknownNamespace: 'warn' });
  });
  it('names the field of an invalid toleration', () => {
    expect(() => plugin.configure!({ default: [{ key: '', operator: 'Equal', value: 'v' }] }, source)).toThrow(
      /^PodTolerationRestriction: default\[0\]\.operator: Invalid value: "Equal": operator must be Exists when `key` is empty/,
    );
    expect(() => plugin.configure!({ whitelist: [{ key: 'k', operator: 'Bigger' }] }, source)).toThrow(
      /whitelist\[0\]\.operator: Unsupported value: "Bigger": supported values: "Equal", "Exists"/,
    );
    expect(() => plugin.configure!({ apiVersion: 'v9', default: [] }, source)).toThrow(
      /PodTolerationRestriction: apiVersion: must be one of/,
    );
    expect(() => plugin.configure!({ defaults: [] }, source)).toThrow(
      /PodTolerationRestriction: defaults: unknown field/,
    );
    expect(() => plugin.configure!({ whitelist: [{ key: 'k', operater: 'Exists' }] }, source)).toThrow(
      'PodTolerationRestriction: whitelist[0].operater: unknown field "operater"; did you mean "operator"?',
    );
    expect(() => plugin.configure!({ default: [{ key: 'k', tolerationSeconds: '5' }] }, source)).toThrow(
      'PodTolerationRestriction: default[0].tolerationSeconds: must be an integer, got "5"',
    );
  });
  it('the example AdmissionConfiguration is accepted', () => {
    const example = parseYaml(readFileSync('config/examples/pod-toleration-restriction.yaml', 'utf8')) as {
      plugins: { name: string; configuration: unknown }[];
    };
    const config = plugin.configure!(
      example.plugins.find((p) => p.name === 'PodTolerationRestriction')!.configuration,
      source,
    ) as PodTolerationRestrictionConfig;
    expect(config.default.length).toBe(1);
    expect(config.whitelist.length).toBe(4);
  });

  it('POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE chooses the never-seen rule', () => {
    const previous = process.env.POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE;
    try {
      process.env.POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE = 'reject';
      expect(plugin.configure!(undefined, source).unknownNamespace).toBe('reject');
      process.env.POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE = 'allow';
      expect(() => plugin.configure!(undefined, source)).toThrow(
        /POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE: must be one of warn, default, reject/,
      );
    } finally {
      if (previous === undefined) delete process.env.POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE;
      else process.env.POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE = previous;
    }
  });
});
