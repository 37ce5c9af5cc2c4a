// OpenShift's tables (openshift/kubernetes openshift-kube-apiserver/admission/autoscaling/
// runonceduration/admission_test.go and apis/runonceduration/validation/validation_test.go)
// ported: TestRunOnceDurationAdmit (9 cases), TestReadConfig and
// TestRunOnceDurationConfigValidation (2). Namespaces are learned through the plugin's learning webhook;
// every mutation is applied as a real JSON patch, re-run on its own output, and then checked by the
// validating twin. Plus: the twin's refusals, the annotation's parse errors, never-seen namespaces,
// dry runs and configuration.
import { run } from '@bufbuild/cel';
import jsonpatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { RUN_ONCE_PODS, type RunOnceDurationConfig } from '../../functions/run-once-duration/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, requestOf, runPhase } from '../support/review.js';
import {
  ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION as ANNOTATION,
  RUN_ONCE_DURATION_ADMIT_CASES,
  projectLimitAnnotations,
} from '../support/cases/run-once-duration.js';

const SOURCE = { file: 'test', baseDir: '.' };
const BASE = { apiVersion: 'autoscaling.openshift.io/v1', kind: 'RunOnceDurationConfig' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as RunOnceDurationConfig;
const testConfig = (n?: number) => configure({ ...BASE, ...(n !== undefined && { activeDeadlineSecondsOverride: n }) });

let store: TestStore;
let namespaceCounter = 0;
beforeAll(async () => {
  store = await testStore('run-once-duration');
});
afterAll(() => store.close());

/** A namespace with these annotations, learned through the plugin's webhook as in a cluster. */
async function namespaceWith(annotations?: Record<string, string>): Promise<string> {
  const name = `project-${++namespaceCounter}`;
  const result = await lambdaFor(
    plugin,
    store,
    testConfig(),
  )('learn', namespaceReview('CREATE', name, { ...(annotations && { annotations }) }));
  expect(result.review!.response!.allowed).toBe(true);
  return name;
}

const pod = (namespace: string, restartPolicy: string, activeDeadlineSeconds?: number): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'test', namespace },
  spec: {
    restartPolicy,
    containers: [{ name: 'c', image: 'i' }],
    ...(activeDeadlineSeconds !== undefined && { activeDeadlineSeconds }),
  },
});
const stateFor = (input: ReviewInput) => store.state(requestOf(input));

