// OpenShift's tables (openshift/kubernetes openshift-kube-apiserver/admission/network/
// externalipranger/externalip_admission_test.go) ported: TestAdmission and TestHandles, with the
// fake authorizer (only system:serviceaccount:test:admin may set any external IP) expressed as our
// allowedUsers; plus exact messages, Go's CIDR reading, other resources, configuration, v1beta1.
import { describe, expect, it } from 'vitest';
import plugin, { type ExternalIPRangerConfig } from '../../functions/external-ip-ranger/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { cidrContains, parseCIDRSloppy, parseIPSloppy } from '../../lib/kube/net.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { configErrorOf } from '../support/config-error.js';
import { itHandles } from '../support/handles.js';
import type { AdmissionCase } from '../support/cases/external-ip-ranger.js';
import {
  ADMIN,
  ADMISSION_CASES,
  IPV4,
  IPV4_SUBSET,
  rangerConfig,
  serviceAccount,
} from '../support/cases/external-ip-ranger.js';

const SOURCE = { file: 'test', baseDir: '.' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as ExternalIPRangerConfig;
const ocConfig = (fields: Record<string, unknown>) =>
  configure({ apiVersion: 'network.openshift.io/v1', kind: 'ExternalIPRangerAdmissionConfig', ...fields });
const SERVICES = { kind: { kind: 'Service' }, resource: { resource: 'services' } };

function svc(externalIPs: readonly string[] | undefined, loadBalancer: boolean): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'test', namespace: 'namespace' },
    spec: { type: loadBalancer ? 'LoadBalancer' : 'ClusterIP', ...(externalIPs ? { externalIPs } : {}) },
  };
}

function caseInput(c: AdmissionCase): { input: ReviewInput; config: ExternalIPRangerConfig } {
  // The fake authorizer's one user, as allowedUsers.
  const config = configure(rangerConfig(c, { allowedUsers: [ADMIN] }));
  const oldObject: KubeObject | null = c.ingressIP
    ? {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'test' },
        status: { loadBalancer: { ingress: [{ ip: c.ingressIP }] } },
      }
    : null;
  return {
    input: {
      ...SERVICES,
      operation: c.op,
      object: svc(c.externalIPs, c.loadBalancer === true),
      oldObject,
      userInfo: serviceAccount(c.user),
    },
    config,
  };
}

describe('TestAdmission', () => {
  it.each(ADMISSION_CASES)('$testName', async (c) => {
    const { input, config } = caseInput(c);
    const message = deniedMessage(await runPhase(plugin, 'validate', input, config));
    if (c.admit) expect(message).toBeUndefined();
    else {
      expect(message).toMatch(/^services "test" is forbidden: /);
      for (const part of c.errContains ?? []) expect(message).toContain(part);
    }
  });
});

describe('messages, as admission.NewForbidden prints an aggregate of field errors', () => {
  const config = ocConfig({ externalIPNetworkCIDRs: [IPV4, `!${IPV4_SUBSET}`] });
  const validate = (ips: string[], user = serviceAccount('ordinary-user')) =>
    runPhase(plugin, 'validate', { ...SERVICES, object: svc(ips, false), userInfo: user }, config);

  it('one violation', async () => {
    const result = await validate(['1.2.3.4']);
    expect(deniedMessage(result)).toBe(
      'services "test" is forbidden: spec.externalIPs[0]: Forbidden: externalIP is not allowed',
    );
    expect(result.wire.response!.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      status: 'Failure',
      details: { name: 'test', group: '', kind: 'services' },
    });
  });

  it('every violation, behind one prefix, in order', async () => {
    expect(deniedMessage(await validate(['172.0.0.9', '172.0.1.1', 'nope', '10.0.0.1']))).toBe(
      'services "test" is forbidden: [spec.externalIPs[1]: Forbidden: externalIP is not allowed, spec.externalIPs[2]: Forbidden: externalIPs must be a valid address, spec.externalIPs[3]: Forbidden: externalIP is not allowed]',
    );
  });

  it('disabled external IPs name the whole field', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { ...SERVICES, object: svc(['1.2.3.4', '5.6.7.8'], false), userInfo: serviceAccount('x') },
      ocConfig({}),
    );
    expect(deniedMessage(result)).toBe(
      'services "test" is forbidden: spec.externalIPs: Forbidden: externalIPs have been disabled',
    );
  });

  it('allowedGroups stands in for the authorizer; system:masters by default', async () => {
    expect(
      deniedMessage(await validate(['1.2.3.4'], { username: 'root', groups: ['system:masters'] })),
    ).toBeUndefined();
    const strict = ocConfig({ externalIPNetworkCIDRs: [IPV4], allowedGroups: ['net-admins'] });
    const run = (groups: string[]) =>
      runPhase(
        plugin,
        'validate',
        { ...SERVICES, object: svc(['1.2.3.4'], false), userInfo: { username: 'u', groups } },
        strict,
      );
    expect(deniedMessage(await run(['system:masters']))).toContain('externalIP is not allowed');
    expect(deniedMessage(await run(['net-admins']))).toBeUndefined();
  });

  it('reads addresses and CIDRs as Go does', () => {
    expect(cidrContains(parseCIDRSloppy('010.0.0.0/8'), parseIPSloppy('10.1.2.3')!)).toBe(true);
    expect(cidrContains(parseCIDRSloppy('10.0.0.0/8'), parseIPSloppy('::ffff:10.1.2.3')!)).toBe(true);
    expect(cidrContains(parseCIDRSloppy('::/0'), parseIPSloppy('10.1.2.3')!)).toBe(false);
    expect(cidrContains(parseCIDRSloppy('2001:db8::/32'), parseIPSloppy('2001:db8::1')!)).toBe(true);
    expect(cidrContains(parseCIDRSloppy('2001:db8::/32'), parseIPSloppy('2001:db9::1')!)).toBe(false);
    expect(cidrContains(parseCIDRSloppy('10.1.2.3/8'), parseIPSloppy('10.200.0.1')!)).toBe(true);
    for (const bad of ['abcd', '1.2.3', '1.2.3.256', 'fe80::1%eth0', '1::2::3', ''])
      expect(parseIPSloppy(bad)).toBeUndefined();
    for (const bad of ['1.2.3.4', '1.2.3.4/33', '::/129', 'x/8', '1.2.3.4/-1'])
      expect(() => parseCIDRSloppy(bad)).toThrow(`invalid CIDR address: ${bad}`);
  });
});

