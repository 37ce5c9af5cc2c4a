// restricted-endpoints-admission natively: the ValidatingAdmissionPolicy `emit --native` compiles,
// applied to a real apiserver, answers the cases test/native/restricted-endpoints-admission.test.ts
// takes from OpenShift's source as the webhook does on another apiserver: real Endpoints and
// EndpointSlices written as the row's user (impersonated), updates of objects stored before the
// install. The grant of `create endpoints/restricted` (and endpointslices/restricted) is a real
// RBAC grant on the native side, whose policy has no allowlist; the webhook names the same users
// in allowedUsers. Link-local Endpoints addresses are refused by the apiserver's own validation
// before admission (422 on both sides alike): the plugin's answer to them stays with the
// in-process proof.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject, WriteOptions } from './support/kube.js';
import { create } from './support/kube.js';
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
import { ENDPOINT_CONTROLLERS } from '../../functions/restricted-endpoints-admission/plugin.js';

const TRUSTED = 'system:serviceaccount:ns:trusted';
const GRANTED = [TRUSTED, ...ENDPOINT_CONTROLLERS];
const CIDRS = ['10.128.0.0/14', '172.30.0.0/16', 'fd00::/8'];
const config = (allowedUsers: string[]) => `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: network.openshift.io/RestrictedEndpointsAdmission
    configuration: ${JSON.stringify({
      apiVersion: 'network.openshift.io/v1',
      kind: 'RestrictedEndpointsAdmissionConfig',
      restrictedCIDRs: CIDRS,
      allowedUsers,
      allowedGroups: [],
    })}
`;

type Subset = { addresses?: string[]; notReady?: string[]; ports?: { port: number; protocol?: string }[] };
const endpoints = (name: string, ...subsets: Subset[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: 'ns' },
  subsets: subsets.map((s) => ({
    ...(s.addresses && { addresses: s.addresses.map((ip) => ({ ip })) }),
    ...(s.notReady && { notReadyAddresses: s.notReady.map((ip) => ({ ip })) }),
    ...(s.ports && { ports: s.ports.map((p, i) => ({ name: `p${i}`, port: p.port, protocol: p.protocol ?? 'TCP' })) }),
  })),
});
const slice = (
  name: string,
  addresses: string[][],
  ports: { port?: number; protocol?: string }[] = [],
  addressType = 'IPv4',
): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'ns' },
  addressType,
  endpoints: addresses.map((a) => ({ addresses: a })),
  ports: ports.map((p, i) => ({ name: `p${i}`, ...p })),
});

const ALICE: WriteOptions = { as: 'alice', groups: ['system:authenticated'] };
/** An update of the stored object to the row's subsets (the rows that keep them change a label). */
const rewrite = (object: KubeObject) => (stored: KubeObject) => ({ ...object, metadata: stored.metadata });

interface Row {
  readonly name: string;
  readonly request: (cluster: ControlPlane) => Promise<Answer>;
  /** OpenShift's error for the user without the grant ('' for none; undefined: the apiserver's 422). */
  readonly error: string | undefined;
}
const write =
  (object: KubeObject, options: WriteOptions = ALICE) =>
  (cluster: ControlPlane) =>
    create(cluster, object, options);

/**
 * Endpoints the rows update, each beside a Service of its name without a selector: the native
 * cluster runs kube-controller-manager, whose endpoints controller deletes Endpoints no Service
 * owns (it lists them once its caches sync, and may find these). Labelled so that the mirroring
 * controller does not copy them into EndpointSlices of its own.
 */
const SKIP_MIRROR = { 'endpointslice.kubernetes.io/skip-mirror': 'true' };
const owned = (object: KubeObject): KubeObject => ({
  ...object,
  metadata: { ...object.metadata, labels: SKIP_MIRROR },
});
const STORED = [
  owned(endpoints('kept', { addresses: ['10.128.0.1'] })),
  owned(endpoints('ports', { addresses: ['10.128.0.1'], ports: [{ port: 80 }] })),
  slice('kept-slice', [['10.128.0.1']]),
];
const SERVICES: KubeObject[] = ['kept', 'ports'].map((name) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'ns' },
  spec: { ports: [{ port: 80 }] },
}));