describe('TestRunOnceDurationAdmit', () => {
  it.each(RUN_ONCE_DURATION_ADMIT_CASES)('$name', async (c) => {
    const namespace = await namespaceWith(projectLimitAnnotations(c));
    const config = testConfig(c.limit);
    const input: ReviewInput = { object: pod(namespace, c.restartPolicy, c.podDeadline) };
    const result = await mutateIdempotently(plugin, input, config, stateFor(input));
    expect(deniedMessage(result)).toBeUndefined();
    expect((result.patchedObject!.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds).toBe(
      c.expectedActiveDeadlineSeconds,
    );
    // The twin accepts the mutated pod.
    const checked = { ...input, object: result.patchedObject };
    expect(deniedMessage(await runPhase(plugin, 'validate', checked, config, stateFor(checked)))).toBeUndefined();
  });
});

describe('TestReadConfig', () => {
  it('reads activeDeadlineSecondsOverride as the limit', () => {
    expect(configure({ ...BASE, activeDeadlineSecondsOverride: 3600 })).toMatchObject({
      enabled: true,
      activeDeadlineSecondsLimit: 3600,
    });
  });
});

describe('TestRunOnceDurationConfigValidation', () => {
  it('refuses an invalid duration', () => {
    expect(configErrorOf(() => configure({ ...BASE, activeDeadlineSecondsOverride: -1 })).message).toBe(
      'autoscaling.openshift.io/RunOnceDuration: activeDeadlineSecondsOverride: Invalid value: -1: must be greater than 0',
    );
  });

  it('accepts a valid duration', () => {
    expect(configure({ ...BASE, activeDeadlineSecondsOverride: 5 }).activeDeadlineSecondsLimit).toBe(5);
  });
});

describe('the validating twin', () => {
  it('refuses, on CREATE, a run-once pod whose deadline the mutation would still lower', async () => {
    const namespace = await namespaceWith({ [ANNOTATION]: '1000' });
    const tooLong: ReviewInput = { object: pod(namespace, 'Never', 2000) };
    expect(deniedMessage(await runPhase(plugin, 'validate', tooLong, testConfig(), stateFor(tooLong)))).toBe(
      `pods "test" is forbidden: spec.activeDeadlineSeconds: Invalid value: 2000: must be at most 1000 for run-once pods in namespace ${namespace}`,
    );
    const missing: ReviewInput = { object: pod(namespace, 'OnFailure') };
    expect(deniedMessage(await runPhase(plugin, 'validate', missing, testConfig(), stateFor(missing)))).toBe(
      `pods "test" is forbidden: spec.activeDeadlineSeconds: Required value: must be at most 1000 for run-once pods in namespace ${namespace}`,
    );
  });

  it('leaves alone what the mutation leaves alone: other restart policies, updates, subresources, no limit', async () => {
    const namespace = await namespaceWith();
    for (const input of [
      { object: pod(namespace, 'Always', 99999) },
      {
        operation: 'UPDATE' as const,
        object: pod(namespace, 'Never', 99999),
        oldObject: pod(namespace, 'Never', 99999),
      },
      { subResource: 'status', object: pod(namespace, 'Never', 99999) },
    ]) {
      expect(deniedMessage(await runPhase(plugin, 'validate', input, testConfig(10), stateFor(input)))).toBeUndefined();
    }
    const noLimit: ReviewInput = { object: pod(namespace, 'Never', 99999) };
    expect(deniedMessage(await runPhase(plugin, 'validate', noLimit, testConfig(), stateFor(noLimit)))).toBeUndefined();
  });

  it('is disabled, both halves, without an AdmissionConfiguration entry', async () => {
    const namespace = await namespaceWith({ [ANNOTATION]: '1' });
    const input: ReviewInput = { object: pod(namespace, 'Never', 2000) };
    expect((await runPhase(plugin, 'mutate', input, configure(undefined), stateFor(input))).patch).toEqual([]);
    expect(
      deniedMessage(await runPhase(plugin, 'validate', input, configure(undefined), stateFor(input))),
    ).toBeUndefined();
  });
});

describe("the namespace's annotation", () => {
  it.each([
    ['abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ['99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
  ])('%s is refused by the mutation with upstream message, and left to it by the twin', async (value, error) => {
    const namespace = await namespaceWith({ [ANNOTATION]: value });
    const input: ReviewInput = { object: pod(namespace, 'Never') };
    expect(deniedMessage(await runPhase(plugin, 'mutate', input, testConfig(10), stateFor(input)))).toBe(
      `pods "test" is forbidden: cannot parse the ActiveDeadlineSeconds limit (${value}) for project ${namespace}: ${error}`,
    );
    expect(deniedMessage(await runPhase(plugin, 'validate', input, testConfig(10), stateFor(input)))).toBeUndefined();
  });
});

describe('never-seen namespaces', () => {
  const input: ReviewInput = { object: pod('never-seen', 'Never', 99999) };
  const rule = (unknownNamespace: RunOnceDurationConfig['unknownNamespace']) => ({
    ...testConfig(10),
    unknownNamespace,
  });

  it('warn (the default): no deadline set or required, one warning naming the fix, in both halves', async () => {
    expect(configure({ ...BASE }).unknownNamespace).toBe('warn');
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, input, rule('warn'), stateFor(input));
      expect(result.patch).toEqual([]);
      expect(result.wire.response).toMatchObject({
        allowed: true,
        warnings: [
          'autoscaling.openshift.io/RunOnceDuration: namespace "never-seen" is not learned yet, so its ' +
            "activeDeadlineSeconds limit was not applied; load the cluster's existing namespaces with npm run sync " +
            '(docs/seed-state.md)',
        ],
      });
    }
  });

  it('default: the cluster limit applies', async () => {
    const result = await runPhase(plugin, 'mutate', input, rule('default'), stateFor(input));
    expect((result.patchedObject!.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds).toBe(10);
    expect(result.wire.response!.warnings).toBeUndefined();
  });

  it("reject: upstream's lister error", async () => {
    const result = await runPhase(plugin, 'mutate', input, rule('reject'), stateFor(input));
    expect(deniedMessage(result)).toBe(
      'pods "test" is forbidden: error looking up pod namespace: namespace "never-seen" not found',
    );
  });

  it('a pod that is not run-once is not looked at, never-seen namespace or not', async () => {
    const always: ReviewInput = { object: pod('never-seen', 'Always') };
    const result = await runPhase(plugin, 'mutate', always, rule('warn'), stateFor(always));
    expect(result.wire.response!.warnings).toBeUndefined();
  });
});

describe('failure policies', () => {
  it('the mutation fails open; the twin, which holds the cap when the mutation did not run, fails closed', () => {
    expect(plugin.metadata.mutating!.failurePolicy).toBe('Ignore');
    expect(plugin.metadata.validating!.failurePolicy).toBe('Fail');
    expect(plugin.metadata.validating!.matchConditions).toEqual([RUN_ONCE_PODS]);
  });

  it.each([
    ['Never', true],
    ['OnFailure', true],
    ['Always', false],
  ] as const)('the twin is sent a pod with restartPolicy %s: %s', (restartPolicy, sent) => {
    // The pod as the apiserver binds it: plain JSON.
    const bindings = { object: pod('any', restartPolicy), oldObject: null } as unknown as Parameters<typeof run>[1];
    expect(run(RUN_ONCE_PODS.expression, bindings)).toBe(sent);
  });

  it('a pod the mutation never reached is refused; the same pod after its JSON patch is admitted', async () => {
    const namespace = await namespaceWith();
    const config = testConfig(600);
    const invoke = lambdaFor(plugin, store, config);
    const uncapped: ReviewInput = { object: pod(namespace, 'Never', 86400), namespace };
    expect((await invoke('validate', uncapped)).review!.response!.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: `pods "test" is forbidden: spec.activeDeadlineSeconds: Invalid value: 86400: must be at most 600 for run-once pods in namespace ${namespace}`,
    });
    const mutated = (await invoke('mutate', uncapped)).review!.response!;
    const patch = JSON.parse(Buffer.from(mutated.patch!, 'base64').toString('utf8')) as jsonpatch.Operation[];
    const final = jsonpatch.applyPatch(structuredClone(uncapped.object), patch, true, false).newDocument;
    const admitted = (await invoke('validate', { object: final, namespace })).review!.response!;
    expect(admitted).toEqual({ uid: admitted.uid, allowed: true });
  });
});

