// pod-node-constraints natively: the ValidatingAdmissionPolicy `emit --native` compiles, applied to
// a real apiserver, answers OpenShift's TestPodNodeConstraints, TestPodNodeConstraintsPodUpdate and
// TestPodNodeConstraintsNonHandledResources (test/support/cases) as the webhook does on another
// apiserver, each request made as the row's user (impersonated). OpenShift's fake authorizer lets
// one service account create pods/binding: on the native side that is a real RBAC grant and the
// policy's configuration has no allowlist (the authorizer alone decides); the webhook, which cannot
// ask the authorizer, names the account in allowedUsers. Row 6 (no configuration) is the plugin
// not emitted, which test/native checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { create, pod } from './support/kube.js';
import { policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import {
  expectSameOutcome,
  grant,
  labelled,
  modify,
  namespaceWithAccount,
  seedObject,
  startNativePair,
} from './support/native-pair.js';
import type { PodShape } from '../support/cases/pod-node-constraints.js';
import { BINDER, POD_NODE_CONSTRAINTS_CASES, PODS, serviceAccount } from '../support/cases/pod-node-constraints.js';

const config = (allowedUsers: string[]) => `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: scheduling.openshift.io/PodNodeConstraints
    configuration: ${JSON.stringify({
      apiVersion: 'scheduling.openshift.io/v1',
      kind: 'PodNodeConstraintsConfig',
      nodeSelectorLabelBlacklist: ['bogus'],
      allowedUsers,
      allowedGroups: [],
    })}
`;

const podOf = (name: string, shape: PodShape): KubeObject => {
  const object = pod('team-a', name, shape.spec);
  return shape.annotations ? { ...object, metadata: { ...object.metadata, annotations: shape.annotations } } : object;
};

async function seed(cluster: ControlPlane): Promise<void> {
  await namespaceWithAccount(cluster, 'team-a');
  // Every user of the rows may write pods and quotas; only BINDER may create pods/binding.
  await grant(cluster, 'e2e-writer', [{ apiGroups: [''], resources: ['pods', 'resourcequotas'], verbs: ['*'] }], {
    groups: ['system:authenticated'],
  });
  await grant(cluster, 'e2e-binder', [{ apiGroups: [''], resources: ['pods/binding'], verbs: ['create'] }], {
    users: [BINDER],
  });
  await seedObject(cluster, podOf('updated', PODS.nodeNamePod));
}

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(config([BINDER]), {
    nativeAdmissionConfiguration: config([]),
    seed,
    inForce: async (cluster) =>
      (await create(cluster, podOf('probe', PODS.nodeSelectorPod), { dryRun: true, as: 'someone' })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('pod-node-constraints (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const row of POD_NODE_CONSTRAINTS_CASES.filter((c) => c.config !== 'nil')) {
    it(`answers as the webhook does: ${row.n}: ${row.name}`, async () => {
      const [webhook, native] = await pair.both((cluster) =>
        create(cluster, podOf(`row-${row.n}`, row.pod), { as: row.userinfo.username, groups: row.userinfo.groups }),
      );
      expect(webhook.status === 201, webhook.message ?? 'admitted').toBe(row.expectedErrorMsg === '');
      expectSameOutcome(webhook, native);
      if (row.expectedErrorMsg) expect(policyDenial(native.message)?.message).toBe(row.expectedErrorMsg);
    });
  }

  it('answers as the webhook does: TestPodNodeConstraintsPodUpdate', async () => {
    const user = serviceAccount('', '');
    const [webhook, native] = await pair.both((cluster) =>
      modify(cluster, podOf('updated', PODS.nodeNamePod), labelled({ changed: 'yes' }), {
        as: user.username,
        groups: user.groups,
      }),
    );
    expect(webhook.status, webhook.message).toBe(200);
    expectSameOutcome(webhook, native);
  });

  it('answers as the webhook does: TestPodNodeConstraintsNonHandledResources', async () => {
    const user = serviceAccount('', '');
    const quota = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'test', namespace: 'team-a' },
      spec: {},
    };
    const [webhook, native] = await pair.both((cluster) =>
      create(cluster, quota, { as: user.username, groups: user.groups }),
    );
    expect(webhook.status, webhook.message).toBe(201);
    expectSameOutcome(webhook, native);
  });
});