describe('other resources and subresources are ignored', () => {
  const config = ocConfig({});
  const bad = svc(['1.2.3.4'], false);
  it.each([
    {
      name: 'non-service resource',
      kind: { kind: 'Foo' },
      resource: { resource: 'foos' },
      subResource: undefined,
      allowed: true,
    },
    {
      name: 'services of another group',
      kind: { group: 'example.com', kind: 'Service' },
      resource: { group: 'example.com', resource: 'services' },
      subResource: undefined,
      allowed: true,
    },
    {
      name: 'service status subresource is judged, as upstream',
      kind: { kind: 'Service' },
      resource: { resource: 'services' },
      subResource: 'status',
      allowed: false,
    },
  ])('$name', async ({ kind, resource, subResource, allowed }) => {
    const result = await runPhase(
      plugin,
      'validate',
      { object: bad, kind, resource, subResource, operation: 'UPDATE', oldObject: bad },
      config,
    );
    expect(result.wire.response!.allowed).toBe(allowed);
  });

  it('an object that is not a Service is let through, as upstream', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { ...SERVICES, object: { kind: 'Endpoints', metadata: { name: 'x' }, subsets: [] } },
      config,
    );
    expect(result.wire.response!.allowed).toBe(true);
  });

  it('without an AdmissionConfiguration entry the plugin is disabled, as in OpenShift', async () => {
    const result = await runPhase(plugin, 'validate', { ...SERVICES, object: bad }, configure(undefined));
    expect(result.wire.response!.allowed).toBe(true);
  });

  it('declares services and services/status writes only', () => {
    expect(plugin.metadata.validating!.rules).toEqual([
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['services', 'services/status'],
        scope: 'Namespaced',
      },
    ]);
    expect(plugin.metadata).toMatchObject({
      upstreamName: 'network.openshift.io/ExternalIPRanger',
      name: 'external-ip-ranger',
      writes: false,
      needs: [],
      validating: { failurePolicy: 'Fail', timeoutSeconds: 3 },
    });
  });
});

describe('TestHandles', () => {
  const config = ocConfig({});
  itHandles(plugin, ['CREATE', 'UPDATE'], { object: svc(['1.2.3.4'], false), input: SERVICES, config });

  it('answers a v1beta1 review in kind, with the same uid', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { ...SERVICES, apiVersion: 'admission.k8s.io/v1beta1', uid: 'beta-uid', object: svc(['1.2.3.4'], false) },
      config,
    );
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: false, status: { code: 403 } });
  });
});

describe('configuration errors name the plugin and the field', () => {
  const base = { apiVersion: 'network.openshift.io/v1', kind: 'ExternalIPRangerAdmissionConfig' };
  it.each([
    { raw: [], field: 'configuration' },
    { raw: { ...base, apiVersion: 'v1' }, field: 'apiVersion' },
    { raw: { ...base, kind: 'Other' }, field: 'kind' },
    {
      raw: { ...base, externalIPNetworkCIDRs: ['10.0.0.0/8', '!300.0.0.0/8'] },
      field: 'externalIPNetworkCIDRs[1]',
      detail: 'invalid CIDR address: 300.0.0.0/8',
    },
    { raw: { ...base, externalIPNetworkCIDRs: '10.0.0.0/8' }, field: 'externalIPNetworkCIDRs' },
    { raw: { ...base, allowIngressIP: 'yes' }, field: 'allowIngressIP' },
    { raw: { ...base, allowedUsers: [''] }, field: 'allowedUsers[0]' },
    { raw: { ...base, externalIPCIDRs: [] }, field: 'externalIPCIDRs' },
  ])('$field', ({ raw, field, detail }) => {
    const error = configErrorOf(() => configure(raw));
    expect(error).toMatchObject({ plugin: 'network.openshift.io/ExternalIPRanger', field });
    if (detail) expect(error.message).toBe(`network.openshift.io/ExternalIPRanger: ${field}: ${detail}`);
  });
});