const ROWS: Row[] = [
  {
    name: 'a pod-network address',
    error: 'endpoint address 10.128.0.5 is not allowed',
    request: write(endpoints('r1', { addresses: ['10.128.0.5'] })),
  },
  {
    name: 'a not-ready service-network address',
    error: 'endpoint address 172.30.0.1 is not allowed',
    request: write(endpoints('r2', { addresses: ['192.168.0.1'], notReady: ['172.30.0.1'] })),
  },
  {
    name: 'the metadata address (link-local)',
    error: undefined,
    request: write(endpoints('r3', { addresses: ['169.254.169.254'] })),
  },
  {
    name: 'configured networks before link-local',
    error: undefined,
    request: write(endpoints('r4', { addresses: ['169.254.1.1', '10.128.0.1'] })),
  },
  {
    name: 'a later subset',
    error: 'endpoint address 10.130.0.9 is not allowed',
    request: write(endpoints('r5', { addresses: ['192.168.0.1'] }, { addresses: ['10.130.0.9'] })),
  },
  {
    name: 'an IPv6 network',
    error: 'endpoint address fd00::1 is not allowed',
    request: write(endpoints('r6', { addresses: ['fd00::1'] })),
  },
  {
    name: 'a machine-config port',
    error: 'endpoint port TCP:22623 is not allowed',
    request: write(endpoints('r7', { addresses: ['192.168.0.1'], ports: [{ port: 80 }, { port: 22623 }] })),
  },
  {
    name: 'an address before a port',
    error: 'endpoint address 10.128.0.1 is not allowed',
    request: write(endpoints('r8', { addresses: ['10.128.0.1'], ports: [{ port: 22624 }] })),
  },
  {
    name: 'UDP on a machine-config port',
    error: '',
    request: write(endpoints('r9', { addresses: ['192.168.0.1'], ports: [{ port: 22623, protocol: 'UDP' }] })),
  },
  {
    name: 'an ordinary address and port',
    error: '',
    request: write(endpoints('r10', { addresses: ['192.168.0.1'], ports: [{ port: 80 }] })),
  },
  {
    name: 'an update that keeps the addresses and ports',
    error: '',
    request: (cluster) => modify(cluster, STORED[0], labelled({ changed: 'yes' }), ALICE),
  },
  {
    name: 'an update that changes the ports',
    error: 'endpoint address 10.128.0.1 is not allowed',
    request: (cluster) =>
      modify(
        cluster,
        STORED[1],
        rewrite(endpoints('ports', { addresses: ['10.128.0.1'], ports: [{ port: 81 }] })),
        ALICE,
      ),
  },
  {
    name: 'a slice with a pod-network address',
    error: 'endpoint address 10.128.0.1 is not allowed',
    request: write(slice('s1', [['192.168.0.1'], ['10.128.0.1']])),
  },
  {
    name: 'a slice port without protocol',
    error: 'endpoint port TCP:22624 is not allowed',
    request: write(slice('s2', [['192.168.0.1']], [{ port: 22624 }])),
  },
  {
    name: 'a slice port without a number',
    error: '',
    request: write(slice('s3', [['192.168.0.1']], [{ protocol: 'TCP' }])),
  },
  { name: 'an FQDN slice', error: '', request: write(slice('s4', [['example.com']], [], 'FQDN')) },
  {
    name: 'a slice update that keeps endpoints and ports',
    error: '',
    request: (cluster) => modify(cluster, STORED[2], labelled({ changed: 'yes' }), ALICE),
  },
  {
    name: 'the granted service account',
    error: '',
    request: write(endpoints('r11', { addresses: ['10.128.0.5'] }), { as: TRUSTED, groups: ['system:authenticated'] }),
  },
  {
    name: 'the endpoint controller',
    error: '',
    request: write(slice('s5', [['10.128.0.5']]), { as: ENDPOINT_CONTROLLERS[1], groups: ['system:serviceaccounts'] }),
  },
];

async function seed(cluster: ControlPlane): Promise<void> {
  await namespaceWithAccount(cluster, 'ns');
  await grant(
    cluster,
    'e2e-writer',
    [
      { apiGroups: [''], resources: ['endpoints'], verbs: ['*'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['*'] },
    ],
    { groups: ['system:authenticated', 'system:serviceaccounts'] },
  );
  await grant(
    cluster,
    'e2e-restricted',
    [
      { apiGroups: [''], resources: ['endpoints/restricted'], verbs: ['create'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices/restricted'], verbs: ['create'] },
    ],
    { users: GRANTED },
  );
  for (const object of [...SERVICES, ...STORED]) await seedObject(cluster, object);
}

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(config(GRANTED), {
    nativeAdmissionConfiguration: config([]),
    seed,
    inForce: async (cluster) =>
      (await create(cluster, endpoints('probe', { addresses: ['10.128.0.5'] }), { ...ALICE, dryRun: true })).status ===
      403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('restricted-endpoints-admission (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const { name, request, error } of ROWS) {
    it(`answers as the webhook does: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      if (error === undefined) expect(webhook.status, webhook.message).toBe(422);
      else expect(webhook.status < 300, webhook.message ?? 'admitted').toBe(error === '');
      expectSameOutcome(webhook, native);
      if (error) expect(policyDenial(native.message)?.message).toBe(error);
    });
  }
});