describe('the dryRun gate', () => {
  it('a dry-run Namespace write sends zero writes', async () => {
    store.reset();
    const result = await lambdaFor(
      plugin,
      store,
      testConfig(10),
    )('learn', namespaceReview('CREATE', 'dry', { annotations: { [ANNOTATION]: '5' } }, { dryRun: true }));
    expect(result.review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
  });
});

describe('configuration', () => {
  it.each([
    [
      { ...BASE, activeDeadlineSecondsOveride: 5 },
      'activeDeadlineSecondsOveride',
      'unknown field "activeDeadlineSecondsOveride"; did you mean "activeDeadlineSecondsOverride"?',
    ],
    [{ ...BASE, activeDeadlineSecondsOverride: '5' }, 'activeDeadlineSecondsOverride', 'must be an integer, got "5"'],
    [
      { ...BASE, activeDeadlineSecondsOverride: 0 },
      'activeDeadlineSecondsOverride',
      'Invalid value: 0: must be greater than 0',
    ],
    [{ ...BASE, kind: 'RunOnceDuration' }, 'kind', 'must be RunOnceDurationConfig, got "RunOnceDuration"'],
  ])('%j is refused at %s', (raw, field, detail) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(
      `autoscaling.openshift.io/RunOnceDuration: ${field}: ${detail}`,
    );
  });
});
