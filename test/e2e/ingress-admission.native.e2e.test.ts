// ingress-admission natively: the ValidatingAdmissionPolicy `emit --native` compiles for
// route.openshift.io/IngressAdmission, applied to a real apiserver, answers the cases
// test/native/native-only.test.ts takes from OpenShift's source with OpenShift's messages, as the
// apiserver words a policy's refusal. This kube-apiserver has no IngressAdmission built in (it is
// OpenShift's), so the expected answers are OpenShift's, not another apiserver's. Each row is a
// real Ingress write (updates change an Ingress stored before) as a user, impersonated, whom RBAC
// grants, or not, `create`/`update` on routes/custom-host in route.openshift.io. The
// allowHostnameChanges row needs another configuration and stays with the in-process proof.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, get, update } from './support/kube.js';
import type { NativeCluster } from './support/native.js';
import { policyDenial, startNativeCluster, typeCheckingWarnings } from './support/native.js';
import { grant, namespaceWithAccount, seedObject } from './support/native-pair.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: route.openshift.io/IngressAdmission
`;

const BACKEND = {
  paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 80 } } } }],
};
const ingress = (name: string, ...hosts: string[]): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: 'team' },
  spec: { rules: hosts.map((host) => (host === '' ? { http: BACKEND } : { host, http: BACKEND })) },
});

interface Row {
  readonly name: string;
  readonly user: string;
  /** The stored Ingress's hosts (an update), or none (a create). */
  readonly stored?: string[];
  readonly hosts: string[];
  /** OpenShift's refusal, after `ingresses.networking.k8s.io "<name>" is forbidden: `. */
  readonly refusal?: string;
  /** The refusal's status code and reason. */
  readonly code?: [number, string];
}
const ROWS: Row[] = [
  { name: 'a create without hosts', user: 'dev', hosts: [''] },
  {
    name: 'a create with a host, without create routes/custom-host',
    user: 'dev',
    hosts: ['', 'a.example.com'],
    refusal: 'spec.rules[1]: Forbidden: you do not have permission to set host fields in ingress rules',
    // OpenShift's errors.NewInvalid: 422, worded `… is invalid: ` by OpenShift, `… is forbidden: ` by
    // the apiserver for a policy.
    code: [422, 'Invalid'],
  },
  { name: 'a create with a host, with the grant', user: 'router-admin', hosts: ['a.example.com'] },
  {
    name: 'an update keeping the hosts',
    user: 'dev',
    stored: ['a.example.com', 'b.example.com'],
    hosts: ['b.example.com', 'a.example.com'],
  },
  {
    name: 'an update dropping a host',
    user: 'dev',
    stored: ['a.example.com', 'b.example.com'],
    hosts: ['a.example.com'],
  },
  {
    name: 'an update adding a host, without update routes/custom-host',
    user: 'dev',
    stored: ['a.example.com'],
    hosts: ['a.example.com', 'c.example.com'],
    refusal: 'cannot change hostname',
    code: [403, 'Forbidden'],
  },
  {
    name: 'an update adding a host, with the grant',
    user: 'router-admin',
    stored: ['a.example.com'],
    hosts: ['c.example.com'],
  },
];

async function seed(cluster: ControlPlane): Promise<void> {
  await namespaceWithAccount(cluster, 'team');
  await grant(
    cluster,
    'e2e-ingress-writer',
    [{ apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['*'] }],
    {
      groups: ['system:authenticated'],
    },
  );
  await grant(
    cluster,
    'e2e-custom-host',
    [{ apiGroups: ['route.openshift.io'], resources: ['routes/custom-host'], verbs: ['create', 'update'] }],
    { users: ['router-admin'] },
  );
  for (const [index, row] of ROWS.entries())
    if (row.stored) await seedObject(cluster, ingress(`web-${index}`, ...row.stored));
}

async function write(cluster: ControlPlane, index: number, dryRun = false): Promise<Answer> {
  const row = ROWS[index];
  const options = { as: row.user, groups: ['system:authenticated'], dryRun };
  const object = ingress(`web-${index}`, ...row.hosts);
  if (!row.stored) return create(cluster, object, options);
  const stored = (await get(cluster, object))!;
  return update(cluster, { ...object, metadata: stored.metadata }, options);
}

let native: NativeCluster;
beforeAll(async () => {
  native = await startNativeCluster(CONFIG, { before: seed });
  await eventuallyInForce();
});
afterAll(async () => {
  await native?.stop();
});

async function eventuallyInForce(): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await write(native.cluster, 1, true);
    if (answer.status >= 400) return;
    if (Date.now() > deadline)
      throw new Error(
        `the native policy is in force: not so after 30 s: ${answer.status} ${answer.message ?? JSON.stringify(answer.object?.spec)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('ingress-admission (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(native)).toEqual([]);
  });

  ROWS.forEach((row, index) => {
    it(`answers as OpenShift does: ${row.name}`, async () => {
      const answer = await write(native.cluster, index);
      if (row.refusal === undefined) {
        expect(answer.status, answer.message).toBeLessThan(300);
        expect(
          (answer.object?.spec as { rules: { host?: string }[] } | undefined)?.rules.map((r) => r.host ?? ''),
        ).toEqual(row.hosts);
        return;
      }
      expect([answer.status, answer.reason], answer.message).toEqual(row.code);
      const denial = policyDenial(answer.message);
      expect(denial?.policy).toBe('serverless-admission-ingress-admission');
      expect(`${denial?.head}${denial?.message}`).toBe(
        `ingresses.networking.k8s.io "web-${index}" is forbidden: ${row.refusal}`,
      );
    });
  });
});
