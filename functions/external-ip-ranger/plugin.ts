// network.openshift.io/ExternalIPRanger: a Service's spec.externalIPs makes every node's proxy
// capture traffic for those addresses, so whoever can write a Service can hijack any address
// (CVE-2020-8554). OpenShift lets the administrator say which ranges Services may claim
// (`!`-prefixed CIDRs are refused first, then an address must fall in an admitted CIDR; no CIDR at
// all disables external IPs), optionally lets a LoadBalancer Service keep its own ingress IP, and
// lets users authorized for `create services/externalips` in network.openshift.io set anything.
// Source: openshift/kubernetes openshift-kube-apiserver/admission/network/externalipranger.
//
// Configuration, in OpenShift's own format, under the AdmissionConfiguration entry named
// network.openshift.io/ExternalIPRanger (no entry: the plugin is disabled, as in OpenShift):
//
//   - name: network.openshift.io/ExternalIPRanger
//     configuration:
//       apiVersion: network.openshift.io/v1
//       kind: ExternalIPRangerAdmissionConfig
//       externalIPNetworkCIDRs: ["192.168.0.0/16", "!192.168.1.0/24"]
//       allowIngressIP: true
//       # Ours, replacing OpenShift's authorization check (a webhook cannot ask the authorizer):
//       allowedUsers: ["system:serviceaccount:infra:lb-operator"]   # default []
//       allowedGroups: ["system:masters"]                          # default ["system:masters"]
//
// Validating only, as upstream. Like upstream it judges every Service write it handles, including
// services/status, and every external IP of the Service, not only new ones.

import type { AdmissionRequest } from '../../lib/admission/request.js';
import { allowed, denied, forbiddenMessage, resourceNameForMessage } from '../../lib/admission/decision.js';
import type { FieldError } from '../../lib/admission/field.js';
import { aggregateMessage, FieldPath, fieldErrorMessage, forbiddenField } from '../../lib/admission/field.js';
import { definePlugin, validatingOnly } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { AuthorizerAllowlist } from '../../lib/config/allowlist.js';
import { ALLOWLIST_FIELDS, EMPTY_ALLOWLIST, isAllowlisted, readAllowlist } from '../../lib/config/allowlist.js';
import { openShiftConfig } from '../../lib/config/fields.js';
import type { IPNet } from '../../lib/kube/net.js';
import { cidrContains, parseCIDRSloppy, parseIPSloppy } from '../../lib/kube/net.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';

const PLUGIN = 'network.openshift.io/ExternalIPRanger';
const CONFIG_API_VERSION = 'network.openshift.io/v1';
const CONFIG_KIND = 'ExternalIPRangerAdmissionConfig';

export interface ExternalIPRangerConfig {
  /** False when the AdmissionConfiguration has no entry: OpenShift then disables the plugin. */
  readonly enabled: boolean;
  readonly reject: readonly IPNet[];
  readonly admit: readonly IPNet[];
  readonly allowIngressIP: boolean;
  /** Who may set any external IP: stands in for `create services/externalips` in network.openshift.io. */
  readonly allowlist: AuthorizerAllowlist;
}

const FIELDS = ['externalIPNetworkCIDRs', 'allowIngressIP', ...ALLOWLIST_FIELDS];

function configure(raw: unknown): ExternalIPRangerConfig {
  const entry = openShiftConfig(PLUGIN, raw, CONFIG_API_VERSION, CONFIG_KIND, FIELDS);
  if (entry === undefined)
    return { enabled: false, reject: [], admit: [], allowIngressIP: false, allowlist: EMPTY_ALLOWLIST };
  const reject: IPNet[] = [];
  const admit: IPNet[] = [];
  // ParseRejectAdmitCIDRRules: a leading ! makes a rejection.
  entry.strings('externalIPNetworkCIDRs', { nonEmpty: true }).forEach((rule, i) => {
    const negate = rule.startsWith('!');
    try {
      (negate ? reject : admit).push(parseCIDRSloppy(negate ? rule.slice(1) : rule));
    } catch (error) {
      throw entry.error(`externalIPNetworkCIDRs[${i}]`, (error as Error).message);
    }
  });
  const allowIngressIP = entry.boolean('allowIngressIP', false);
  return {
    enabled: true,
    reject,
    admit,
    allowIngressIP,
    allowlist: readAllowlist(entry),
  };
}

