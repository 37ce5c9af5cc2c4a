// scheduling.openshift.io/OriginPodNodeEnvironment and autoscaling.openshift.io/RunOnceDuration
// natively (Kubernetes 1.36+): OpenShift's TestPodAdmission (admission/scheduler/nodeenv),
// TestLabelSelectorParse's selectors (nodeenv/labelselector, as project annotations) and
// TestRunOnceDurationAdmit (admission/autoscaling/runonceduration), as test/support/cases holds
// them. The project annotation is what both see (the webhook as learned, the policies as
// namespaceObject); each case goes through the webhook's chain and the policies' chain.
import { describe, expect, it } from 'vitest';
import originPodNodeEnvironment from '../../functions/origin-pod-node-environment/plugin.js';
import runOnceDuration from '../../functions/run-once-duration/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import type { PodAdmissionCase } from '../support/cases/origin-pod-node-environment.js';
import {
  LABEL_SELECTOR_PARSE_CASES,
  POD_ADMISSION_CASES,
  PROJECT_NODE_SELECTOR_ANNOTATION,
  projectAnnotations,
} from '../support/cases/origin-pod-node-environment.js';
import {
  ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION,
  RUN_ONCE_DURATION_ADMIT_CASES,
  projectLimitAnnotations,
} from '../support/cases/run-once-duration.js';
import { titled } from '../support/titled.js';
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
  const pod = (row: Pick<PodAdmissionCase, 'podNodeSelector' | 'podNodeName'>): KubeObject => ({
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
  it.each(POD_ADMISSION_CASES.filter((row) => row.podNodeName === undefined))('$testName', async (row) => {
    const { entry, state, cluster } = setup(row.defaultNodeSelector, projectAnnotations(row) ?? {});
    const input: ReviewInput = { object: pod(row), namespace: PROJECT };
    const { outcome } = await expectSameAdmission(originPodNodeEnvironment, entry.config, cluster, input, state);
    expect(outcome.wire.response?.allowed).toBe(row.admit);
    if (row.admit)
      expect(
        ((await cluster.mutate(input, state)).patchedObject?.spec as { nodeSelector?: unknown } | undefined)
          ?.nodeSelector,
      ).toEqual(row.mergedNodeSelector);
  });

  it('the difference: a pod naming its node in a project with a selector is refused by the policy, which cannot read the Node', async () => {
    const { cluster, state } = setup('', { [PROJECT_NODE_SELECTOR_ANNOTATION]: 'worker=true' });
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
      [PROJECT_NODE_SELECTOR_ANNOTATION]: 'x=y',
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
    ...LABEL_SELECTOR_PARSE_CASES.map(([selector]) => selector),
    'x=a,',
    '=a',
    'x=a b',
    'a/b/c=d',
    'x=a,x=b',
    'Bad_Prefix/x=y',
    `x=${'v'.repeat(64)}`,
  ];
  it.each(SELECTORS)('the project selector %j parses as OpenShift parses it', async (selector) => {
    const { entry, state, cluster } = setup('', { [PROJECT_NODE_SELECTOR_ANNOTATION]: selector });
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
  const entryOf = (limit: number | undefined) =>
    configured(runOnceDuration, {
      apiVersion: 'autoscaling.openshift.io/v1',
      kind: 'RunOnceDurationConfig',
      ...(limit !== undefined && { activeDeadlineSecondsOverride: limit }),
    });

  it.each(titled(RUN_ONCE_DURATION_ADMIT_CASES, (c) => c.name))('%s', async (_title, row) => {
    const entry = entryOf(row.limit);
    const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
    const state = namespaceState([{ name: 'default', annotations: projectLimitAnnotations(row) ?? {} }]);
    const object = pod(row.restartPolicy, row.podDeadline);
    const { webhook } = await expectSameAdmission(runOnceDuration, entry.config, cluster, { object }, state);
    expect(
      (webhook.patchedObject?.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds,
    ).toEqual(row.expectedActiveDeadlineSeconds);
  });

  it.each(['+0100', '-5', '0', 'abc', '1.5', '9223372036854775807', '9223372036854775808', '-9223372036854775809', ''])(
    'the project limit %j parses as strconv.ParseInt parses it',
    async (annotation) => {
      const entry = entryOf(3600);
      const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
      const state = namespaceState([
        { name: 'default', annotations: { [ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION]: annotation } },
      ]);
      await expectSameAdmission(runOnceDuration, entry.config, cluster, { object: pod('Never', 7200) }, state);
    },
  );
  it('prints the int64 extremes exactly, as Go does (the webhook rounds them to a double)', async () => {
    const entry = entryOf(3600);
    const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
    const state = namespaceState([
      { name: 'default', annotations: { [ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION]: '-9223372036854775808' } },
    ]);
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
