// OpenShift's tables (openshift/kubernetes openshift-kube-apiserver/admission/scheduler/nodeenv/
// admission_test.go and nodeenv/labelselector/labelselector_test.go) ported: TestPodAdmission
// (12 cases, each with upstream's follow-up checks: the twin accepts the merged pod, and refuses it
// once the first project label is removed), TestHandles (4) and TestLabelSelectorParse (17).
// Namespaces and upstream's one Node (worker-1, worker=true) are learned through the plugin's own
// webhook; patches are applied for real and re-run on their own output. One case differs (a node
// never learned is admitted with a warning, not refused), asserted as we behave.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, {
  parseProjectSelector,
  type OriginPodNodeEnvironmentConfig,
} from '../../functions/origin-pod-node-environment/plugin.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { activePlugins, configurePlugins } from '../../lib/config/plugins.js';
import { plugins } from '../../functions/index.js';
import { configErrorOf } from '../support/config-error.js';
import { classWrite } from '../support/learned-objects.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, requestOf, runPhase } from '../support/review.js';
import {
  LABEL_SELECTOR_PARSE_CASES,
  POD_ADMISSION_CASES,
  PROJECT_NODE_SELECTOR_ANNOTATION as PROJECT,
  projectAnnotations,
} from '../support/cases/origin-pod-node-environment.js';

const SOURCE = { file: 'test', baseDir: '.' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as OriginPodNodeEnvironmentConfig;
const withDefault = (defaultNodeSelector: string) => configure({ defaultNodeSelector });

let store: TestStore;
let counter = 0;
/** Upstream's one Node, in every case's lister. */
const WORKER_1: KubeObject = { metadata: { name: 'worker-1', labels: { worker: 'true' } } };
const learnNode = async (node: KubeObject, operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'CREATE') => {
  const result = await lambdaFor(plugin, store, withDefault(''))('learn', classWrite('nodes', node, operation));
  expect(result.review!.response!.allowed).toBe(true);
};
beforeAll(async () => {
  store = await testStore('origin-pod-node-environment');
  await learnNode(WORKER_1);
});
afterAll(() => store.close());

async function namespaceWith(annotations?: Record<string, string>): Promise<string> {
  const name = `testproject-${++counter}`;
  const result = await lambdaFor(
    plugin,
    store,
    withDefault(''),
  )('learn', namespaceReview('CREATE', name, { ...(annotations && { annotations }) }));
  expect(result.review!.response!.allowed).toBe(true);
  return name;
}

const pod = (namespace: string, nodeSelector?: Record<string, string>, nodeName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'testPod', namespace },
  spec: {
    containers: [{ name: 'c', image: 'i' }],
    ...(nodeSelector && { nodeSelector }),
    ...(nodeName && { nodeName }),
  },
});
const stateFor = (input: ReviewInput) => store.state(requestOf(input));
const selectorOf = (object: KubeObject | null) =>
  (object?.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector ?? {};

const NODE_NOT_LEARNED =
  'scheduling.openshift.io/OriginPodNodeEnvironment: node "worker-2" is not learned yet, so the pod\'s node was not ' +
  "checked against its project node selector; load the cluster's existing nodes with npm run sync (docs/seed-state.md)";

describe('TestPodAdmission', () => {
  it.each(POD_ADMISSION_CASES)('$testName', async (c) => {
    const namespace = await namespaceWith(projectAnnotations(c));
    const config = withDefault(c.defaultNodeSelector);
    const input: ReviewInput = { object: pod(namespace, c.podNodeSelector, c.podNodeName) };
    const result = await mutateIdempotently(plugin, input, config, stateFor(input));
    expect(deniedMessage(result) === undefined).toBe(c.admit);
    expect(selectorOf(result.patchedObject)).toEqual(c.mergedNodeSelector);
    expect(result.wire.response!.warnings).toEqual(c.differs ? [NODE_NOT_LEARNED] : undefined);
    if (!c.admit) return;
    // Validate after a successful Admit accepts the merged pod...
    const merged: ReviewInput = { object: result.patchedObject };
    expect(deniedMessage(await runPhase(plugin, 'validate', merged, config, stateFor(merged)))).toBeUndefined();
    // ...and refuses it once the first project key is removed.
    if ((c.projectNodeSelector ?? '').length > 0) {
      const firstProjectKey = c.projectNodeSelector!.split('=')[0].trim();
      const { [firstProjectKey]: _, ...rest } = selectorOf(result.patchedObject);
      const stripped: ReviewInput = { object: pod(namespace, rest, c.podNodeName) };
      expect(deniedMessage(await runPhase(plugin, 'validate', stripped, config, stateFor(stripped)))).toBe(
        'pods "testPod" is forbidden: pod node label selector does not extend project node label selector',
      );
    }
  });
});

describe('messages', () => {
  it("a conflict is refused with upstream's message, by both halves", async () => {
    const namespace = await namespaceWith({ [PROJECT]: 'infra=true' });
    const input: ReviewInput = { object: pod(namespace, { infra: 'false' }) };
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, input, withDefault(''), stateFor(input));
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        message: 'pods "testPod" is forbidden: pod node label selector conflicts with its project node label selector',
      });
    }
  });

  it('a malformed project annotation is returned as is (500), as upstream returns the parse error', async () => {
    const namespace = await namespaceWith({ [PROJECT]: 'x in (y)' });
    const input: ReviewInput = { object: pod(namespace) };
    const result = await runPhase(plugin, 'mutate', input, withDefault(''), stateFor(input));
    expect(result.wire.response!.status).toMatchObject({
      code: 500,
      message: "unable to parse requirement: found 'in', expected: '='",
    });
  });
});

