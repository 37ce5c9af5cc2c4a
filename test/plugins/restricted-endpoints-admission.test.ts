// OpenShift ships no test table for RestrictedEndpointsAdmission (openshift/kubernetes
// openshift-kube-apiserver/admission/network/restrictedendpoints has none), so this table is read
// from its source, case by branch: configured CIDRs, then 169.254.0.0/16, then the machine-config
// ports, first error only; ready and not-ready addresses; Endpoints and EndpointSlices; unchanged
// UPDATEs pass; the authorizer check (our allowlist); disabled without an entry.
import { describe, expect, it } from 'vitest';
import plugin, { type RestrictedEndpointsConfig } from '../../functions/restricted-endpoints-admission/plugin.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';

const SOURCE = { file: 'test', baseDir: '.' };
const BASE = { apiVersion: 'network.openshift.io/v1', kind: 'RestrictedEndpointsAdmissionConfig' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as RestrictedEndpointsConfig;
const config = (fields: Record<string, unknown> = {}) =>
  configure({ ...BASE, restrictedCIDRs: ['10.128.0.0/14', '172.30.0.0/16', 'fd00::/8'], ...fields });
const user = { username: 'system:serviceaccount:app:operator', groups: ['system:serviceaccounts'] };

type Port = { port?: number; protocol?: string };
const endpoints = (
  addresses: string[],
  notReady: string[] = [],
  ports: Port[] = [{ port: 80, protocol: 'TCP' }],
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'ep', namespace: 'app' },
  subsets: [{ addresses: addresses.map((ip) => ({ ip })), notReadyAddresses: notReady.map((ip) => ({ ip })), ports }],
});
const slice = (
  addresses: string[],
  ports: { port?: number | null; protocol?: string | null }[] = [{ port: 80, protocol: 'TCP' }],
): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'slice', namespace: 'app', labels: { 'kubernetes.io/service-name': 'svc' } },
  addressType: 'IPv4',
  endpoints: addresses.map((a) => ({ addresses: [a] })),
  ports,
});
const EP = { kind: { kind: 'Endpoints' }, resource: { resource: 'endpoints' } };
const SLICE = {
  kind: { group: 'discovery.k8s.io', kind: 'EndpointSlice' },
  resource: { group: 'discovery.k8s.io', resource: 'endpointslices' },
};

async function judge(input: ReviewInput, cfg: RestrictedEndpointsConfig = config()) {
  return deniedMessage(await runPhase(plugin, 'validate', { userInfo: user, ...input }, cfg));
}

interface Case {
  name: string;
  input: ReviewInput;
  config?: RestrictedEndpointsConfig;
  /** The refusal after `<resource> "<name>" is forbidden: `, or undefined when admitted. */
  error?: string;
}

