// scheduling.openshift.io/PodNodeConstraints natively: OpenShift's TestPodNodeConstraints,
// TestPodNodeConstraintsPodUpdate and TestPodNodeConstraintsNonHandledResources
// (openshift-kube-apiserver/admission/scheduler/podnodeconstraints/admission_test.go), ported anew.
// Its fake authorizer allows one service account; the webhook names that account in allowedUsers.
// The policies agree with the webhook, and, with the authorizer alone (no allowlist), with
// OpenShift's expected errors.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-node-constraints/plugin.js';
import type { KubeObject, UserInfo } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import {
  NativeCluster,
  configured,
  expectSameValidation,
  nativeObjectsOf,
  refusalReason,
  useAuthorizer,
} from './support/proof.js';

const BINDER = 'system:serviceaccount:openshift-infra:daemonset-controller';
const asked = useAuthorizer((a) => a.user.username === BINDER);

const CONFIG = {
  apiVersion: 'scheduling.openshift.io/v1',
  kind: 'PodNodeConstraintsConfig',
  nodeSelectorLabelBlacklist: ['bogus'],
};
/** The webhook's stand-in for the fake authorizer. */
const WEBHOOK_CONFIG = { ...CONFIG, allowedUsers: [BINDER], allowedGroups: [] };
/** The policy with nothing but the authorizer. */
const AUTHORIZER_ONLY = { ...CONFIG, allowedUsers: [], allowedGroups: [] };

const sa = (namespace: string, name: string): UserInfo => ({
  username: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
});
const node = (name: string): UserInfo => ({ username: `system:node:${name}`, groups: ['system:nodes'] });

function pod(spec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'test', namespace: 'default', ...(annotations && { annotations }) },
    spec,
  };
}
const defaultPod = pod({});
const nodeNamePod = pod({ nodeName: 'frank' });
const nodeSelectorPod = pod({ nodeSelector: { bogus: 'frank' } });
const nodeNameNodeSelectorPod = pod({ nodeName: 'frank', nodeSelector: { bogus: 'frank' } });
const nodeNameMirrorPod = pod({ nodeName: 'frank' }, { 'kubernetes.io/config.mirror': 'true' });

// TestPodNodeConstraints: [row, pod, user, OpenShift's expected error ('' for none)]
const ROWS: [string, KubeObject, UserInfo, string][] = [
  ['0: unspecified defaults', defaultPod, sa('', ''), ''],
  [
    '1: nodeSelector without pods/binding',
    nodeSelectorPod,
    sa('', ''),
    'node selection by label(s) [bogus] is prohibited by policy for your role',
  ],
  [
    '2: nodeName without pods/binding',
    nodeNamePod,
    sa('herpy', 'derpy'),
    'node selection by nodeName is prohibited by policy for your role',
  ],
  [
    '3: nodeName and nodeSelector without pods/binding',
    nodeNameNodeSelectorPod,
    sa('herpy', 'derpy'),
    'node selection by nodeName and label(s) [bogus] is prohibited by policy for your role',
  ],
  ['4: nodeSelector with pods/binding', nodeSelectorPod, sa('openshift-infra', 'daemonset-controller'), ''],
  ['5: nodeName with pods/binding', nodeNamePod, sa('openshift-infra', 'daemonset-controller'), ''],
  ['7: a node self-targeting a mirror pod', nodeNameMirrorPod, node('frank'), ''],
  [
    '8: a node self-targeting a non-mirror pod',
    nodeNamePod,
    node('frank'),
    'node selection by nodeName is prohibited by policy for your role',
  ],
  [
    '9: a node targeting another with a mirror pod',
    nodeNameMirrorPod,
    node('bob'),
    'node selection by nodeName is prohibited by policy for your role',
  ],
  [
    '10: a node targeting another with a non-mirror pod',
    nodeNamePod,
    node('bob'),
    'node selection by nodeName is prohibited by policy for your role',
  ],
];

const cases: { name: string; input: ReviewInput; error: string }[] = [
  ...ROWS.map(([name, object, userInfo, error]) => ({
    name,
    error,
    input: { object, userInfo, namespace: 'default', name: 'test' },
  })),
  {
    name: 'TestPodNodeConstraintsPodUpdate',
    error: '',
    input: { operation: 'UPDATE', object: nodeNamePod, oldObject: nodeNamePod, userInfo: sa('', '') },
  },
  {
    name: 'TestPodNodeConstraintsNonHandledResources',
    error: '',
    input: {
      kind: { kind: 'ResourceQuota' },
      resource: { resource: 'resourcequotas' },
      object: { kind: 'ResourceQuota', metadata: { name: 'test', namespace: 'default' } },
      userInfo: sa('', ''),
    },
  },
];

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  const webhookEntry = configured(plugin, WEBHOOK_CONFIG);
  const agreeing = new NativeCluster(nativeObjectsOf(webhookEntry, version), version);
  const authorizerOnly = new NativeCluster(nativeObjectsOf(configured(plugin, AUTHORIZER_ONLY), version), version);

  it.each(cases)('$name', async ({ input, error }) => {
    const webhook = await runPhase(plugin, 'validate', input, webhookEntry.config);
    expect(refusalReason(webhook) ?? '').toBe(error);
    expectSameValidation(webhook, await agreeing.validate(input), plugin.metadata.name);
    const native = await authorizerOnly.validate(input);
    expectSameValidation(webhook, native, plugin.metadata.name);
  });

  it("asks the authorizer as OpenShift does: create pods/binding, the pod's namespace and name", async () => {
    asked.length = 0;
    await authorizerOnly.validate({
      object: nodeNamePod,
      userInfo: sa('herpy', 'derpy'),
      namespace: 'default',
      name: 'test',
    });
    expect(asked).toEqual([
      expect.objectContaining({
        verb: 'create',
        resourceRequest: true,
        apiGroup: '',
        resource: 'pods',
        subresource: 'binding',
        namespace: 'default',
        name: 'test',
        user: expect.objectContaining({ username: 'system:serviceaccount:herpy:derpy' }),
      }),
    ]);
  });

  it('never asks for a pod that chooses no node', async () => {
    asked.length = 0;
    await authorizerOnly.validate({ object: defaultPod, userInfo: sa('', '') });
    expect(asked).toEqual([]);
  });

  it('is not emitted without its entry (OpenShift disables it: row 6)', () => {
    expect(nativeObjectsOf(configured(plugin), version)).toEqual([]);
  });
});