interface Service extends KubeObject {
  spec?: { type?: string; externalIPs?: unknown[] };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

const SERVICE_RULES = [
  {
    operations: ['CREATE', 'UPDATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['services', 'services/status'],
    scope: 'Namespaced',
  },
] as const;

/** Other resources are left alone; upstream looks at services and every subresource carrying one. */
function shouldIgnore(request: AdmissionRequest, config: ExternalIPRangerConfig): boolean {
  if (!config.enabled) return true;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return true;
  return request.resource.group !== '' || request.resource.resource !== 'services';
}

/** The first load balancer ingress IP of the stored Service, when a LoadBalancer may keep it. */
function ingressIPOf(request: AdmissionRequest, service: Service, config: ExternalIPRangerConfig): string {
  if (request.operation !== 'UPDATE' || !config.allowIngressIP || service.spec?.type !== 'LoadBalancer') return '';
  const old = request.oldObject as Service | null;
  if (!isObjectOfKind<Service>(old, 'Service')) return '';
  const first = old.status?.loadBalancer?.ingress?.[0];
  return typeof first?.ip === 'string' ? first.ip : '';
}

function violations(externalIPs: string[], ingressIP: string, config: ExternalIPRangerConfig): FieldError[] {
  const path = FieldPath.of('spec', 'externalIPs');
  if (externalIPs.length === 0) return [];
  if (config.admit.length === 0 && config.reject.length === 0) {
    const onlyIngressIP = externalIPs.length === 1 && externalIPs[0] === ingressIP;
    return onlyIngressIP ? [] : [forbiddenField(path, 'externalIPs have been disabled')];
  }
  const errors: FieldError[] = [];
  externalIPs.forEach((text, i) => {
    const ip = parseIPSloppy(text);
    if (ip === undefined) {
      errors.push(forbiddenField(path.index(i), 'externalIPs must be a valid address'));
      return;
    }
    if (text === ingressIP) return;
    const rejected = config.reject.some((net) => cidrContains(net, ip));
    const notAdmitted = config.admit.length > 0 && !config.admit.some((net) => cidrContains(net, ip));
    if (rejected || notAdmitted) errors.push(forbiddenField(path.index(i), 'externalIP is not allowed'));
  });
  return errors;
}

export default definePlugin({
  metadata: {
    upstreamName: PLUGIN,
    name: 'external-ip-ranger',
    summary: 'Limits Service externalIPs to configured CIDRs (OpenShift network.openshift.io/ExternalIPRanger).',
    ...validatingOnly(SERVICE_RULES),
    writes: false,
    needs: [],
    // As deny-service-external-ips: kube-system and our own namespace stay writable if the webhook
    // is down; who can write Services there is already a cluster administrator.
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure,

  validate(request, { config }) {
    if (shouldIgnore(request, config)) return allowed();
    const service = request.object;
    // Upstream handles only what decodes as a Service and lets anything else through.
    if (!isObjectOfKind<Service>(service, 'Service')) return allowed();
    const externalIPs = Array.isArray(service.spec?.externalIPs)
      ? service.spec.externalIPs.map((ip) => (typeof ip === 'string' ? ip : ''))
      : [];
    const errors = violations(externalIPs, ingressIPOf(request, service, config), config);
    if (errors.length === 0 || isAllowlisted(config.allowlist, request.userInfo)) return allowed();
    // admission.NewForbidden(a, errs.ToAggregate()): one prefix around the aggregated field errors.
    const message = forbiddenMessage(request, aggregateMessage(errors.map(fieldErrorMessage)));
    return denied(message, 403, 'Forbidden', {
      name: resourceNameForMessage(request),
      group: request.resource.group,
      kind: request.resource.resource,
    });
  },
});
