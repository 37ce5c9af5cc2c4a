// network.openshift.io/ExternalIPRanger natively (Kubernetes 1.31+): OpenShift's TestAdmission and
// TestHandles (openshift-kube-apiserver/admission/network/externalipranger/
// externalip_admission_test.go), ported anew. Its fake authorizer allows system:serviceaccount:
// test:admin; the webhook names that account in allowedUsers. The policies agree with the webhook,
// and, with the authorizer alone, with OpenShift's expectations. On 1.30 the plugin stays a webhook.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/external-ip-ranger/plugin.js';
import type { KubeObject, Operation, UserInfo } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import { NativeCluster, configured, expectSameValidation, nativeObjectsOf, useAuthorizer } from './support/proof.js';

const ADMIN = 'system:serviceaccount:test:admin';
const asked = useAuthorizer((a) => a.user.username === ADMIN);

const sa = (name: string): UserInfo => ({
  username: `system:serviceaccount:test:${name}`,
  groups: ['system:serviceaccounts', 'system:serviceaccounts:test'],
});
const ORDINARY = sa('ordinary-user');
const ADMIN_USER = sa('admin');

const IPV4 = '172.0.0.0/16';
const IPV4_SUBSET = '172.0.1.0/24';
const IPV4_OFFSET = '172.200.0.0/24';
const NONE = '0.0.0.0/32';
const ALL = '0.0.0.0/0';

interface Row {
  readonly name: string;
  readonly admit: boolean;
  readonly op: Operation;
  readonly externalIPs?: string[];
  readonly admits?: string[];
  readonly rejects?: string[];
  readonly loadBalancer?: boolean;
  readonly ingressIP?: string;
  readonly user: UserInfo;
  /** What OpenShift's errFn looks for in the error. */
  readonly error?: string[];
}

