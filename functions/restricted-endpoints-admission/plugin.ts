// network.openshift.io/RestrictedEndpointsAdmission: whoever can write Endpoints or EndpointSlices
// can point a Service at any address, including the pod and service networks, the node's loopback
// (CVE-2021-25737) or the cloud metadata service, and so reach what their own pods cannot
// (CVE-2021-25740, by design upstream; the advice there is exactly this admission check). OpenShift
// refuses addresses in the configured CIDRs, anything in 169.254.0.0/16 (link-local, the metadata
// IP) and the machine-config server's ports (TCP 22623 and 22624), unless the user may
// `create endpoints/restricted` (`endpointslices/restricted` in discovery.k8s.io).
// Source: openshift/kubernetes openshift-kube-apiserver/admission/network/restrictedendpoints.
//
// Configuration, in OpenShift's own format, under the AdmissionConfiguration entry named
// network.openshift.io/RestrictedEndpointsAdmission (no entry: the plugin is disabled, defaults
// included, as in OpenShift):
//
//   - name: network.openshift.io/RestrictedEndpointsAdmission
//     configuration:
//       apiVersion: network.openshift.io/v1
//       kind: RestrictedEndpointsAdmissionConfig
//       restrictedCIDRs: ["10.128.0.0/14", "172.30.0.0/16"]   # pod and service networks
//       # Ours, replacing OpenShift's authorization check (a webhook cannot ask the authorizer):
//       allowedUsers: [...]              # default: the three endpoint controllers, see below
//       allowedGroups: ["system:masters"]  # default ["system:masters"]
//
// Validating only, as upstream: CREATE and UPDATE; an UPDATE that leaves the addresses and ports
// as they were passes, so objects written before installation can still be updated otherwise.

import { allowed, forbidden } from '../../lib/admission/decision.js';
import { definePlugin, validatingOnly } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { AuthorizerAllowlist } from '../../lib/config/allowlist.js';
import { ALLOWLIST_FIELDS, EMPTY_ALLOWLIST, isAllowlisted, readAllowlist } from '../../lib/config/allowlist.js';
import { openShiftConfig } from '../../lib/config/fields.js';
import type { IPNet } from '../../lib/kube/net.js';
import { cidrContains, parseCIDRSloppy, parseIPSloppy } from '../../lib/kube/net.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';

const PLUGIN = 'network.openshift.io/RestrictedEndpointsAdmission';

/**
 * The controllers that write every Service's Endpoints and EndpointSlices with pod IPs, which lie
 * in the pod network an operator restricts: OpenShift's default roles grant them the restricted
 * pseudo-resources, so they are allowed by default here too (kube-controller-manager running with
 * --use-service-account-credentials, as kubeadm, EKS, GKE and AKS run it).
 */
export const ENDPOINT_CONTROLLERS = [
  'system:serviceaccount:kube-system:endpoint-controller',
  'system:serviceaccount:kube-system:endpointslice-controller',
  'system:serviceaccount:kube-system:endpointslicemirroring-controller',
];

/** IPv4 link-local, the cloud metadata address included. */
export const DEFAULT_RESTRICTED_NETWORKS: readonly IPNet[] = [parseCIDRSloppy('169.254.0.0/16')];
/** The machine-config server's ports. */
export const DEFAULT_RESTRICTED_PORTS: readonly { protocol: string; port: number }[] = [
  { protocol: 'TCP', port: 22623 },
  { protocol: 'TCP', port: 22624 },
];

export interface RestrictedEndpointsConfig {
  /** False when the AdmissionConfiguration has no entry: OpenShift then disables the plugin. */
  readonly enabled: boolean;
  readonly restrictedNetworks: readonly IPNet[];
  /** Who may write any address: stands in for `create endpoints/restricted` (endpointslices/restricted). */
  readonly allowlist: AuthorizerAllowlist;
}

function configure(raw: unknown): RestrictedEndpointsConfig {
  const entry = openShiftConfig(PLUGIN, raw, 'network.openshift.io/v1', 'RestrictedEndpointsAdmissionConfig', [
    'restrictedCIDRs',
    ...ALLOWLIST_FIELDS,
  ]);
  if (entry === undefined) return { enabled: false, restrictedNetworks: [], allowlist: EMPTY_ALLOWLIST };
  // ParseSimpleCIDRRules: every entry a CIDR, read as ParseCIDRSloppy reads it.
  const restrictedNetworks = entry.strings('restrictedCIDRs', { nonEmpty: true }).map((text, i) => {
    try {
      return parseCIDRSloppy(text);
    } catch (error) {
      throw entry.error(`restrictedCIDRs[${i}]`, (error as Error).message);
    }
  });
  return { enabled: true, restrictedNetworks, allowlist: readAllowlist(entry, ENDPOINT_CONTROLLERS) };
}

