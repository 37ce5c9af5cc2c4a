// scheduling.openshift.io/PodNodeConstraints natively: OpenShift's TestPodNodeConstraints,
// TestPodNodeConstraintsPodUpdate and TestPodNodeConstraintsNonHandledResources
// (openshift-kube-apiserver/admission/scheduler/podnodeconstraints/admission_test.go), as
// test/support/cases holds them. Its fake authorizer allows one service account; the webhook names
// that account in allowedUsers. The policies agree with the webhook, and, with the authorizer alone
// (no allowlist), with OpenShift's expected errors.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-node-constraints/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import type { PodShape } from '../support/cases/pod-node-constraints.js';
import { BINDER, POD_NODE_CONSTRAINTS_CASES, PODS, serviceAccount } from '../support/cases/pod-node-constraints.js';
import { titled } from '../support/titled.js';
import {
  NativeCluster,
  configured,
  expectSameValidation,
  nativeObjectsOf,
  refusalReason,
  useAuthorizer,
} from './support/proof.js';

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

function pod(shape: PodShape): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'test', namespace: 'default', ...(shape.annotations && { annotations: shape.annotations }) },
    spec: shape.spec,
  };
}
const defaultPod = pod(PODS.defaultPod);
const nodeNamePod = pod(PODS.nodeNamePod);

const cases: { name: string; input: ReviewInput; error: string }[] = [
  // TestPodNodeConstraints, all under testConfig: row 0's emptyConfig differs only in the blacklist,
  // and its pod selects no label. Row 6 (nilConfig, no entry) is the plugin not emitted, below.
  ...POD_NODE_CONSTRAINTS_CASES.filter((c) => c.config !== 'nil').map((c) => ({
    name: `${c.n}: ${c.name}`,
    error: c.expectedErrorMsg,
    input: { object: pod(c.pod), userInfo: c.userinfo, namespace: 'default', name: 'test' },
  })),
  {
    name: 'TestPodNodeConstraintsPodUpdate',
    error: '',
    input: { operation: 'UPDATE', object: nodeNamePod, oldObject: nodeNamePod, userInfo: serviceAccount('', '') },
  },
  {
    name: 'TestPodNodeConstraintsNonHandledResources',
    error: '',
    input: {
      kind: { kind: 'ResourceQuota' },
      resource: { resource: 'resourcequotas' },
      object: { kind: 'ResourceQuota', metadata: { name: 'test', namespace: 'default' } },
      userInfo: serviceAccount('', ''),
    },
  },
];

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  const webhookEntry = configured(plugin, WEBHOOK_CONFIG);
  const agreeing = new NativeCluster(nativeObjectsOf(webhookEntry, version), version);
  const authorizerOnly = new NativeCluster(nativeObjectsOf(configured(plugin, AUTHORIZER_ONLY), version), version);

  it.each(titled(cases, (c) => c.name))('%s', async (_title, { input, error }) => {
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
      userInfo: serviceAccount('herpy', 'derpy'),
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
    await authorizerOnly.validate({ object: defaultPod, userInfo: serviceAccount('', '') });
    expect(asked).toEqual([]);
  });

  it('is not emitted without its entry (OpenShift disables it: row 6)', () => {
    expect(nativeObjectsOf(configured(plugin), version)).toEqual([]);
  });
});
