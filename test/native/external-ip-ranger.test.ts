// network.openshift.io/ExternalIPRanger natively (Kubernetes 1.31+): OpenShift's TestAdmission and
// TestHandles (openshift-kube-apiserver/admission/network/externalipranger/
// externalip_admission_test.go), as test/support/cases holds them. Its fake authorizer allows
// system:serviceaccount:test:admin; the webhook names that account in allowedUsers. The policies
// agree with the webhook, and, with the authorizer alone, with OpenShift's expectations. On 1.30
// the plugin stays a webhook.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/external-ip-ranger/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import type { AdmissionCase } from '../support/cases/external-ip-ranger.js';
import { ADMIN, ADMISSION_CASES, IPV4, rangerConfig, serviceAccount } from '../support/cases/external-ip-ranger.js';
import { NativeCluster, configured, expectSameValidation, nativeObjectsOf, useAuthorizer } from './support/proof.js';

const asked = useAuthorizer((a) => a.user.username === ADMIN);

const ORDINARY = 'ordinary-user';

/** Beyond OpenShift's rows: every refused IP is named, in order. */
const AGGREGATE: AdmissionCase = {
  testName: 'two refused IPs aggregate',
  admit: false,
  op: 'CREATE',
  admits: [IPV4],
  externalIPs: ['1.2.3.4', '172.0.0.1', 'abcd'],
  user: ORDINARY,
  errContains: [
    '[spec.externalIPs[0]: Forbidden: externalIP is not allowed, spec.externalIPs[2]: Forbidden: externalIPs must be a valid address]',
  ],
};
const ROWS = [...ADMISSION_CASES, AGGREGATE];

/** Only the authorizer decides (no allowlist), or the webhook's stand-in for it too. */
const rawConfig = (
  c: Pick<AdmissionCase, 'rejects' | 'admits' | 'ingressIP' | 'loadBalancer'>,
  allowedUsers: string[],
) => rangerConfig(c, { allowedUsers, allowedGroups: [] });

function inputOf(row: AdmissionCase): ReviewInput {
  const service = (status?: unknown): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'test', namespace: 'namespace' },
    spec: {
      type: row.loadBalancer ? 'LoadBalancer' : 'ClusterIP',
      ...(row.externalIPs && { externalIPs: row.externalIPs }),
    },
    ...(status !== undefined && { status }),
  });
  const old = row.ingressIP ? service({ loadBalancer: { ingress: [{ ip: row.ingressIP }] } }) : null;
  return {
    kind: { kind: 'Service' },
    resource: { resource: 'services' },
    operation: row.op,
    object: service(),
    oldObject: old,
    userInfo: serviceAccount(row.user),
  };
}

const NATIVE_VERSIONS = ENVIRONMENT_VERSIONS.filter((v) => v !== '1.30');

describe.each(NATIVE_VERSIONS)('on Kubernetes %s', (version) => {
  it.each(ROWS)('$testName', async (row) => {
    const input = inputOf(row);
    const webhookEntry = configured(plugin, rawConfig(row, [ADMIN]));
    const webhook = await runPhase(plugin, 'validate', input, webhookEntry.config);
    expect(webhook.wire.response?.allowed).toBe(row.admit);
    for (const part of row.errContains ?? []) expect(webhook.wire.response?.status?.message).toContain(part);
    const agreeing = new NativeCluster(nativeObjectsOf(webhookEntry, version), version);
    expectSameValidation(webhook, await agreeing.validate(input), plugin.metadata.name);
    const authorizerOnly = new NativeCluster(nativeObjectsOf(configured(plugin, rawConfig(row, [])), version), version);
    expectSameValidation(webhook, await authorizerOnly.validate(input), plugin.metadata.name);
  });

  it('asks the authorizer as OpenShift does (create service/externalips in network.openshift.io), only when an IP is refused', async () => {
    const cluster = new NativeCluster(
      nativeObjectsOf(configured(plugin, rawConfig({ admits: [IPV4] }, [])), version),
      version,
    );
    asked.length = 0;
    await cluster.validate(
      inputOf({ testName: '', admit: true, op: 'CREATE', externalIPs: ['172.0.0.1'], user: ORDINARY }),
    );
    expect(asked).toEqual([]);
    await cluster.validate(
      inputOf({ testName: '', admit: false, op: 'CREATE', externalIPs: ['1.2.3.4'], user: ORDINARY }),
    );
    expect(asked).toEqual([
      expect.objectContaining({
        verb: 'create',
        apiGroup: 'network.openshift.io',
        resource: 'service',
        subresource: 'externalips',
        namespace: '',
        name: '',
      }),
    ]);
  });

  it.each(['CONNECT', 'DELETE'] as const)('TestHandles: %s is not judged', async (operation) => {
    const cluster = new NativeCluster(nativeObjectsOf(configured(plugin, rawConfig({}, [])), version), version);
    const row: AdmissionCase = { testName: '', admit: true, op: operation, externalIPs: ['1.2.3.4'], user: ORDINARY };
    const native = await cluster.validate({
      ...inputOf(row),
      object: operation === 'DELETE' ? null : inputOf(row).object,
      oldObject: inputOf(row).object,
    });
    expect(native.wire.response?.allowed).toBe(true);
  });
});

describe('on Kubernetes 1.30', () => {
  it("stays a webhook: CEL's ip and cidr libraries come with 1.31", () => {
    const plan = planPlugin(configured(plugin, rawConfig({ admits: [IPV4] }, [])), '1.30');
    expect(plan.objects).toBeUndefined();
    expect(plan.line).toContain('1.31');
  });
});