const cases: Case[] = [
  { name: 'Endpoints with allowed addresses and ports', input: { ...EP, object: endpoints(['192.168.1.10']) } },
  {
    name: 'an address in a configured CIDR',
    input: { ...EP, object: endpoints(['10.128.3.4']) },
    error: 'endpoint address 10.128.3.4 is not allowed',
  },
  {
    name: 'a not-ready address in a configured CIDR',
    input: { ...EP, object: endpoints(['192.168.1.10'], ['172.30.0.1']) },
    error: 'endpoint address 172.30.0.1 is not allowed',
  },
  {
    name: 'an IPv6 address in a configured CIDR',
    input: { ...EP, object: endpoints(['fd01::5']) },
    error: 'endpoint address fd01::5 is not allowed',
  },
  {
    name: 'the metadata address, with no CIDR configured',
    input: { ...EP, object: endpoints(['169.254.169.254']) },
    config: config({ restrictedCIDRs: [] }),
    error: 'endpoint address 169.254.169.254 is not allowed',
  },
  {
    name: 'an IPv4-mapped IPv6 link-local address (Go reads it as IPv4)',
    input: { ...EP, object: endpoints(['::ffff:169.254.1.1']) },
    error: 'endpoint address ::ffff:169.254.1.1 is not allowed',
  },
  {
    name: 'configured CIDRs are checked over all addresses before link-local',
    input: { ...EP, object: endpoints(['169.254.0.1', '10.128.0.9']) },
    error: 'endpoint address 10.128.0.9 is not allowed',
  },
  {
    name: 'the machine-config port 22623/TCP',
    input: { ...EP, object: endpoints(['192.168.1.10'], [], [{ port: 22623, protocol: 'TCP' }]) },
    error: 'endpoint port TCP:22623 is not allowed',
  },
  {
    name: 'the machine-config port 22624/TCP',
    input: { ...EP, object: endpoints(['192.168.1.10'], [], [{ port: 22624, protocol: 'TCP' }]) },
    error: 'endpoint port TCP:22624 is not allowed',
  },
  {
    name: 'port 22623 over UDP is not restricted',
    input: { ...EP, object: endpoints(['192.168.1.10'], [], [{ port: 22623, protocol: 'UDP' }]) },
  },
  {
    name: 'addresses are checked before ports',
    input: { ...EP, object: endpoints(['10.128.0.1'], [], [{ port: 22623, protocol: 'TCP' }]) },
    error: 'endpoint address 10.128.0.1 is not allowed',
  },
  { name: 'an unparseable address is skipped', input: { ...EP, object: endpoints(['not-an-ip']) } },
  {
    name: 'an allowlisted user may point anywhere',
    input: {
      ...EP,
      object: endpoints(['169.254.169.254']),
      userInfo: { username: 'system:serviceaccount:app:operator' },
    },
    config: config({ allowedUsers: ['system:serviceaccount:app:operator'] }),
  },
  {
    name: 'system:masters may point anywhere by default',
    input: { ...EP, object: endpoints(['10.128.0.1']), userInfo: { username: 'admin', groups: ['system:masters'] } },
  },
  {
    name: 'an UPDATE that leaves subsets unchanged passes',
    input: {
      ...EP,
      operation: 'UPDATE',
      object: { ...endpoints(['10.128.0.1']), metadata: { name: 'ep', namespace: 'app', labels: { new: 'label' } } },
      oldObject: endpoints(['10.128.0.1']),
    },
  },
  {
    name: 'an UPDATE that changes subsets is judged',
    input: { ...EP, operation: 'UPDATE', object: endpoints(['10.128.0.1']), oldObject: endpoints(['192.168.1.10']) },
    error: 'endpoint address 10.128.0.1 is not allowed',
  },
  {
    name: 'an EndpointSlice address in a configured CIDR',
    input: { ...SLICE, object: slice(['192.168.1.10', '172.30.9.9']) },
    error: 'endpoint address 172.30.9.9 is not allowed',
  },
  {
    name: 'an EndpointSlice link-local address',
    input: { ...SLICE, object: slice(['169.254.169.254']) },
    error: 'endpoint address 169.254.169.254 is not allowed',
  },
  {
    name: 'an EndpointSlice port without protocol is TCP',
    input: { ...SLICE, object: slice(['192.168.1.10'], [{ port: 22624 }]) },
    error: 'endpoint port TCP:22624 is not allowed',
  },
  {
    name: 'an EndpointSlice port without a number is skipped',
    input: { ...SLICE, object: slice(['192.168.1.10'], [{ port: null, protocol: 'TCP' }]) },
  },
  {
    name: 'an EndpointSlice UPDATE with unchanged endpoints and ports passes',
    input: { ...SLICE, operation: 'UPDATE', object: slice(['10.128.0.1']), oldObject: slice(['10.128.0.1']) },
  },
  {
    name: 'an EndpointSlice UPDATE that changes only ports is judged',
    input: {
      ...SLICE,
      operation: 'UPDATE',
      object: slice(['10.128.0.1'], [{ port: 81, protocol: 'TCP' }]),
      oldObject: slice(['10.128.0.1']),
    },
    error: 'endpoint address 10.128.0.1 is not allowed',
  },
  {
    name: 'other resources are not judged',
    input: {
      kind: { kind: 'Service' },
      resource: { resource: 'services' },
      object: { kind: 'Service', metadata: { name: 's', namespace: 'app' }, spec: { clusterIP: '169.254.1.1' } },
    },
  },
  {
    name: 'without an entry the plugin is disabled, defaults included',
    input: { ...EP, object: endpoints(['169.254.169.254'], [], [{ port: 22623, protocol: 'TCP' }]) },
    config: configure(undefined),
  },
];

