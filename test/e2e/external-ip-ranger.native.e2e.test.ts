// external-ip-ranger natively: the ValidatingAdmissionPolicy `emit --native` compiles, applied to
// a real apiserver, answers OpenShift's TestAdmission (test/support/cases) as the webhook does on
// another apiserver, each Service written as the row's service account (impersonated); updates
// change a Service stored before the install, with the row's load-balancer ingress IP in its
// status (the non-load-balancer row's Service was one, with that IP, until this update).
// OpenShift's fake authorizer lets test:admin set any IP: on the native side that is a real RBAC
// grant (create service/externalips in network.openshift.io) and the policy's configuration has
// no allowlist; the webhook names the account in allowedUsers. One configuration serves every
// row: 172.0.0.0/16 without 172.0.1.0/24, ingress IPs allowed. OpenShift's expectation is checked
// where a row's own configuration answers alike; every row is compared. An external IP that is no
// IP is refused by the apiserver's validation before admission (422 on both sides alike).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, requestAt } from './support/kube.js';
import { policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import {
  expectSameOutcome,
  grant,
  modify,
  namespaceWithAccount,
  seedObject,
  startNativePair,
} from './support/native-pair.js';
import type { AdmissionCase } from '../support/cases/external-ip-ranger.js';
import { ADMIN, ADMISSION_CASES, IPV4, IPV4_SUBSET, serviceAccount } from '../support/cases/external-ip-ranger.js';

const config = (allowedUsers: string[]) => `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: network.openshift.io/ExternalIPRanger
    configuration: ${JSON.stringify({
      apiVersion: 'network.openshift.io/v1',
      kind: 'ExternalIPRangerAdmissionConfig',
      externalIPNetworkCIDRs: [`!${IPV4_SUBSET}`, IPV4],
      allowIngressIP: true,
      allowedUsers,
      allowedGroups: [],
    })}
`;

/** Beyond OpenShift's rows (test/native/external-ip-ranger.test.ts): every refused IP is named. */
const AGGREGATE: AdmissionCase = {
  testName: 'two refused IPs aggregate',
  admit: false,
  op: 'CREATE',
  admits: [IPV4],
  externalIPs: ['1.2.3.4', '172.0.1.9', '172.0.0.9', '1.1.1.1'],
  user: 'ordinary-user',
};
const ROWS = [...ADMISSION_CASES, AGGREGATE];

/** A load balancer's node ports are allocated at random on each apiserver. */
const withoutNodePorts = (answer: Answer): Answer => {
  const spec = answer.object?.spec as { ports?: Record<string, unknown>[] } | undefined;
  if (!spec?.ports) return answer;
  const ports = spec.ports.map((port) =>
    Object.fromEntries(Object.entries(port).filter(([key]) => key !== 'nodePort')),
  );
  return { ...answer, object: { ...answer.object!, spec: { ...spec, ports } } };
};

const service = (name: string, row: AdmissionCase, externalIPs?: readonly string[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'test' },
  spec: {
    type: row.loadBalancer ? 'LoadBalancer' : 'ClusterIP',
    ports: [{ port: 80 }],
    ...(externalIPs && { externalIPs: [...externalIPs] }),
  },
});

async function seed(cluster: ControlPlane): Promise<void> {
  await namespaceWithAccount(cluster, 'test');
  await grant(cluster, 'e2e-writer', [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }], {
    groups: ['system:authenticated'],
  });
  await grant(
    cluster,
    'e2e-external-ips',
    [{ apiGroups: ['network.openshift.io'], resources: ['service/externalips'], verbs: ['create'] }],
    { users: [ADMIN] },
  );
  for (const [index, row] of ROWS.entries()) {
    if (row.op !== 'UPDATE') continue;
    // An ingress IP needs a load balancer: the non-LB row's Service stops being one in its update.
    const stored = await seedObject(
      cluster,
      service(`row-${index}`, { ...row, loadBalancer: row.loadBalancer || !!row.ingressIP }),
    );
    if (row.ingressIP) {
      const path = `/api/v1/namespaces/test/services/row-${index}/status`;
      const answer = await requestAt(cluster, 'PUT', path, {
        ...stored,
        status: { loadBalancer: { ingress: [{ ip: row.ingressIP }] } },
      });
      if (answer.status !== 200) throw new Error(`status of row-${index}: ${answer.message}`);
    }
  }
}

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(config([ADMIN]), {
    nativeAdmissionConfiguration: config([]),
    seed,
    // As an ordinary user: the admin (system:masters) may set any IP.
    inForce: async (cluster) => {
      const user = serviceAccount('ordinary-user');
      const probe = service('probe', AGGREGATE, ['1.2.3.4']);
      return (await create(cluster, probe, { dryRun: true, as: user.username, groups: user.groups })).status === 403;
    },
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('external-ip-ranger (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  ROWS.forEach((row, index) => {
    it(`answers as the webhook does: ${row.testName}`, async () => {
      const user = serviceAccount(row.user);
      const as = { as: user.username, groups: user.groups };
      const write = (cluster: ControlPlane): Promise<Answer> =>
        row.op === 'CREATE'
          ? create(cluster, service(`row-${index}`, row, row.externalIPs), as)
          : modify(
              cluster,
              service(`row-${index}`, row),
              (stored) => ({
                ...stored,
                spec: {
                  ...(stored.spec as object),
                  type: row.loadBalancer ? 'LoadBalancer' : 'ClusterIP',
                  ...(row.externalIPs && { externalIPs: [...row.externalIPs] }),
                },
              }),
              as,
            );
      const [webhook, native] = await pair.both(async (cluster) => withoutNodePorts(await write(cluster)));
      if (row.externalIPs?.includes('abcd')) expect(webhook.status, webhook.message).toBe(422);
      // Rows configured with rejections alone admit what this configuration does not.
      else if (row.admits || !row.rejects) expect(webhook.status < 300, webhook.message ?? 'admitted').toBe(row.admit);
      if (row.admits && webhook.status === 403)
        for (const part of row.errContains ?? []) expect(webhook.message).toContain(part);
      expectSameOutcome(webhook, native);
      if (native.status === 403) expect(policyDenial(native.message)?.message).toMatch(/spec\.externalIPs\[\d\]/);
    });
  });
});
