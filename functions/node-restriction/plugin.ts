// NodeRestriction: every kubelet holds credentials, and a node that is compromised must not become
// a cluster compromise. The Node authorizer limits which objects a kubelet may touch at all; this
// plugin limits what it may write into them: only its own Node (no taints, no owner references,
// no labels that steer privileged workloads), only mirror pods bound to itself that reference no
// other API object, only its own Lease, CSINode, ResourceSlices and node CSRs, and pod status,
// deletion and eviction only for pods bound to itself. Upstream:
// plugin/pkg/admission/noderestriction (a node is `system:node:<name>` in group `system:nodes`,
// pkg/auth/nodeidentifier).
//
// Upstream runs as a mutating-phase plugin that never mutates; here it is a validating webhook, so
// it judges the object after every mutating webhook, which is the stricter reading.
//
// Upstream reads the apiserver's pod and Node informers; a webhook has the request, and what it has
// learned from earlier requests (`needs: ['placements']`, lib/state/placements): every pod and Node
// write the webhook sees records the pod's node and uid, or the Node's uid, and `npm run sync`
// loads those that predate the webhook. Where upstream looks up:
//   - pod DELETE and pods/status: the pod's spec.nodeName comes from request.oldObject (the stored
//     pod, sent with every DELETE and UPDATE); a DELETE without one reads the learned pod.
//   - pods/eviction: the learned pod; an unknown pod is NotFound, as upstream.
//   - mirror pod owner reference: the learned Node's UID; an unknown Node is NotFound, as upstream.
//   - serviceaccounts/token: the learned pod's uid and node are checked as upstream. A pod not
//     learned yet is allowed (upstream: NotFound): refusing it would stop token refreshes for pods
//     older than the webhook; the Node authorizer still limits tokens to the node's pods. Whether
//     the audience appears in the pod's volumes (and CSIDriver, PV, authorizer lookups) is not
//     checked.
//   - PVC status: the denial lists the differing fields rather than Go's cmp.Diff output.
//   - node Leases: checked when sent, but not subscribed to by default (see RULES).
// Feature gates upstream consults come from configuration (`featureGates`, upstream defaults).

import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, notFound } from '../../lib/admission/decision.js';
import { goQuote } from '../../lib/admission/field.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { LearnedPlacements } from '../../lib/admission/ports.js';
import { ConfigError } from '../../lib/config/errors.js';
import { rejectUnknownFields, suggestion } from '../../lib/config/fields.js';
import { CertificateRequestParseError, parseCertificateRequestSubject } from '../../lib/kube/csr.js';
import { goTypeName, isObjectOfKind } from '../../lib/kube/objects.js';

const PLUGIN = 'NodeRestriction';
const NODE_USER_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.kubernetes.io';

/** The feature gates upstream reads, with the defaults of current Kubernetes. */
const FEATURE_GATE_DEFAULTS = {
  AllowInsecureKubeletCertificateSigningRequests: false,
  RecoverVolumeExpansionFailure: true,
  ServiceAccountNodeAudienceRestriction: true,
} as const;
type FeatureGate = keyof typeof FEATURE_GATE_DEFAULTS;

export interface NodeRestrictionConfig {
  readonly featureGates: Readonly<Record<FeatureGate, boolean>>;
}

/**
 * Optional; upstream has no configuration file but reads the apiserver's --feature-gates:
 *
 *   - name: NodeRestriction
 *     configuration: {featureGates: {AllowInsecureKubeletCertificateSigningRequests: false}}
 */
function configure(raw: unknown): NodeRestrictionConfig {
  const featureGates: Record<FeatureGate, boolean> = { ...FEATURE_GATE_DEFAULTS };
  if (raw === undefined || raw === null) return { featureGates };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(PLUGIN, 'configuration', 'must be an object with featureGates');
  rejectUnknownFields(PLUGIN, '', raw as Record<string, unknown>, ['featureGates']);
  for (const [, value] of Object.entries(raw)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(PLUGIN, 'featureGates', 'must be a map of gate name to true or false');
    for (const [gate, enabled] of Object.entries(value)) {
      if (!(gate in FEATURE_GATE_DEFAULTS)) {
        throw new ConfigError(PLUGIN, `featureGates.${gate}`, `unknown feature gate; ${suggestion(gate, Object.keys(FEATURE_GATE_DEFAULTS))}`);
      }
      if (typeof enabled !== 'boolean') throw new ConfigError(PLUGIN, `featureGates.${gate}`, `must be true or false, got ${JSON.stringify(enabled)}`);
      featureGates[gate as FeatureGate] = enabled;
    }
  }
  return { featureGates };
}