// TestAdmission, row by row.
const ROWS: Row[] = [
  { name: 'No external IPs on create for test:ordinary-user user', admit: true, op: 'CREATE', user: ORDINARY },
  { name: 'No external IPs on update for test:admin user', admit: true, op: 'UPDATE', user: ORDINARY },
  {
    name: 'No external IPs allowed on create for test:ordinary-user user',
    admit: false,
    op: 'CREATE',
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
    error: ['externalIPs have been disabled'],
  },
  {
    name: 'External IPs allowed on create for test:admin user',
    admit: true,
    op: 'CREATE',
    externalIPs: ['1.2.3.4'],
    user: ADMIN_USER,
  },
  {
    name: 'No external IPs allowed on update',
    admit: false,
    op: 'UPDATE',
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
    error: ['externalIPs have been disabled'],
  },
  {
    name: 'External IPs allowed on update for test:admin user',
    admit: true,
    op: 'UPDATE',
    externalIPs: ['1.2.3.4'],
    user: ADMIN_USER,
  },
  {
    name: 'IP out of range on create',
    admit: false,
    op: 'CREATE',
    admits: [IPV4],
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
    error: ['externalIP is not allowed', 'spec.externalIPs[0]'],
  },
  {
    name: 'IP not in reject range on create and admits is empty',
    admit: true,
    op: 'CREATE',
    rejects: [IPV4],
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
  },
  {
    name: 'IP out of range on update',
    admit: false,
    op: 'UPDATE',
    admits: [IPV4],
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
    error: ['externalIP is not allowed', 'spec.externalIPs[0]'],
  },
  {
    name: 'IP out of range due to blacklist',
    admit: false,
    op: 'UPDATE',
    admits: [IPV4],
    rejects: [IPV4_SUBSET],
    externalIPs: ['172.0.1.1'],
    user: ORDINARY,
    error: ['externalIP is not allowed', 'spec.externalIPs[0]'],
  },
  {
    name: 'IP not in reject or admit',
    admit: false,
    op: 'UPDATE',
    admits: [IPV4],
    rejects: [IPV4_OFFSET],
    externalIPs: ['172.199.1.1'],
    user: ORDINARY,
    error: ['externalIP is not allowed', 'spec.externalIPs[0]'],
  },
  {
    name: 'IP in range on create for test:ordinary-user user',
    admit: true,
    op: 'CREATE',
    admits: [IPV4],
    externalIPs: ['172.0.0.1'],
    user: ORDINARY,
  },
  {
    name: 'IP in range on update for test:admin user',
    admit: true,
    op: 'UPDATE',
    admits: [IPV4],
    externalIPs: ['172.0.0.1'],
    user: ADMIN_USER,
  },
  {
    name: 'IP unparseable on create',
    admit: false,
    op: 'CREATE',
    admits: [IPV4],
    externalIPs: ['abcd'],
    user: ORDINARY,
    error: ['externalIPs must be a valid address', 'spec.externalIPs[0]'],
  },
  {
    name: 'IP range is empty for test:ordinary-user user',
    admit: false,
    op: 'CREATE',
    admits: [NONE],
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
    error: ['externalIP is not allowed'],
  },
  {
    name: 'IP range is empty, but test:admin user allowed',
    admit: true,
    op: 'CREATE',
    admits: [NONE],
    externalIPs: ['1.2.3.4'],
    user: ADMIN_USER,
  },
  {
    name: 'rejections can cover the entire range',
    admit: false,
    op: 'CREATE',
    rejects: [ALL],
    admits: [ALL],
    externalIPs: ['1.2.3.4'],
    user: ORDINARY,
  },
  {
    name: 'Ingress ip allowed when external ips are disabled',
    admit: true,
    op: 'UPDATE',
    externalIPs: ['1.2.3.4'],
    loadBalancer: true,
    ingressIP: '1.2.3.4',
    user: ORDINARY,
  },
  {
    name: 'Ingress ip allowed when external ips are enabled',
    admit: true,
    op: 'UPDATE',
    admits: [IPV4],
    externalIPs: ['1.2.3.4', '172.0.0.1'],
    loadBalancer: true,
    ingressIP: '1.2.3.4',
    user: ADMIN_USER,
  },
  {
    name: 'Ingress ip not allowed for non-lb service',
    admit: false,
    op: 'UPDATE',
    admits: [IPV4],
    externalIPs: ['1.2.3.4', '172.0.0.1'],
    loadBalancer: false,
    ingressIP: '1.2.3.4',
    user: ORDINARY,
  },
  // Beyond OpenShift's rows: every refused IP is named, in order.
  {
    name: 'two refused IPs aggregate',
    admit: false,
    op: 'CREATE',
    admits: [IPV4],
    externalIPs: ['1.2.3.4', '172.0.0.1', 'abcd'],
    user: ORDINARY,
    error: [
      '[spec.externalIPs[0]: Forbidden: externalIP is not allowed, spec.externalIPs[2]: Forbidden: externalIPs must be a valid address]',
    ],
  },
];

function rawConfig(row: Pick<Row, 'admits' | 'rejects' | 'ingressIP' | 'loadBalancer'>, allowedUsers: string[]) {
  return {
    apiVersion: 'network.openshift.io/v1',
    kind: 'ExternalIPRangerAdmissionConfig',
    externalIPNetworkCIDRs: [...(row.admits ?? []), ...(row.rejects ?? []).map((r) => `!${r}`)],
    allowIngressIP: (row.ingressIP ?? '') !== '' || row.loadBalancer === true,
    allowedUsers,
    allowedGroups: [],
  };
}

function inputOf(row: Row): ReviewInput {
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
    userInfo: row.user,
  };
}

const NATIVE_VERSIONS = ENVIRONMENT_VERSIONS.filter((v) => v !== '1.30');

describe.each(NATIVE_VERSIONS)('on Kubernetes %s', (version) => {
  it.each(ROWS)('$name', async (row) => {
    const input = inputOf(row);
    const webhookEntry = configured(plugin, rawConfig(row, [ADMIN]));
    const webhook = await runPhase(plugin, 'validate', input, webhookEntry.config);
    expect(webhook.wire.response?.allowed).toBe(row.admit);
    for (const part of row.error ?? []) expect(webhook.wire.response?.status?.message).toContain(part);
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
      inputOf({ name: '', admit: true, op: 'CREATE', externalIPs: ['172.0.0.1'], user: ORDINARY }),
    );
    expect(asked).toEqual([]);
    await cluster.validate(inputOf({ name: '', admit: false, op: 'CREATE', externalIPs: ['1.2.3.4'], user: ORDINARY }));
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
    const row: Row = { name: '', admit: true, op: operation, externalIPs: ['1.2.3.4'], user: ORDINARY };
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
