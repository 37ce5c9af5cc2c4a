// network.openshift.io/RestrictedEndpointsAdmission natively (Kubernetes 1.31+). OpenShift ships
// no test table for it: these cases follow its source (openshift-kube-apiserver/admission/network/
// restrictedendpoints/endpoint_admission.go): configured networks, then link-local, then the
// machine-config ports, first error only; unchanged updates pass; Endpoints and EndpointSlices.
// The test authorizer grants `create endpoints/restricted` (and endpointslices/restricted) to one
// service account and the endpoint controllers; the webhook names the same users in allowedUsers.
import { describe, expect, it } from 'vitest';
import plugin, { ENDPOINT_CONTROLLERS } from '../../functions/restricted-endpoints-admission/plugin.js';
import type { KubeObject, Operation, UserInfo } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import { planPlugin } from '../../infra/native/plan.js';
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

const TRUSTED = 'system:serviceaccount:ns:trusted';
const GRANTED = [TRUSTED, ...ENDPOINT_CONTROLLERS];
const asked = useAuthorizer((a) => GRANTED.includes(a.user.username ?? '') && a.subresource === 'restricted');

const CIDRS = ['10.128.0.0/14', '172.30.0.0/16', 'fd00::/8'];
const raw = (restrictedCIDRs: string[], allowedUsers: string[]) => ({
  apiVersion: 'network.openshift.io/v1',
  kind: 'RestrictedEndpointsAdmissionConfig',
  restrictedCIDRs,
  allowedUsers,
  allowedGroups: [],
});

const USER: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

type Subset = { addresses?: string[]; notReady?: string[]; ports?: { port: number; protocol?: string }[] };
function endpoints(...subsets: Subset[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'svc', namespace: 'ns' },
    subsets: subsets.map((s) => ({
      ...(s.addresses && { addresses: s.addresses.map((ip) => ({ ip })) }),
      ...(s.notReady && { notReadyAddresses: s.notReady.map((ip) => ({ ip })) }),
      ...(s.ports && { ports: s.ports.map((p) => ({ port: p.port, protocol: p.protocol ?? 'TCP' })) }),
    })),
  };
}
function slice(
  addresses: string[][],
  ports: { port?: number; protocol?: string }[] = [],
  addressType = 'IPv4',
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'svc-abc', namespace: 'ns' },
    addressType,
    endpoints: addresses.map((a) => ({ addresses: a })),
    ports,
  };
}

const ENDPOINTS = { kind: { kind: 'Endpoints' }, resource: { resource: 'endpoints' } } as const;
const SLICES = {
  kind: { group: 'discovery.k8s.io', kind: 'EndpointSlice' },
  resource: { group: 'discovery.k8s.io', resource: 'endpointslices' },
} as const;

interface Case {
  readonly name: string;
  readonly input: ReviewInput;
  /** OpenShift's error for the user without the grant ('' for none). */
  readonly error: string;
}
const write = (
  target: typeof ENDPOINTS | typeof SLICES,
  object: KubeObject,
  extra: { operation?: Operation; oldObject?: KubeObject; userInfo?: UserInfo } = {},
): ReviewInput => ({ ...target, userInfo: USER, object, ...extra });

const CASES: Case[] = [
  {
    name: 'a pod-network address',
    error: 'endpoint address 10.128.0.5 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['10.128.0.5'] })),
  },
  {
    name: 'a not-ready service-network address',
    error: 'endpoint address 172.30.0.1 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['192.168.0.1'], notReady: ['172.30.0.1'] })),
  },
  {
    name: 'the metadata address (link-local)',
    error: 'endpoint address 169.254.169.254 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['169.254.169.254'] })),
  },
  {
    name: 'configured networks before link-local',
    error: 'endpoint address 10.128.0.1 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['169.254.1.1', '10.128.0.1'] })),
  },
  {
    name: 'a later subset',
    error: 'endpoint address 10.130.0.9 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['192.168.0.1'] }, { addresses: ['10.130.0.9'] })),
  },
  {
    name: 'an IPv6 network',
    error: 'endpoint address fd00::1 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['fd00::1'] })),
  },
  {
    name: 'a machine-config port',
    error: 'endpoint port TCP:22623 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['192.168.0.1'], ports: [{ port: 80 }, { port: 22623 }] })),
  },
  {
    name: 'an address before a port',
    error: 'endpoint address 10.128.0.1 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['10.128.0.1'], ports: [{ port: 22624 }] })),
  },
  {
    name: 'UDP on a machine-config port',
    error: '',
    input: write(ENDPOINTS, endpoints({ addresses: ['192.168.0.1'], ports: [{ port: 22623, protocol: 'UDP' }] })),
  },
  {
    name: 'an ordinary address and port',
    error: '',
    input: write(ENDPOINTS, endpoints({ addresses: ['192.168.0.1'], ports: [{ port: 80 }] })),
  },
  {
    name: 'an update that keeps the addresses and ports',
    error: '',
    input: write(ENDPOINTS, endpoints({ addresses: ['10.128.0.1'] }), {
      operation: 'UPDATE',
      oldObject: endpoints({ addresses: ['10.128.0.1'] }),
    }),
  },
  {
    name: 'an update that changes the ports',
    error: 'endpoint address 10.128.0.1 is not allowed',
    input: write(ENDPOINTS, endpoints({ addresses: ['10.128.0.1'], ports: [{ port: 81 }] }), {
      operation: 'UPDATE',
      oldObject: endpoints({ addresses: ['10.128.0.1'], ports: [{ port: 80 }] }),
    }),
  },
  {
    name: 'a slice with a pod-network address',
    error: 'endpoint address 10.128.0.1 is not allowed',
    input: write(SLICES, slice([['192.168.0.1'], ['10.128.0.1']])),
  },
  {
    name: 'a slice port without protocol',
    error: 'endpoint port TCP:22624 is not allowed',
    input: write(SLICES, slice([['192.168.0.1']], [{ port: 22624 }])),
  },
  {
    name: 'a slice port without a number',
    error: '',
    input: write(SLICES, slice([['192.168.0.1']], [{ protocol: 'TCP' }])),
  },
  { name: 'an FQDN slice', error: '', input: write(SLICES, slice([['example.com']], [], 'FQDN')) },
  {
    name: 'a slice update that keeps endpoints and ports',
    error: '',
    input: write(SLICES, slice([['10.128.0.1']]), { operation: 'UPDATE', oldObject: slice([['10.128.0.1']]) }),
  },
  {
    name: 'the granted service account',
    error: '',
    input: write(ENDPOINTS, endpoints({ addresses: ['10.128.0.5'] }), { userInfo: { username: TRUSTED } }),
  },
  {
    name: 'the endpoint controller',
    error: '',
    input: write(SLICES, slice([['10.128.0.5']]), {
      userInfo: { username: ENDPOINT_CONTROLLERS[1], groups: ['system:serviceaccounts'] },
    }),
  },
];

