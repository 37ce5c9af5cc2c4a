// scheduling.openshift.io/OriginPodNodeEnvironment and autoscaling.openshift.io/RunOnceDuration
// natively (Kubernetes 1.36+): OpenShift's TestPodAdmission (admission/scheduler/nodeenv),
// TestLabelSelectorParse's selectors (nodeenv/labelselector, as project annotations) and
// TestRunOnceDurationAdmit (admission/autoscaling/runonceduration), ported anew. The project
// annotation is what both see (the webhook as learned, the policies as namespaceObject); each case
// goes through the webhook's chain and the policies' chain.
import { describe, expect, it } from 'vitest';
import originPodNodeEnvironment from '../../functions/origin-pod-node-environment/plugin.js';
import runOnceDuration from '../../functions/run-once-duration/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import {
  NativeCluster,
  configured,
  expectSameAdmission,
  namespaceState,
  nativeObjectsOf,
  refusalReason,
} from './support/proof.js';

const PROJECT = 'testProject';

describe('OriginPodNodeEnvironment on Kubernetes 1.36', () => {
  interface Row {
    readonly testName: string;
    readonly defaultNodeSelector: string;
    /** undefined: no annotation (ignoreProjectNodeSelector). */
    readonly projectNodeSelector?: string;
    readonly podNodeSelector?: Record<string, string>;
    readonly podNodeName?: string;
    readonly admit: boolean;
    readonly merged?: Record<string, string>;
  }
  // TestPodAdmission, row by row.
  const ROWS: Row[] = [
    { testName: 'No node selectors', defaultNodeSelector: '', podNodeSelector: {}, merged: {}, admit: true },
    {
      testName: 'Default node selector and no conflicts',
      defaultNodeSelector: 'infra = false',
      podNodeSelector: {},
      merged: { infra: 'false' },
      admit: true,
    },
    {
      testName: 'Project node selector and no conflicts',
      defaultNodeSelector: '',
      projectNodeSelector: 'infra = false',
      podNodeSelector: {},
      merged: { infra: 'false' },
      admit: true,
    },
    {
      testName: 'Empty project node selector and no conflicts',
      defaultNodeSelector: 'infra = false',
      projectNodeSelector: '',
      podNodeSelector: {},
      merged: {},
      admit: true,
    },
    {
      testName: 'Default and project node selector, no conflicts',
      defaultNodeSelector: 'infra = false',
      projectNodeSelector: 'infra=true',
      podNodeSelector: {},
      merged: { infra: 'true' },
      admit: true,
    },
    {
      testName: 'Project and pod node selector, no conflicts',
      defaultNodeSelector: 'infra = false',
      projectNodeSelector: 'infra=true',
      podNodeSelector: { env: 'test' },
      merged: { infra: 'true', env: 'test' },
      admit: true,
    },
    {
      testName: 'Conflicting pod and project node selector, one label',
      defaultNodeSelector: 'env = test',
      projectNodeSelector: 'infra=true',
      podNodeSelector: { infra: 'false' },
      admit: false,
    },
    {
      testName: 'Conflicting pod and project node selector, multiple labels',
      defaultNodeSelector: 'env=dev',
      projectNodeSelector: 'infra=false, env = test',
      podNodeSelector: { env: 'dev', color: 'blue' },
      admit: false,
    },
    {
      testName:
        'node referenced in pod spec.nodeName can conflict with its own node selector when no project node selector is specified',
      defaultNodeSelector: '',
      projectNodeSelector: '',
      podNodeName: 'worker-1',
      podNodeSelector: { worker: 'false' },
      merged: { worker: 'false' },
      admit: true,
    },
    {
      testName: 'node referenced in pod spec.nodeName conflicts with project node selector',
      defaultNodeSelector: 'worker = true',
      projectNodeSelector: 'worker=false',
      podNodeName: 'worker-1',
      admit: false,
    },
    {
      testName: 'missing node referenced in pod spec.nodeName does not admit',
      defaultNodeSelector: '',
      projectNodeSelector: 'worker=true',
      podNodeName: 'worker-2',
      admit: false,
    },
  ];

  const pod = (row: Pick<Row, 'podNodeSelector' | 'podNodeName'>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'testPod', namespace: PROJECT },
    spec: {
      ...(row.podNodeSelector && { nodeSelector: row.podNodeSelector }),
      ...(row.podNodeName && { nodeName: row.podNodeName }),
    },
  });
  function setup(defaultNodeSelector: string, annotations: Record<string, string>) {
    const entry = configured(originPodNodeEnvironment, { defaultNodeSelector });
    return {
      entry,
      state: namespaceState([{ name: PROJECT, annotations }]),
      cluster: new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36'),
    };
  }

  // A pod that names its node is judged by the webhook against the Node's learned labels; a policy
  // cannot read a Node, so those rows are the documented difference below, not a proof row.
  it.each(ROWS.filter((row) => row.podNodeName === undefined))('$testName', async (row) => {
    const annotations: Record<string, string> =
      row.projectNodeSelector === undefined ? {} : { 'openshift.io/node-selector': row.projectNodeSelector };
    const { entry, state, cluster } = setup(row.defaultNodeSelector, annotations);
    const input: ReviewInput = { object: pod(row), namespace: PROJECT };
    const { outcome } = await expectSameAdmission(originPodNodeEnvironment, entry.config, cluster, input, state);
    expect(outcome.wire.response?.allowed).toBe(row.admit);
    if (row.admit)
      expect(
        ((await cluster.mutate(input, state)).patchedObject?.spec as { nodeSelector?: unknown } | undefined)
          ?.nodeSelector,
      ).toEqual(row.merged);
  });

  it('the difference: a pod naming its node in a project with a selector is refused by the policy, which cannot read the Node', async () => {
    const { cluster, state } = setup('', { 'openshift.io/node-selector': 'worker=true' });
    const input: ReviewInput = { object: pod({ podNodeName: 'worker-1' }), namespace: PROJECT };
    const mutated = await cluster.mutate(input, state);
    expect(mutated.wire.response?.allowed).toBe(true);
    expect(refusalReason(await cluster.validate({ ...input, object: mutated.patchedObject }, state))).toMatch(
      /cannot validate project node label selector: node "worker-1" not found$/,
    );
  });

  it("leaves a namespace with PodNodeSelector's annotation to PodNodeSelector", async () => {
    const { entry, state, cluster } = setup('infra=false', {
      'scheduler.alpha.kubernetes.io/node-selector': 'a=b',
      'openshift.io/node-selector': 'x=y',
    });
    await expectSameAdmission(
      originPodNodeEnvironment,
      entry.config,
      cluster,
      { object: pod({ podNodeSelector: { x: 'z' } }), namespace: PROJECT },
      state,
    );
  });

  // TestLabelSelectorParse's selectors, and more malformed ones, as a project annotation.
  const SELECTORS = [
    '',
    '   ',
    'x=a',
    'x=a,y=b,z=c',
    'x = a, y=b ,z  = c  ',
    'color=green, env = test ,service= front ',
    ',',
    'x',
    'x,y',
    'x=$y',
    'x!=y',
    'x==y',
    'x=a||y=b',
    'x in (y)',
    'x notin (y)',
    'x y',
    'node-role.kubernetes.io/infra=',
    'x=a,',
    '=a',
    'x=a b',
    'a/b/c=d',
    'x=a,x=b',
    'Bad_Prefix/x=y',
    `x=${'v'.repeat(64)}`,
  ];
  it.each(SELECTORS)('the project selector %j parses as OpenShift parses it', async (selector) => {
    const { entry, state, cluster } = setup('', { 'openshift.io/node-selector': selector });
    const input: ReviewInput = { object: pod({ podNodeSelector: {} }), namespace: PROJECT };
    const webhook = await runPhase(originPodNodeEnvironment, 'mutate', input, entry.config, state);
    if (webhook.wire.response?.status?.code === 500) {
      // OpenShift returns the parser's error as is (a 500); the policy refuses with its text.
      expect((await cluster.mutate(input, state)).patch).toEqual([]);
      const native = await cluster.validate(input, state);
      expect(refusalReason(native)).toMatch(
        new RegExp(`denied request: ${webhook.wire.response.status.message?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
      );
    } else await expectSameAdmission(originPodNodeEnvironment, entry.config, cluster, input, state);
  });
});

describe('RunOnceDuration on Kubernetes 1.36', () => {
  const ANNOTATION = 'openshift.io/active-deadline-seconds-override';
  const pod = (restartPolicy: string, activeDeadlineSeconds?: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'test', namespace: 'default' },
    spec: {
      restartPolicy,
      containers: [{ name: 'c', image: 'i' }],
      ...(activeDeadlineSeconds !== undefined && { activeDeadlineSeconds }),
    },
  });
  // TestRunOnceDurationAdmit: [name, cluster limit, pod, project annotation, expected deadline]
  const ROWS: [string, number | undefined, KubeObject, string | undefined, number | undefined][] = [
    ['expect globally configured duration to be set', 10, pod('Never'), undefined, 10],
    ['empty config, no duration to be set', undefined, pod('Never'), undefined, undefined],
    ['expect configured duration to not limit lower existing duration', 10, pod('Never', 5), undefined, 5],
    ['expect empty config to not limit existing duration', undefined, pod('Never', 5), undefined, 5],
    ['expect project limit to be used with nil global value', undefined, pod('Never', 2000), '1000', 1000],
    ['expect project limit to not limit a smaller set value', undefined, pod('Never', 10), '1000', 10],
    ['expect project limit to have priority over global config value', 10, pod('Never', 2000), '1000', 1000],
    ['make no change to a pod that is not a run-once pod', 10, pod('Always'), undefined, undefined],
    ['update a pod that has a RestartOnFailure policy', 10, pod('OnFailure'), undefined, 10],
  ];
  const entryOf = (limit: number | undefined) =>
    configured(runOnceDuration, {
      apiVersion: 'autoscaling.openshift.io/v1',
      kind: 'RunOnceDurationConfig',
      ...(limit !== undefined && { activeDeadlineSecondsOverride: limit }),
    });

  it.each(ROWS)('%s', async (_name, limit, object, annotation, expected) => {
    const entry = entryOf(limit);
    const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
    const state = namespaceState([
      { name: 'default', annotations: annotation === undefined ? {} : { [ANNOTATION]: annotation } },
    ]);
    const { webhook } = await expectSameAdmission(runOnceDuration, entry.config, cluster, { object }, state);
    expect(
      (webhook.patchedObject?.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds,
    ).toEqual(expected);
  });

  it.each(['+0100', '-5', '0', 'abc', '1.5', '9223372036854775807', '9223372036854775808', '-9223372036854775809', ''])(
    'the project limit %j parses as strconv.ParseInt parses it',
    async (annotation) => {
      const entry = entryOf(3600);
      const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
      const state = namespaceState([{ name: 'default', annotations: { [ANNOTATION]: annotation } }]);
      await expectSameAdmission(runOnceDuration, entry.config, cluster, { object: pod('Never', 7200) }, state);
    },
  );
  it('prints the int64 extremes exactly, as Go does (the webhook rounds them to a double)', async () => {
    const entry = entryOf(3600);
    const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
    const state = namespaceState([{ name: 'default', annotations: { [ANNOTATION]: '-9223372036854775808' } }]);
    const native = await cluster.validate({ object: pod('Never', 7200) }, state);
    expect(refusalReason(native)).toContain('must be at most -9223372036854775808 for run-once pods');
  });
});

describe.each([originPodNodeEnvironment, runOnceDuration])('$metadata.upstreamName before 1.36', (plugin) => {
  it('stays a webhook', () => {
    expect(
      planPlugin(
        configured(
          plugin,
          plugin === runOnceDuration
            ? { apiVersion: 'autoscaling.openshift.io/v1', kind: 'RunOnceDurationConfig' }
            : {},
        ),
        '1.35',
      ).objects,
    ).toBeUndefined();
  });
});