describe("a pod's named node, by its learned labels", () => {
  it("a node outside the project selector is refused with upstream's message, by both halves", async () => {
    const namespace = await namespaceWith({ [PROJECT]: 'worker=false' });
    const input: ReviewInput = { object: pod(namespace, { worker: 'false' }, 'worker-1') };
    for (const phase of ['mutate', 'validate'] as const) {
      expect(deniedMessage(await runPhase(plugin, phase, input, withDefault(''), stateFor(input)))).toBe(
        'pods "testPod" is forbidden: pod node name conflicts with project node label selector',
      );
    }
  });

  it('a relabelled node is judged by its new labels; a deleted one is no longer known', async () => {
    const node: KubeObject = { metadata: { name: 'relabelled', labels: { pool: 'a' } } };
    await learnNode(node);
    const namespace = await namespaceWith({ [PROJECT]: 'pool=b' });
    const input: ReviewInput = { object: pod(namespace, { pool: 'b' }, 'relabelled') };
    const judge = async () => runPhase(plugin, 'validate', input, withDefault(''), stateFor(input));
    expect(deniedMessage(await judge())).toContain('pod node name conflicts with project node label selector');
    await learnNode({ metadata: { name: 'relabelled', labels: { pool: 'b' } } }, 'UPDATE');
    expect((await judge()).wire.response).toMatchObject({ allowed: true });
    await learnNode(node, 'DELETE');
    expect((await judge()).wire.response!.warnings).toEqual([
      expect.stringContaining('node "relabelled" is not learned yet'),
    ]);
  });

  it('a Node is kept as its name, uid and labels only', async () => {
    await learnNode({
      metadata: { name: 'big', uid: 'u-1', labels: { a: 'b' }, annotations: { huge: 'x'.repeat(1000) } },
      spec: { podCIDR: '10.0.0.0/24', taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: { capacity: { cpu: '2' } },
    });
    const learned = await store.state({ uid: 'read', dryRun: false }).learnedObjects.get('nodes', 'big');
    expect(learned?.object).toEqual({ kind: 'Node', metadata: { name: 'big', uid: 'u-1', labels: { a: 'b' } } });
  });

  it('a node is not looked up when the project has no selector', async () => {
    const namespace = await namespaceWith();
    const input: ReviewInput = { object: pod(namespace, undefined, 'never-learned') };
    const result = await runPhase(plugin, 'mutate', input, withDefault(''), stateFor(input));
    expect(result.wire.response).toMatchObject({ allowed: true });
    expect(result.wire.response!.warnings).toBeUndefined();
  });
});

describe("deferring to PodNodeSelector's annotation", () => {
  it('a namespace with scheduler.alpha.kubernetes.io/node-selector is left alone, project annotation and default included', async () => {
    const namespace = await namespaceWith({
      'scheduler.alpha.kubernetes.io/node-selector': 'env=prod',
      [PROJECT]: 'infra=true',
    });
    const input: ReviewInput = { object: pod(namespace, { infra: 'false' }) };
    const config = withDefault('region=east');
    expect((await runPhase(plugin, 'mutate', input, config, stateFor(input))).patch).toEqual([]);
    expect(deniedMessage(await runPhase(plugin, 'validate', input, config, stateFor(input)))).toBeUndefined();
  });
});

describe('TestHandles', () => {
  it.each([
    ['CREATE', true],
    ['UPDATE', false],
    ['CONNECT', false],
    ['DELETE', false],
  ] as [Operation, boolean][])('%s: shouldHandle=%s', async (operation, shouldHandle) => {
    expect(plugin.metadata.mutating!.rules.some((r) => r.operations.includes(operation))).toBe(shouldHandle);
    expect(plugin.metadata.validating!.rules.some((r) => r.operations.includes(operation))).toBe(shouldHandle);
    const namespace = await namespaceWith({ [PROJECT]: 'infra=true' });
    const object = operation === 'DELETE' ? null : pod(namespace);
    const input: ReviewInput = {
      operation,
      object,
      oldObject: operation === 'CREATE' ? null : pod(namespace),
      name: 'testPod',
      namespace,
    };
    expect(
      deniedMessage(await runPhase(plugin, 'validate', input, withDefault(''), stateFor(input))) !== undefined,
    ).toBe(shouldHandle);
  });
});

describe('TestLabelSelectorParse', () => {
  it.each(LABEL_SELECTOR_PARSE_CASES)('%j', (selector, labels, valid) => {
    if (valid) expect(parseProjectSelector(selector)).toEqual(labels);
    else expect(() => parseProjectSelector(selector)).toThrow();
  });
});

describe('never-seen namespaces', () => {
  const input: ReviewInput = { object: pod('never-seen', { infra: 'false' }) };
  const configured = (unknownNamespace: OriginPodNodeEnvironmentConfig['unknownNamespace']) => ({
    ...withDefault('region=east'),
    unknownNamespace,
  });

  it('warn (the default): nothing merged or refused, one warning naming the fix, in both halves', async () => {
    expect(configure(undefined).unknownNamespace).toBe('warn');
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, input, configured('warn'), stateFor(input));
      expect(result.patch).toEqual([]);
      expect(result.wire.response).toMatchObject({
        allowed: true,
        warnings: [
          'scheduling.openshift.io/OriginPodNodeEnvironment: namespace "never-seen" is not learned yet, so its ' +
            "project node selector was neither applied nor checked; load the cluster's existing namespaces with " +
            'npm run sync (docs/seed-state.md)',
        ],
      });
    }
  });

  it('default: the default selector is merged', async () => {
    const result = await runPhase(plugin, 'mutate', input, configured('default'), stateFor(input));
    expect(selectorOf(result.patchedObject)).toEqual({ region: 'east', infra: 'false' });
    expect(result.wire.response!.warnings).toBeUndefined();
  });

  it("reject: upstream's lister error", async () => {
    const result = await runPhase(plugin, 'mutate', input, configured('reject'), stateFor(input));
    expect(deniedMessage(result)).toBe('pods "testPod" is forbidden: namespace "never-seen" not found');
  });

  it('the rule is chosen with ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE', () => {
    const saved = process.env.ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE;
    try {
      process.env.ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE = 'default';
      expect(configure(undefined).unknownNamespace).toBe('default');
      process.env.ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE = 'skip';
      expect(configErrorOf(() => configure(undefined)).message).toContain('must be one of warn, default, reject');
    } finally {
      if (saved === undefined) delete process.env.ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE;
      else process.env.ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE = saved;
    }
  });
});