const NATIVE_VERSIONS = ENVIRONMENT_VERSIONS.filter((v) => v !== '1.30');

describe.each(NATIVE_VERSIONS)('on Kubernetes %s', (version) => {
  const webhookEntry = configured(plugin, raw(CIDRS, GRANTED));
  const agreeing = new NativeCluster(nativeObjectsOf(webhookEntry, version), version);
  const authorizerOnly = new NativeCluster(nativeObjectsOf(configured(plugin, raw(CIDRS, [])), version), version);

  it.each(CASES)('$name', async ({ input, error }) => {
    const webhook = await runPhase(plugin, 'validate', input, webhookEntry.config);
    expect(refusalReason(webhook) ?? '').toBe(error);
    expectSameValidation(webhook, await agreeing.validate(input), plugin.metadata.name);
    expectSameValidation(webhook, await authorizerOnly.validate(input), plugin.metadata.name);
  });

  it('judges link-local and the ports without configured networks', async () => {
    const entry = configured(plugin, raw([], []));
    const cluster = new NativeCluster(nativeObjectsOf(entry, version), version);
    for (const { input } of CASES) {
      const webhook = await runPhase(plugin, 'validate', input, configured(plugin, raw([], GRANTED)).config);
      expectSameValidation(webhook, await cluster.validate(input), plugin.metadata.name);
    }
  });

  it('asks as OpenShift does: create endpoints/restricted (endpointslices/restricted) on the object', async () => {
    asked.length = 0;
    await authorizerOnly.validate(write(ENDPOINTS, endpoints({ addresses: ['10.128.0.5'] })));
    await authorizerOnly.validate(write(SLICES, slice([['10.128.0.5']])));
    expect(asked).toEqual([
      expect.objectContaining({
        verb: 'create',
        apiGroup: '',
        resource: 'endpoints',
        subresource: 'restricted',
        namespace: 'ns',
        name: 'svc',
      }),
      expect.objectContaining({
        verb: 'create',
        apiGroup: 'discovery.k8s.io',
        resource: 'endpointslices',
        subresource: 'restricted',
        namespace: 'ns',
        name: 'svc-abc',
      }),
    ]);
  });

  it('refuses a loosely written restricted address (leading zeros), where Go would read it as 10.128.0.1', async () => {
    const input = write(ENDPOINTS, endpoints({ addresses: ['010.128.0.1'] }));
    const native = await authorizerOnly.validate(input);
    expect(native.wire.response?.allowed).toBe(false);
    expect(refusalReason(native)).toContain('endpoint address 010.128.0.1 is not allowed');
  });

  it.each(['DELETE', 'CONNECT'] as const)('leaves %s alone', async (operation) => {
    const object = endpoints({ addresses: ['10.128.0.5'] });
    const native = await authorizerOnly.validate({
      ...ENDPOINTS,
      operation,
      object: operation === 'DELETE' ? null : object,
      oldObject: object,
      userInfo: USER,
    });
    expect(native.wire.response?.allowed).toBe(true);
  });
});

describe('on Kubernetes 1.30', () => {
  it("stays a webhook: CEL's ip and cidr libraries come with 1.31", () => {
    expect(planPlugin(configured(plugin, raw(CIDRS, [])), '1.30').objects).toBeUndefined();
  });
});
