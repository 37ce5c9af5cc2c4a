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
import type { AuthorizerAllowlist } from '../../lib/config/allowlist.js';
import { ALLOWLIST_FIELDS, EMPTY_ALLOWLIST, isAllowlisted, readAllowlist } from '../../lib/config/allowlist.js';
import { openShiftConfig } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';

const PLUGIN = 'scheduling.openshift.io/PodNodeConstraints';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const NODE_USER_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';

export interface PodNodeConstraintsConfig {
  /** False when the AdmissionConfiguration has no entry: OpenShift then disables the plugin. */
  readonly enabled: boolean;
  readonly nodeSelectorLabelBlacklist: ReadonlySet<string>;
  /** Who may choose nodes: stands in for `create pods/binding` in the pod's namespace. */
  readonly allowlist: AuthorizerAllowlist;
}

function configure(raw: unknown): PodNodeConstraintsConfig {
  const entry = openShiftConfig(PLUGIN, raw, 'scheduling.openshift.io/v1', 'PodNodeConstraintsConfig', [
    'nodeSelectorLabelBlacklist',
    ...ALLOWLIST_FIELDS,
  ]);
  if (entry === undefined) return { enabled: false, nodeSelectorLabelBlacklist: new Set(), allowlist: EMPTY_ALLOWLIST };
  return {
    enabled: true,
    // SetDefaults_PodNodeConstraintsConfig: absent means the hostname label; [] means none.
    nodeSelectorLabelBlacklist: new Set(
      entry.strings('nodeSelectorLabelBlacklist', { fallback: ['kubernetes.io/hostname'], nonEmpty: true }),
    ),
    allowlist: readAllowlist(entry),
  };
}

interface Pod extends KubeObject {
  spec?: { nodeName?: string; nodeSelector?: Record<string, string> };
}

/** nodeidentifier.NodeIdentity: `system:node:<name>` in the `system:nodes` group. */
function nodeIdentity(request: AdmissionRequest): string | undefined {
  const username = request.userInfo.username ?? '';
  if (!username.startsWith(NODE_USER_PREFIX) || !(request.userInfo.groups ?? []).includes(NODES_GROUP))
    return undefined;
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

export default definePlugin<PodNodeConstraintsConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: 'pod-node-constraints',
    summary:
      'Refuses pods that set nodeName or reserved nodeSelector labels unless the user may bind pods (OpenShift scheduling.openshift.io/PodNodeConstraints).',
    ...validatingOnly([
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
    ]),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure,

  validate(request, { config }) {
    if (!config.enabled || request.operation !== 'CREATE' || !isMainResource(request, '', 'pods')) return allowed();
    const pod = request.object;
    if (!isObjectOfKind<Pod>(pod, 'Pod')) return allowed();
    const nodeName = typeof pod.spec?.nodeName === 'string' ? pod.spec.nodeName : '';
    if (isNodeSelfTargetWithMirrorPod(request, pod, nodeName)) return allowed();
    const matchingLabels = Object.keys(pod.spec?.nodeSelector ?? {})
      .filter((label) => config.nodeSelectorLabelBlacklist.has(label))
      .sort();
    if (nodeName === '' && matchingLabels.length === 0) return allowed();
    if (isAllowlisted(config.allowlist, request.userInfo)) return allowed();
    if (matchingLabels.length === 0)
      return forbidden(request, ['node selection by nodeName is prohibited by policy for your role']);
    if (nodeName === '')
      return forbidden(request, [
        `node selection by label(s) ${goList(matchingLabels)} is prohibited by policy for your role`,
      ]);
    return forbidden(request, [
      `node selection by nodeName and label(s) ${goList(matchingLabels)} is prohibited by policy for your role`,
    ]);
  },
});