describe('always on, as in OpenShift', () => {
  it('default-on: an AdmissionConfiguration that names no plugin serves it, without configuration', () => {
    expect(plugin.metadata.optIn).toBeUndefined();
    expect(plugin.metadata.requiresConfiguration).toBeUndefined();
    const none = parseAdmissionConfiguration(
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n',
      'admission.yaml',
    );
    const served = activePlugins(configurePlugins(plugins, none)).find(
      (p) => p.plugin.metadata.name === 'origin-pod-node-environment',
    );
    expect(served?.config).toEqual({ defaultNodeSelector: '', unknownNamespace: 'warn' });
  });
});

describe('the dryRun gate', () => {
  it('a dry-run Node write sends zero writes and teaches nothing', async () => {
    store.reset();
    const dry = { ...classWrite('nodes', { metadata: { name: 'dry-node', labels: { a: 'b' } } }), dryRun: true };
    expect((await lambdaFor(plugin, store, withDefault(''))('validate', dry)).review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(await store.state({ uid: 'read', dryRun: false }).learnedObjects.get('nodes', 'dry-node')).toBeUndefined();
  });

  it('a dry-run Namespace write sends zero writes', async () => {
    store.reset();
    const result = await lambdaFor(
      plugin,
      store,
      withDefault(''),
    )('learn', namespaceReview('CREATE', 'dry', { annotations: { [PROJECT]: 'a=b' } }, { dryRun: true }));
    expect(result.review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
  });
});

describe('configuration', () => {
  it('no entry: an empty default selector', () => {
    expect(configure(undefined)).toEqual({ defaultNodeSelector: '', unknownNamespace: 'warn' });
  });

  it.each([
    [
      { defaultNodeSelecter: 'a=b' },
      'defaultNodeSelecter',
      'unknown field "defaultNodeSelecter"; did you mean "defaultNodeSelector"?',
    ],
    [{ defaultNodeSelector: 5 }, 'defaultNodeSelector', 'Invalid value: 5: must be a string'],
    [
      { defaultNodeSelector: 'a!=b' },
      'defaultNodeSelector',
      'unable to parse requirement: label key: Invalid value: "a!": must match format [ DNS 1123 subdomain / ] DNS 1123 label',
    ],
  ])('%j is refused at %s', (raw, field, detail) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(
      `scheduling.openshift.io/OriginPodNodeEnvironment: ${field}: ${detail}`,
    );
  });
});
