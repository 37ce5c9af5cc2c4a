// OpenShift's tables (openshift/kubernetes openshift-kube-apiserver/admission/scheduler/nodeenv/
// admission_test.go and nodeenv/labelselector/labelselector_test.go) ported: TestPodAdmission
// (12 cases, each with upstream's follow-up checks: the twin accepts the merged pod, and refuses it
// once the first project label is removed), TestHandles (4) and TestLabelSelectorParse (17).
// Namespaces are learned through the plugin's own webhook; patches are applied for real and
// re-run on their own output. One case differs (node labels are not learned), asserted as we behave.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, {
  parseProjectSelector,
  type OriginPodNodeEnvironmentConfig,
} from '../../functions/origin-pod-node-environment/plugin.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, requestOf, runPhase } from '../support/review.js';

const SOURCE = { file: 'test', baseDir: '.' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as OriginPodNodeEnvironmentConfig;
const withDefault = (defaultNodeSelector: string) => configure({ defaultNodeSelector });
const PROJECT = 'openshift.io/node-selector';

let store: TestStore;
let counter = 0;
beforeAll(async () => {
  store = await testStore('origin-pod-node-environment');
});
afterAll(() => store.close());

async function namespaceWith(annotations?: Record<string, string>): Promise<string> {
  const name = `testproject-${++counter}`;
  const result = await lambdaFor(
    plugin,
    store,
    withDefault(''),
  )('validate', namespaceReview('CREATE', name, { ...(annotations && { annotations }) }));
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

interface Case {
  testName: string;
  defaultNodeSelector: string;
  projectNodeSelector?: string;
  podNodeSelector?: Record<string, string>;
  podNodeName?: string;
  mergedNodeSelector: Record<string, string>;
  ignoreProjectNodeSelector?: boolean;
  admit: boolean;
  /** Where we answer otherwise than upstream, and why. */
  differs?: string;
}

const cases: Case[] = [
  {
    testName: 'No node selectors',
    defaultNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    ignoreProjectNodeSelector: true,
    admit: true,
  },
  {
    testName: 'Default node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    ignoreProjectNodeSelector: true,
    admit: true,
  },
  {
    testName: 'Project node selector and no conflicts',
    defaultNodeSelector: '',
    projectNodeSelector: 'infra = false',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    admit: true,
  },
  {
    testName: 'Empty project node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    projectNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    admit: true,
  },
  {
    testName: 'Default and project node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    projectNodeSelector: 'infra=true',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'true' },
    admit: true,
  },
  {
    testName: 'Project and pod node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    projectNodeSelector: 'infra=true',
    podNodeSelector: { env: 'test' },
    mergedNodeSelector: { infra: 'true', env: 'test' },
    admit: true,
  },
  {
    testName: 'Conflicting pod and project node selector, one label',
    defaultNodeSelector: 'env = test',
    projectNodeSelector: 'infra=true',
    podNodeSelector: { infra: 'false' },
    mergedNodeSelector: { infra: 'false' },
    admit: false,
  },
  {
    testName: 'Conflicting pod and project node selector, multiple labels',
    defaultNodeSelector: 'env=dev',
    projectNodeSelector: 'infra=false, env = test',
    podNodeSelector: { env: 'dev', color: 'blue' },
    mergedNodeSelector: { env: 'dev', color: 'blue' },
    admit: false,
  },
  {
    testName: 'node referenced in pod.nodeName does not conflict with project node selector',
    defaultNodeSelector: '',
    projectNodeSelector: 'worker=true',
    podNodeName: 'worker-1',
    mergedNodeSelector: {},
    admit: false,
    differs:
      "node labels are not learned, so the node cannot be matched against the project's selector: refused as upstream refuses a node it cannot find",
  },
  {
    testName:
      'node referenced in pod spec.nodeName can conflict with its own node selector when no project node selector is specified',
    defaultNodeSelector: '',
    projectNodeSelector: '',
    podNodeName: 'worker-1',
    podNodeSelector: { worker: 'false' },
    mergedNodeSelector: { worker: 'false' },
    admit: true,
  },
  {
    testName: 'node referenced in pod spec.nodeName conflicts with project node selector',
    defaultNodeSelector: 'worker = true',
    projectNodeSelector: 'worker=false',
    podNodeName: 'worker-1',
    mergedNodeSelector: {},
    admit: false,
  },
  {
    testName: 'missing node referenced in pod spec.nodeName does not admit',
    defaultNodeSelector: '',
    projectNodeSelector: 'worker=true',
    podNodeName: 'worker-2',
    mergedNodeSelector: {},
    admit: false,
  },
];

describe('TestPodAdmission', () => {
  it.each(cases)('$testName', async (c) => {
    const namespace = await namespaceWith(
      c.ignoreProjectNodeSelector ? undefined : { [PROJECT]: c.projectNodeSelector ?? '' },
    );
    const config = withDefault(c.defaultNodeSelector);
    const input: ReviewInput = { object: pod(namespace, c.podNodeSelector, c.podNodeName) };
    const result = await mutateIdempotently(plugin, input, config, stateFor(input));
    expect(deniedMessage(result) === undefined).toBe(c.admit);
    expect(selectorOf(result.patchedObject)).toEqual(c.mergedNodeSelector);
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
  it.each([
    ['', {}, true],
    ['   ', {}, true],
    ['x=a', { x: 'a' }, true],
    ['x=a,y=b,z=c', { x: 'a', y: 'b', z: 'c' }, true],
    ['x = a, y=b ,z  = c  ', { x: 'a', y: 'b', z: 'c' }, true],
    ['color=green, env = test ,service= front ', { color: 'green', env: 'test', service: 'front' }, true],
    [',', {}, false],
    ['x', {}, false],
    ['x,y', {}, false],
    ['x=$y', {}, false],
    ['x!=y', {}, false],
    ['x==y', {}, false],
    ['x=a||y=b', {}, false],
    ['x in (y)', {}, false],
    ['x notin (y)', {}, false],
    ['x y', {}, false],
    ['node-role.kubernetes.io/infra=', { 'node-role.kubernetes.io/infra': '' }, true],
  ] as [string, Record<string, string>, boolean][])('%j', (selector, labels, valid) => {
    if (valid) expect(parseProjectSelector(selector)).toEqual(labels);
    else expect(() => parseProjectSelector(selector)).toThrow();
  });
});

describe('never-seen namespaces', () => {
  it('default: the default selector is merged', async () => {
    const input: ReviewInput = { object: pod('never-seen') };
    const result = await runPhase(plugin, 'mutate', input, withDefault('region=east'), stateFor(input));
    expect(selectorOf(result.patchedObject)).toEqual({ region: 'east' });
  });

  it("reject: upstream's lister error", async () => {
    const input: ReviewInput = { object: pod('never-seen') };
    const result = await runPhase(
      plugin,
      'mutate',
      input,
      { ...withDefault(''), unknownNamespace: 'reject' },
      stateFor(input),
    );
    expect(deniedMessage(result)).toBe('pods "testPod" is forbidden: namespace "never-seen" not found');
  });
});

describe('the dryRun gate', () => {
  it('a dry-run Namespace write sends zero writes', async () => {
    store.reset();
    const result = await lambdaFor(
      plugin,
      store,
      withDefault(''),
    )('validate', namespaceReview('CREATE', 'dry', { annotations: { [PROJECT]: 'a=b' } }, { dryRun: true }));
    expect(result.review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
  });
});

describe('configuration', () => {
  it('no entry: an empty default selector', () => {
    expect(configure(undefined)).toEqual({ defaultNodeSelector: '', unknownNamespace: 'default' });
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