// Every authenticated request has a username; `has` keeps a request without one from erroring
// the condition (an error would apply failurePolicy).
const IS_NODE_USER = "has(request.userInfo.username) && request.userInfo.username.startsWith('system:node:')";
const NODE_REQUESTS = { name: 'node-requests', expression: IS_NODE_USER };
const OTHER_REQUESTS = { name: 'not-node-requests', expression: `!(${IS_NODE_USER})` };

const ALL_WRITES = ['CREATE', 'UPDATE', 'DELETE'] as const;
// Leases are judged by admitLease like upstream, but no rule sends them: the project's webhook
// practice keeps webhooks off Leases, because an unreachable webhook with failurePolicy Fail would
// stop every kubelet's heartbeat and mark every node NotReady. An operator who accepts that risk
// adds {coordination.k8s.io, leases, CREATE/UPDATE/DELETE} to the emitted rule by hand.
const RULES = [
  { operations: ALL_WRITES, apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/*', 'nodes', 'nodes/*', 'persistentvolumeclaims', 'persistentvolumeclaims/*'], scope: '*' },
  { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['serviceaccounts/token'], scope: 'Namespaced' },
  { operations: ALL_WRITES, apiGroups: ['storage.k8s.io'], apiVersions: ['*'], resources: ['csinodes'], scope: 'Cluster' },
  { operations: ['CREATE', 'DELETE'], apiGroups: ['resource.k8s.io'], apiVersions: ['*'], resources: ['resourceslices'], scope: 'Cluster' },
  { operations: ['CREATE'], apiGroups: ['certificates.k8s.io'], apiVersions: ['*'], resources: ['certificatesigningrequests'], scope: 'Cluster' },
] as const;

/** nodeidentifier.NewDefaultNodeIdentifier: the node name, or undefined for anyone but a node. */
export function nodeIdentity(request: AdmissionRequest): string | undefined {
  const username = request.userInfo.username ?? '';
  if (!username.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!(request.userInfo.groups ?? []).includes(NODES_GROUP)) return undefined;
  return username.slice(NODE_USER_PREFIX.length);
}

type Handled = 'pods' | 'nodes' | 'persistentvolumeclaims' | 'serviceaccounts' | 'leases' | 'csinodes' | 'resourceslices' | 'certificatesigningrequests';
const HANDLED: Record<string, Handled> = {
  '/pods': 'pods',
  '/nodes': 'nodes',
  '/persistentvolumeclaims': 'persistentvolumeclaims',
  '/serviceaccounts': 'serviceaccounts',
  'coordination.k8s.io/leases': 'leases',
  'storage.k8s.io/csinodes': 'csinodes',
  'resource.k8s.io/resourceslices': 'resourceslices',
  'certificates.k8s.io/certificatesigningrequests': 'certificatesigningrequests',
};

const handledResource = (request: AdmissionRequest): Handled | undefined => HANDLED[`${request.resource.group}/${request.resource.resource}`];

/** Anyone but a node, CONNECT, and resources upstream does not look at are left alone. */
function shouldIgnore(request: AdmissionRequest): boolean {
  if (request.operation === 'CONNECT') return true;
  if (handledResource(request) === undefined) return true;
  return nodeIdentity(request) === undefined;
}

// ---- helpers on JSON objects ----

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const objectAt = (v: unknown, ...path: string[]): Json => {
  let at: unknown = v;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  return isObject(at) ? at : {};
};
const stringAt = (v: unknown, ...path: string[]): string => {
  const parent = objectAt(v, ...path.slice(0, -1));
  const value = parent[path[path.length - 1]];
  return typeof value === 'string' ? value : '';
};
const listAt = (v: unknown, ...path: string[]): unknown[] => {
  const value = objectAt(v, ...path.slice(0, -1))[path[path.length - 1]];
  return Array.isArray(value) ? value : [];
};
const present = (v: unknown) => v !== undefined && v !== null;

/**
 * The zero-value blind equality of apimachinery's Semantic.DeepEqual as it shows on JSON: an absent
 * field, null, "", 0, false, [] and {} all read as the Go zero value, and empty and nil slices and
 * maps are equal. (Quantities are compared as written.)
 */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map((v) => normalized(v) ?? null);
  if (isObject(value)) {
    const out: Json = {};
    for (const key of Object.keys(value).sort()) {
      const v = normalized(value[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  if (value === null || value === '' || value === 0 || value === false) return undefined;
  return value;
}
export function semanticallyEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalized(a)) === JSON.stringify(normalized(b));
}

/** getModifiedLabels: keys added, removed or changed between two label maps. */
export function modifiedLabels(a: unknown, b: unknown): Set<string> {
  const left = isObject(a) ? a : {};
  const right = isObject(b) ? b : {};
  const modified = new Set<string>();
  for (const [k, v] of Object.entries(left)) if (!(k in right) || right[k] !== v) modified.add(k);
  for (const [k, v] of Object.entries(right)) if (!(k in left) || left[k] !== v) modified.add(k);
  return modified;
}

const labelNamespace = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, domain: string) => ns === domain || ns.endsWith(`.${domain}`);

/** k8s.io/kubelet/pkg/apis: labels a kubelet may set on its own Node. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((allowedNs) => inNamespace(ns, allowedNs));
}

/** getForbiddenLabels, sorted as sets.String.List() sorts. */
function forbiddenLabels(modified: Set<string>): string[] {
  const result = [...modified].filter((label) => {
    const ns = labelNamespace(label);
    if (inNamespace(ns, NODE_RESTRICTION_LABEL_NAMESPACE)) return true;
    return (inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io')) && !isKubeletLabel(label);
  });
  return result.sort();
}

// ---- the rules ----

const q = goQuote;
const deny = (request: AdmissionRequest, message: string) => forbidden(request, [message]);
const unexpectedType = (request: AdmissionRequest, object: Readonly<KubeObject> | null) => deny(request, `unexpected type ${goTypeName(object)}`);

/** The pod's spec.nodeName from the stored pod the request carries, else as learned; undefined: not found. */
async function storedPodNode(request: AdmissionRequest, podName: string, placements: LearnedPlacements): Promise<string | undefined> {
  if (isObjectOfKind(request.oldObject, 'Pod')) return stringAt(request.oldObject, 'spec', 'nodeName');
  return (await placements.pod(request.namespace, podName))?.nodeName;
}

async function admitPod(node: string, request: AdmissionRequest, placements: LearnedPlacements): Promise<Decision> {
  switch (request.operation) {
    case 'CREATE':
      return admitPodCreate(node, request, placements);
    case 'DELETE': {
      const podNode = await storedPodNode(request, request.name, placements);
      if (podNode === undefined) return notFound('pods', request.name);
      if (podNode !== node) return deny(request, `node ${q(node)} can only delete pods with spec.nodeName set to itself`);
      return allowed();
    }
    default:
      return deny(request, `unexpected operation ${q(request.operation)}, node ${q(node)} can only create and delete mirror pods`);
  }
}

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;
const allContainers = (spec: Json): Json[] => CONTAINER_LISTS.flatMap((list) => listAt(spec, list).filter(isObject));

/** podutil.VisitPodSecretNames found at least one reference (names may be empty, as upstream). */
function referencesSecrets(spec: Json): boolean {
  if (listAt(spec, 'imagePullSecrets').length > 0) return true;
  for (const c of allContainers(spec)) {
    if (listAt(c, 'envFrom').some((e) => present(objectAt(e)['secretRef']))) return true;
    if (listAt(c, 'env').some((e) => present(objectAt(e, 'valueFrom')['secretKeyRef']))) return true;
  }
  return listAt(spec, 'volumes').some((volume) => {
    const v = objectAt(volume);
    if (present(v.azureFile)) return stringAt(v, 'azureFile', 'secretName') !== '';
    for (const source of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) {
      if (present(v[source])) return present(objectAt(v, source)['secretRef']);
    }
    if (present(v.projected)) return listAt(v, 'projected', 'sources').some((s) => present(objectAt(s)['secret']));
    if (present(v.secret)) return true;
    if (present(v.csi)) return present(objectAt(v, 'csi')['nodePublishSecretRef']);
    return false;
  });
}

/** podutil.VisitPodConfigmapNames found at least one reference. */
function referencesConfigMaps(spec: Json): boolean {
  for (const c of allContainers(spec)) {
    if (listAt(c, 'envFrom').some((e) => present(objectAt(e)['configMapRef']))) return true;
    if (listAt(c, 'env').some((e) => present(objectAt(e, 'valueFrom')['configMapKeyRef']))) return true;
  }
  return listAt(spec, 'volumes').some((volume) => {
    const v = objectAt(volume);
    if (present(v.projected)) return listAt(v, 'projected', 'sources').some((s) => present(objectAt(s)['configMap']));
    return present(v.configMap);
  });
}

async function admitPodCreate(node: string, request: AdmissionRequest, placements: LearnedPlacements): Promise<Decision> {
  const pod = request.object;
  if (!isObjectOfKind(pod, 'Pod')) return unexpectedType(request, pod);
  const annotations = objectAt(pod, 'metadata', 'annotations');
  if (!(MIRROR_POD_ANNOTATION in annotations)) {
    return deny(request, `pod does not have ${q(MIRROR_POD_ANNOTATION)} annotation, node ${q(node)} can only create mirror pods`);
  }
  const spec = objectAt(pod, 'spec');
  if (stringAt(spec, 'nodeName') !== node) return deny(request, `node ${q(node)} can only create pods with spec.nodeName set to itself`);
  const owners = listAt(pod, 'metadata', 'ownerReferences');
  if (owners.length > 1) return deny(request, `node ${q(node)} can only create pods with a single owner reference set to itself`);
  if (owners.length === 0) return deny(request, `node ${q(node)} can only create pods with an owner reference set to itself`);
  const owner = objectAt(owners[0]);
  if (stringAt(owner, 'apiVersion') !== 'v1' || stringAt(owner, 'kind') !== 'Node' || stringAt(owner, 'name') !== node) {
    return deny(request, `node ${q(node)} can only create pods with an owner reference set to itself`);
  }
  if (owner.controller !== true) return deny(request, `node ${q(node)} can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true) return deny(request, `node ${q(node)} must not set blockOwnerDeletion on an owner reference`);
  const known = await placements.node(node);
  if (known === undefined) return notFound('nodes', node);
  // Upstream's wording: "expected" is the owner reference's UID, "got" the Node's.
  if (stringAt(owner, 'uid') !== known.uid) return deny(request, `node ${node} UID mismatch: expected ${stringAt(owner, 'uid')} got ${known.uid}`);

  if (stringAt(spec, 'serviceAccountName') !== '') return deny(request, `node ${q(node)} can not create pods that reference a service account`);
  if (referencesSecrets(spec)) return deny(request, `node ${q(node)} can not create pods that reference secrets`);
  if (referencesConfigMaps(spec)) return deny(request, `node ${q(node)} can not create pods that reference configmaps`);
  const volumes = listAt(spec, 'volumes').map((v) => objectAt(v));
  if (volumes.some((v) => listAt(v, 'projected', 'sources').some((s) => present(objectAt(s)['clusterTrustBundle'])))) {
    return deny(request, `node ${q(node)} can not create pods that reference clustertrustbundles`);
  }
  if (volumes.some((v) => present(v.persistentVolumeClaim))) return deny(request, `node ${q(node)} can not create pods that reference persistentvolumeclaims`);
  return allowed();
}

function resourceClaimStatusesEqual(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((entry, i) => {
    const x = objectAt(entry);
    const y = objectAt(b[i]);
    if (stringAt(x, 'name') !== stringAt(y, 'name')) return false;
    const claimX = x.resourceClaimName;
    const claimY = y.resourceClaimName;
    if (present(claimX) !== present(claimY)) return false;
    return !present(claimX) || claimX === claimY;
  });
}

function admitPodStatus(node: string, request: AdmissionRequest): Decision {
  if (request.operation !== 'UPDATE') return deny(request, `unexpected operation ${q(request.operation)}`);
  const oldPod = request.oldObject;
  if (!isObjectOfKind(oldPod, 'Pod')) return unexpectedType(request, oldPod);
  if (stringAt(oldPod, 'spec', 'nodeName') !== node) return deny(request, `node ${q(node)} can only update pod status for pods with spec.nodeName set to itself`);
  const newPod = request.object;
  if (!isObjectOfKind(newPod, 'Pod')) return unexpectedType(request, newPod);
  if (modifiedLabels(objectAt(oldPod, 'metadata', 'labels'), objectAt(newPod, 'metadata', 'labels')).size > 0) {
    return deny(request, `node ${q(node)} cannot update labels through pod status`);
  }
  if (!resourceClaimStatusesEqual(listAt(oldPod, 'status', 'resourceClaimStatuses'), listAt(newPod, 'status', 'resourceClaimStatuses'))) {
    return deny(request, `node ${q(node)} cannot update resource claim statues`);
  }
  return allowed();
}

async function admitPodEviction(node: string, request: AdmissionRequest, placements: LearnedPlacements): Promise<Decision> {
  if (request.operation !== 'CREATE') return deny(request, `unexpected operation ${request.operation}`);
  const eviction = request.object;
  if (!isObjectOfKind(eviction, 'Eviction')) return unexpectedType(request, eviction);
  // The pod's name from the request, else from the Eviction, as upstream.
  const podName = request.name || stringAt(eviction, 'metadata', 'name');
  if (podName === '') return deny(request, 'could not determine pod from request data');
  const podNode = await storedPodNode(request, podName, placements);
  if (podNode === undefined) return notFound('pods', podName);
  if (podNode !== node) return deny(request, `node ${node} can only evict pods with spec.nodeName set to itself`);
  return allowed();
}

const PVC_STATUS_FIELDS_NODES_MAY_CHANGE = ['capacity', 'conditions'];
const PVC_RECOVERY_FIELDS = ['allocatedResourceStatuses', 'allocatedResources'];

function withoutNodeWritableFields(pvc: KubeObject, recoveryEnabled: boolean): Json {
  const copy = structuredClone(pvc) as Json;
  const meta = objectAt(copy, 'metadata');
  delete meta.resourceVersion;
  delete meta.managedFields;
  const status = objectAt(copy, 'status');
  for (const field of PVC_STATUS_FIELDS_NODES_MAY_CHANGE) delete status[field];
  if (recoveryEnabled) for (const field of PVC_RECOVERY_FIELDS) delete status[field];
  return copy;
}

/** The JSON paths where two objects differ, standing in for Go's cmp.Diff. */
function differingPaths(a: unknown, b: unknown, path = ''): string[] {
  if (semanticallyEqual(a, b)) return [];
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => differingPaths(a[k], b[k], path === '' ? k : `${path}.${k}`));
  }
  return [path === '' ? '(object)' : path];
}

function admitPVCStatus(node: string, request: AdmissionRequest, config: NodeRestrictionConfig): Decision {
  if (request.operation !== 'UPDATE') return deny(request, `unexpected operation ${q(request.operation)}`);
  const oldPVC = request.oldObject;
  if (!isObjectOfKind(oldPVC, 'PersistentVolumeClaim')) return unexpectedType(request, oldPVC);
  const newPVC = request.object;
  if (!isObjectOfKind(newPVC, 'PersistentVolumeClaim')) return unexpectedType(request, newPVC);
  const recovery = config.featureGates.RecoverVolumeExpansionFailure;
  const before = withoutNodeWritableFields(oldPVC, recovery);
  const after = withoutNodeWritableFields(newPVC, recovery);
  if (semanticallyEqual(before, after)) return allowed();
  return deny(request, `node ${q(node)} is not allowed to update fields other than status.quantity and status.conditions: changed ${differingPaths(before, after).join(', ')}`);
}

function admitNode(node: string, request: AdmissionRequest): Decision {
  if (request.name !== node) return deny(request, `node ${q(node)} is not allowed to modify node ${q(request.name)}`);
  if (request.operation === 'CREATE') {
    const object = request.object;
    if (!isObjectOfKind(object, 'Node')) return unexpectedType(request, object);
    if (present(objectAt(object, 'spec')['configSource'])) return deny(request, `node ${q(node)} is not allowed to create pods with a non-nil configSource`);
    const labels = forbiddenLabels(modifiedLabels(objectAt(object, 'metadata', 'labels'), undefined));
    if (labels.length > 0) return deny(request, `node ${q(node)} is not allowed to set the following labels: ${labels.join(', ')}`);
  }
  if (request.operation === 'UPDATE') {
    const object = request.object;
    if (!isObjectOfKind(object, 'Node')) return unexpectedType(request, object);
    const old = request.oldObject;
    // Upstream prints the new object's type here too.
    if (!isObjectOfKind(old, 'Node')) return unexpectedType(request, object);
    const configSource = objectAt(object, 'spec')['configSource'];
    if (present(configSource) && !semanticallyEqual(configSource, objectAt(old, 'spec')['configSource'])) {
      return deny(request, `node ${q(node)} is not allowed to update configSource to a new non-nil configSource`);
    }
    if (!semanticallyEqual(objectAt(object, 'spec')['taints'], objectAt(old, 'spec')['taints'])) return deny(request, `node ${q(node)} is not allowed to modify taints`);
    if (!semanticallyEqual(objectAt(object, 'metadata')['ownerReferences'], objectAt(old, 'metadata')['ownerReferences'])) {
      return deny(request, `node ${q(node)} is not allowed to modify ownerReferences`);
    }
    const labels = forbiddenLabels(modifiedLabels(objectAt(object, 'metadata', 'labels'), objectAt(old, 'metadata', 'labels')));
    if (labels.length > 0) return deny(request, `is not allowed to modify labels: ${labels.join(', ')}`);
  }
  // DELETE of its own Node passes here, as upstream: the Node authorizer no longer grants it.
  return allowed();
}

async function admitServiceAccount(node: string, request: AdmissionRequest, config: NodeRestrictionConfig, placements: LearnedPlacements): Promise<Decision> {
  if (request.operation !== 'CREATE' || request.subResource !== 'token') return allowed();
  const tokenRequest = request.object;
  if (!isObjectOfKind(tokenRequest, 'TokenRequest')) return unexpectedType(request, tokenRequest);
  const ref = objectAt(tokenRequest, 'spec', 'boundObjectRef');
  if (!present(objectAt(tokenRequest, 'spec')['boundObjectRef']) || stringAt(ref, 'apiVersion') !== 'v1' || stringAt(ref, 'kind') !== 'Pod' || stringAt(ref, 'name') === '') {
    return deny(request, 'node requested token not bound to a pod');
  }
  const uid = stringAt(ref, 'uid');
  if (uid === '') return deny(request, 'node requested token with a pod binding without a uid');
  // A pod not learned yet is allowed (see the header); upstream answers NotFound.
  const pod = await placements.pod(request.namespace, stringAt(ref, 'name'));
  if (pod !== undefined) {
    if (pod.uid !== '' && pod.uid !== uid) {
      return deny(request, `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (pod.nodeName !== node) return deny(request, 'node requested token bound to a pod scheduled on a different node');
  }
  if (config.featureGates.ServiceAccountNodeAudienceRestriction && listAt(tokenRequest, 'spec', 'audiences').length > 1) {
    return deny(request, 'node may only request 0 or 1 audiences');
  }
  return allowed();
}

function admitLease(node: string, request: AdmissionRequest): Decision {
  if (request.namespace !== NODE_LEASE_NAMESPACE) return deny(request, `can only access leases in the ${q(NODE_LEASE_NAMESPACE)} system namespace`);
  let name = request.name;
  if (request.operation === 'CREATE') {
    const lease = request.object;
    if (!isObjectOfKind(lease, 'Lease')) return unexpectedType(request, lease);
    name = stringAt(lease, 'metadata', 'name');
  }
  if (name !== node) return deny(request, 'can only access node lease with the same name as the requesting node');
  return allowed();
}

function admitCSINode(node: string, request: AdmissionRequest): Decision {
  let name = request.name;
  if (request.operation === 'CREATE') {
    if (!isObject(request.object) || (request.object.metadata !== undefined && !isObject(request.object.metadata))) return deny(request, 'unable to access the object name');
    name = stringAt(request.object, 'metadata', 'name');
  }
  if (name !== node) return deny(request, 'can only access CSINode with the same name as the requesting node');
  return allowed();
}

function admitResourceSlice(node: string, request: AdmissionRequest): Decision {
  if (request.operation === 'CREATE') {
    const slice = request.object;
    if (!isObjectOfKind(slice, 'ResourceSlice')) return unexpectedType(request, slice);
    if (stringAt(slice, 'spec', 'nodeName') !== node) return deny(request, 'can only create ResourceSlice with the same NodeName as the requesting node');
  }
  if (request.operation === 'DELETE') {
    const slice = request.oldObject;
    if (!isObjectOfKind(slice, 'ResourceSlice')) return unexpectedType(request, slice);
    if (stringAt(slice, 'spec', 'nodeName') !== node) return deny(request, 'can only delete ResourceSlice with the same NodeName as the requesting node');
  }
  return allowed();
}

function admitCSR(node: string, request: AdmissionRequest): Decision {
  if (request.operation !== 'CREATE') return allowed();
  const csr = request.object;
  if (!isObjectOfKind(csr, 'CertificateSigningRequest')) return unexpectedType(request, csr);
  const signer = stringAt(csr, 'spec', 'signerName');
  if (signer !== KUBELET_SERVING_SIGNER && signer !== KUBELET_CLIENT_SIGNER) return allowed();
  let commonName: string;
  try {
    ({ commonName } = parseCertificateRequestSubject(objectAt(csr, 'spec')['request']));
  } catch (error) {
    if (!(error instanceof CertificateRequestParseError)) throw error;
    return deny(request, `unable to parse csr: ${error.message}`);
  }
  if (commonName !== `${NODE_USER_PREFIX}${node}`) return deny(request, `can only create a node CSR with CN=${NODE_USER_PREFIX}${node}`);
  return allowed();
}

export default definePlugin({
  metadata: {
    upstreamName: PLUGIN,
    name: 'node-restriction',
    summary: 'Limits kubelets to their own Node, Lease, CSINode, ResourceSlices and CSRs, and to mirror pods and pods bound to themselves.',
    // Judges nodes' requests only and fails closed; learns pods' nodes and Nodes' UIDs from
    // everyone's pod and Node writes through a learning webhook that fails open (sideEffects:
    // NoneOnDryRun). An outage then stops kubelets' writes, as upstream's would, but no one else's.
    validating: { rules: RULES, failurePolicy: 'Fail', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS, matchConditions: [NODE_REQUESTS], learningMatchConditions: [OTHER_REQUESTS] },
    writes: false,
    needs: ['placements'],
    // Kubelets write their Leases in kube-node-lease and mirror pods in kube-system: exactly the
    // namespaces other plugins skip.
    systemNamespaces: 'include',
  },

  configure,

  async validate(request, { config, state }) {
    if (shouldIgnore(request)) return allowed();
    const node = nodeIdentity(request)!;
    if (node === '') return deny(request, `could not determine node from user ${q(request.userInfo.username ?? '')}`);
    switch (handledResource(request)) {
      case 'pods':
        switch (request.subResource) {
          case '':
            return admitPod(node, request, state.learnedPlacements);
          case 'status':
            return admitPodStatus(node, request);
          case 'eviction':
            return admitPodEviction(node, request, state.learnedPlacements);
          default:
            return deny(request, `unexpected pod subresource ${q(request.subResource)}, only 'status' and 'eviction' are allowed`);
        }
      case 'nodes':
        return admitNode(node, request);
      case 'persistentvolumeclaims':
        return request.subResource === 'status' ? admitPVCStatus(node, request, config) : deny(request, 'may only update PVC status');
      case 'serviceaccounts':
        return admitServiceAccount(node, request, config, state.learnedPlacements);
      case 'leases':
        return admitLease(node, request);
      case 'csinodes':
        return admitCSINode(node, request);
      case 'resourceslices':
        return admitResourceSlice(node, request);
      case 'certificatesigningrequests':
        return config.featureGates.AllowInsecureKubeletCertificateSigningRequests ? allowed() : admitCSR(node, request);
      default:
        return allowed();
    }
  },
});
