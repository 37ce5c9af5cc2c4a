// scheduling.openshift.io/PodNodeConstraints: choosing a pod's node by name (spec.nodeName) skips
// the scheduler and every rule it enforces, and some node labels (the hostname by default) are as
// good as a name. OpenShift lets only those allowed to bind pods (`create pods/binding`) do either.
// Source: openshift/kubernetes openshift-kube-apiserver/admission/scheduler/podnodeconstraints.
//
// Configuration, in OpenShift's own format, under the AdmissionConfiguration entry named
// scheduling.openshift.io/PodNodeConstraints (no entry: the plugin is disabled, as in OpenShift):
//
//   - name: scheduling.openshift.io/PodNodeConstraints
//     configuration:
//       apiVersion: scheduling.openshift.io/v1
//       kind: PodNodeConstraintsConfig
//       nodeSelectorLabelBlacklist: ["kubernetes.io/hostname"]   # OpenShift's default when absent
//       # Ours, replacing OpenShift's authorization check (a webhook cannot ask the authorizer):
//       allowedUsers: ["system:serviceaccount:infra:placer"]     # default []
//       allowedGroups: ["system:masters"]                         # default ["system:masters"]
//
// Validating only, as upstream: pod CREATE. A node creating a mirror pod bound to itself passes.

import { allowed, forbidden } from '../../lib/admission/decision.js';
import { definePlugin, validatingOnly } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { openShiftConfigObject } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';

const PLUGIN = 'scheduling.openshift.io/PodNodeConstraints';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const NODE_USER_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';

export interface PodNodeConstraintsConfig {
  /** False when the AdmissionConfiguration has no entry: OpenShift then disables the plugin. */
  readonly enabled: boolean;
  readonly nodeSelectorLabelBlacklist: ReadonlySet<string>;
  readonly allowedUsers: ReadonlySet<string>;
  readonly allowedGroups: ReadonlySet<string>;
}

function stringList(entry: Record<string, unknown>, field: string, fallback: string[]): string[] {
  const value = entry[field];
  if (value === undefined || value === null) return fallback;
  if (!Array.isArray(value)) throw new ConfigError(PLUGIN, field, 'must be a list of strings');
  value.forEach((item, i) => {
    if (typeof item !== 'string' || item === '') throw new ConfigError(PLUGIN, `${field}[${i}]`, `must be a non-empty string, got ${JSON.stringify(item)}`);
  });
  return value as string[];
}

function configure(raw: unknown): PodNodeConstraintsConfig {
  const entry = openShiftConfigObject(PLUGIN, raw, 'scheduling.openshift.io/v1', 'PodNodeConstraintsConfig', ['nodeSelectorLabelBlacklist', 'allowedUsers', 'allowedGroups']);
  if (entry === undefined) return { enabled: false, nodeSelectorLabelBlacklist: new Set(), allowedUsers: new Set(), allowedGroups: new Set() };
  return {
    enabled: true,
    // SetDefaults_PodNodeConstraintsConfig: absent means the hostname label; [] means none.
    nodeSelectorLabelBlacklist: new Set(stringList(entry, 'nodeSelectorLabelBlacklist', ['kubernetes.io/hostname'])),
    allowedUsers: new Set(stringList(entry, 'allowedUsers', [])),
    allowedGroups: new Set(stringList(entry, 'allowedGroups', ['system:masters'])),
  };
}

interface Pod extends KubeObject {
  spec?: { nodeName?: string; nodeSelector?: Record<string, string> };
}

/** Stands in for upstream's check of `create pods/binding` in the pod's namespace. */
function mayBind(request: AdmissionRequest, config: PodNodeConstraintsConfig): boolean {
  if (config.allowedUsers.has(request.userInfo.username ?? '')) return true;
  return (request.userInfo.groups ?? []).some((group) => config.allowedGroups.has(group));
}

/** nodeidentifier.NodeIdentity: `system:node:<name>` in the `system:nodes` group. */
function nodeIdentity(request: AdmissionRequest): string | undefined {
  const username = request.userInfo.username ?? '';
  if (!username.startsWith(NODE_USER_PREFIX) || !(request.userInfo.groups ?? []).includes(NODES_GROUP)) return undefined;
  return username.slice(NODE_USER_PREFIX.length) || undefined;
}

/** A node creating a mirror pod that targets itself (NodeRestriction has the details). */
function isNodeSelfTargetWithMirrorPod(request: AdmissionRequest, pod: Pod, nodeName: string): boolean {
  if (nodeName === '') return false;
  const annotations = pod.metadata?.annotations ?? {};
  if (!(MIRROR_POD_ANNOTATION in annotations)) return false;
  return nodeIdentity(request) === nodeName;
}

/** Go's %v of a []string. Upstream's order is map order (random); ours is sorted. */
const goList = (items: string[]) => `[${items.join(' ')}]`;

export default definePlugin({
  metadata: {
    upstreamName: PLUGIN,
    name: 'pod-node-constraints',
    summary: 'Refuses pods that set nodeName or reserved nodeSelector labels unless the user may bind pods (OpenShift scheduling.openshift.io/PodNodeConstraints).',
    ...validatingOnly([{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }]),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  configure,

  validate(request, { config }) {
    const cfg = config as PodNodeConstraintsConfig;
    if (!cfg.enabled || request.operation !== 'CREATE' || !isMainResource(request, '', 'pods')) return allowed();
    const pod = request.object;
    if (!isObjectOfKind<Pod>(pod, 'Pod')) return allowed();
    const nodeName = typeof pod.spec?.nodeName === 'string' ? pod.spec.nodeName : '';
    if (isNodeSelfTargetWithMirrorPod(request, pod, nodeName)) return allowed();
    const matchingLabels = Object.keys(pod.spec?.nodeSelector ?? {}).filter((label) => cfg.nodeSelectorLabelBlacklist.has(label)).sort();
    if (nodeName === '' && matchingLabels.length === 0) return allowed();
    if (mayBind(request, cfg)) return allowed();
    if (matchingLabels.length === 0) return forbidden(request, ['node selection by nodeName is prohibited by policy for your role']);
    if (nodeName === '') return forbidden(request, [`node selection by label(s) ${goList(matchingLabels)} is prohibited by policy for your role`]);
    return forbidden(request, [`node selection by nodeName and label(s) ${goList(matchingLabels)} is prohibited by policy for your role`]);
  },
});