describe('RestrictedEndpointsAdmission, from the source', () => {
  it.each(cases)('$name', async (c) => {
    const message = await judge(c.input, c.config);
    if (c.error === undefined) expect(message).toBeUndefined();
    else {
      const resource = c.input.resource?.group
        ? `${c.input.resource.resource}.${c.input.resource.group}`
        : c.input.resource!.resource;
      const name = (c.input.object!.metadata as { name: string }).name;
      expect(message).toBe(`${resource} "${name}" is forbidden: ${c.error}`);
    }
  });
});

describe("upstream's handler: Create and Update", () => {
  it.each([
    ['CREATE', true],
    ['UPDATE', true],
    ['DELETE', false],
    ['CONNECT', false],
  ] as [Operation, boolean][])('%s: judged=%s', async (operation, judged) => {
    const bad = endpoints(['169.254.169.254']);
    const input: ReviewInput = {
      ...EP,
      operation,
      object: operation === 'DELETE' ? null : bad,
      oldObject: operation === 'UPDATE' ? endpoints([]) : operation === 'DELETE' ? bad : null,
      name: 'ep',
      namespace: 'app',
    };
    expect((await judge(input)) !== undefined).toBe(judged);
    expect(plugin.metadata.validating!.rules.some((r) => r.operations.includes(operation))).toBe(judged);
  });
});

describe('configuration', () => {
  it.each([
    [
      { ...BASE, restrictedCIRDs: [] },
      'restrictedCIRDs',
      'unknown field "restrictedCIRDs"; did you mean "restrictedCIDRs"?',
    ],
    [{ ...BASE, restrictedCIDRs: ['10.0.0.0'] }, 'restrictedCIDRs[0]', 'invalid CIDR address: 10.0.0.0'],
    [{ ...BASE, restrictedCIDRs: '10.0.0.0/8' }, 'restrictedCIDRs', 'must be a list of strings'],
    [{ ...BASE, apiVersion: 'v1' }, 'apiVersion', 'must be network.openshift.io/v1, got "v1"'],
  ])('%j is refused at %s', (raw, field, detail) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(
      `network.openshift.io/RestrictedEndpointsAdmission: ${field}: ${detail}`,
    );
  });

  it('reads CIDRs sloppily, as ParseCIDRSloppy (leading zeros are decimal)', async () => {
    const cfg = configure({ ...BASE, restrictedCIDRs: ['010.001.0.0/16'] });
    expect(await judge({ ...EP, object: endpoints(['10.1.2.3']) }, cfg)).toBe(
      'endpoints "ep" is forbidden: endpoint address 10.1.2.3 is not allowed',
    );
  });
});

describe('the endpoint controllers', () => {
  it.each(['endpoint-controller', 'endpointslice-controller', 'endpointslicemirroring-controller'])(
    '%s may write pod IPs by default; a given allowedUsers replaces the default',
    async (controller) => {
      const input: ReviewInput = {
        ...SLICE,
        object: slice(['10.128.0.7']),
        userInfo: { username: `system:serviceaccount:kube-system:${controller}`, groups: ['system:serviceaccounts'] },
      };
      expect(await judge(input)).toBeUndefined();
      expect(await judge(input, config({ allowedUsers: ['someone-else'] }))).toBeDefined();
    },
  );
});