interface EndpointAddress {
  ip?: string;
}
interface Endpoints extends KubeObject {
  subsets?: {
    addresses?: EndpointAddress[];
    notReadyAddresses?: EndpointAddress[];
    ports?: { port?: number; protocol?: string }[];
  }[];
}
interface EndpointSlice extends KubeObject {
  endpoints?: { addresses?: string[] }[];
  ports?: { port?: number | null; protocol?: string | null }[];
}

/** Go's reflect.DeepEqual on what JSON carries (absent and null alike, as a nil slice decodes). */
function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function restrictedIP(addresses: readonly string[], networks: readonly IPNet[]): string | undefined {
  for (const text of addresses) {
    const ip = parseIPSloppy(text);
    if (ip !== undefined && networks.some((net) => cidrContains(net, ip)))
      return `endpoint address ${text} is not allowed`;
  }
  return undefined;
}

function restrictedPort(ports: readonly { protocol: string; port: number }[]): string | undefined {
  for (const { protocol, port } of ports) {
    if (DEFAULT_RESTRICTED_PORTS.some((r) => r.protocol === protocol && r.port === port))
      return `endpoint port ${protocol}:${port} is not allowed`;
  }
  return undefined;
}

/** Configured networks first, then link-local, then ports: the first error only, as upstream. */
function firstViolation(
  addresses: readonly string[],
  ports: readonly { protocol: string; port: number }[],
  config: RestrictedEndpointsConfig,
): string | undefined {
  return (
    restrictedIP(addresses, config.restrictedNetworks) ??
    restrictedIP(addresses, DEFAULT_RESTRICTED_NETWORKS) ??
    restrictedPort(ports)
  );
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

function endpointsViolation(request: AdmissionRequest, config: RestrictedEndpointsConfig): string | undefined {
  const ep = request.object;
  if (!isObjectOfKind<Endpoints>(ep, 'Endpoints')) return undefined;
  const old = request.oldObject;
  if (isObjectOfKind<Endpoints>(old, 'Endpoints') && deepEqual(ep.subsets, old.subsets)) return undefined;
  const subsets = Array.isArray(ep.subsets) ? ep.subsets : [];
  // Per subset: ready addresses, then not-ready ones.
  const addresses = subsets.flatMap((s) =>
    [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])].map((a) => text(a?.ip)),
  );
  // The apiserver has defaulted every port's protocol (TCP) before admission.
  const ports = subsets.flatMap((s) =>
    (s.ports ?? []).map((p) => ({ protocol: text(p?.protocol) || 'TCP', port: Number(p?.port) })),
  );
  return firstViolation(addresses, ports, config);
}

function sliceViolation(request: AdmissionRequest, config: RestrictedEndpointsConfig): string | undefined {
  const slice = request.object;
  if (!isObjectOfKind<EndpointSlice>(slice, 'EndpointSlice')) return undefined;
  const old = request.oldObject;
  if (
    isObjectOfKind<EndpointSlice>(old, 'EndpointSlice') &&
    deepEqual(slice.endpoints, old.endpoints) &&
    deepEqual(slice.ports, old.ports)
  )
    return undefined;
  const addresses = (Array.isArray(slice.endpoints) ? slice.endpoints : []).flatMap((e) =>
    (e?.addresses ?? []).map(text),
  );
  const ports = (Array.isArray(slice.ports) ? slice.ports : [])
    .filter((p) => typeof p?.port === 'number')
    .map((p) => ({ protocol: text(p.protocol) || 'TCP', port: p.port as number }));
  return firstViolation(addresses, ports, config);
}

export default definePlugin<RestrictedEndpointsConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: 'restricted-endpoints-admission',
    summary:
      'Refuses Endpoints and EndpointSlices pointing at restricted CIDRs, link-local addresses or machine-config ports (OpenShift network.openshift.io/RestrictedEndpointsAdmission).',
    ...validatingOnly([
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['endpoints'],
        scope: 'Namespaced',
      },
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: ['discovery.k8s.io'],
        apiVersions: ['v1'],
        resources: ['endpointslices'],
        scope: 'Namespaced',
      },
    ]),
    writes: false,
    needs: [],
    // The controllers writing Endpoints in kube-system are the cluster's own.
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure,

  validate(request, { config }) {
    if (!config.enabled || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return allowed();
    const { group, resource } = request.resource;
    let violation: string | undefined;
    if (group === '' && resource === 'endpoints') violation = endpointsViolation(request, config);
    else if (group === 'discovery.k8s.io' && resource === 'endpointslices') violation = sliceViolation(request, config);
    if (violation === undefined || isAllowlisted(config.allowlist, request.userInfo)) return allowed();
    return forbidden(request, [violation]);
  },
});
