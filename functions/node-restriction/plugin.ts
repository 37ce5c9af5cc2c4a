// NodeRestriction: every kubelet holds credentials, and a node that is compromised must not become
// a cluster compromise. The Node authorizer limits which objects a kubelet may touch at all; this
// plugin limits what it may write into them: only its own Node (no taints, no owner references,
// no labels that steer privileged workloads), only mirror pods bound to itself that reference no
// other API object, only its own Lease, CSINode, ResourceSlices and node CSRs, and pod status,
// deletion and eviction only for pods bound to itself.
//
// Upstream: plugin/pkg/admission/noderestriction/admission.go; the decisions below follow its
// order. Upstream reads the apiserver's pod and Node informers, where a webhook has the request
// and what it learned from earlier ones (`needs: ['placements']`); docs/plugins/node-restriction.md
// lists where that makes the answers differ.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, notFound } from '../../lib/admission/decision.js';
import { goQuote } from '../../lib/admission/field.js';
import type { PhaseFunction } from '../../lib/admission/plugin.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { LearnedPlacements } from '../../lib/admission/ports.js';
import { isPlainObject } from '../../lib/admission/types.js';
import { ConfigFields } from '../../lib/config/fields.js';
import { CertificateRequestParseError, parseCertificateRequestSubject } from '../../lib/kube/csr.js';
import { differingPaths, semanticallyEqual } from '../../lib/kube/equality.js';
import {
  inLabelDomain,
  isKubeletLabel,
  labelNamespace,
  NODE_USER_PREFIX,
  nodeIdentity,
} from '../../lib/kube/kubelet.js';
import type { JsonObject } from '../../lib/kube/objects.js';
import { goTypeName, isObjectOfKind, isPresent, listAt, objectAt, stringAt } from '../../lib/kube/objects.js';
import { visitPodConfigMapNames, visitPodSecretNames } from '../../lib/kube/pod.js';

const PLUGIN = 'NodeRestriction';
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
  const gates = ConfigFields.of(PLUGIN, raw, 'an object with featureGates').allow('featureGates').child('featureGates');
  if (gates === undefined) return { featureGates };
  const names = Object.keys(FEATURE_GATE_DEFAULTS) as FeatureGate[];
  gates.allow(...names);
  for (const gate of names) featureGates[gate] = gates.boolean(gate, FEATURE_GATE_DEFAULTS[gate]);
  return { featureGates };
}

// Every authenticated request has a username; `has` keeps a request without one from erroring
// the condition (an error would apply failurePolicy).
const IS_NODE_USER = "has(request.userInfo.username) && request.userInfo.username.startsWith('system:node:')";
const NODE_REQUESTS = { name: 'node-requests', expression: IS_NODE_USER };

const ALL_WRITES = ['CREATE', 'UPDATE', 'DELETE'] as const;
// Leases are judged by admitLease like upstream, but no rule sends them: the project's webhook
// practice keeps webhooks off Leases, because an unreachable webhook with failurePolicy Fail would
// stop every kubelet's heartbeat and mark every node NotReady. An operator who accepts that risk
// adds {coordination.k8s.io, leases, CREATE/UPDATE/DELETE} to the emitted rule by hand.
const RULES = [
  {
    operations: ALL_WRITES,
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['pods', 'pods/*', 'nodes', 'nodes/*', 'persistentvolumeclaims', 'persistentvolumeclaims/*'],
    scope: '*',
  },
  {
    operations: ['CREATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['serviceaccounts/token'],
    scope: 'Namespaced',
  },
  {
    operations: ALL_WRITES,
    apiGroups: ['storage.k8s.io'],
    apiVersions: ['*'],
    resources: ['csinodes'],
    scope: 'Cluster',
  },
  {
    operations: ['CREATE', 'DELETE'],
    apiGroups: ['resource.k8s.io'],
    apiVersions: ['*'],
    resources: ['resourceslices'],
    scope: 'Cluster',
  },
  {
    operations: ['CREATE'],
    apiGroups: ['certificates.k8s.io'],
    apiVersions: ['*'],
    resources: ['certificatesigningrequests'],
    scope: 'Cluster',
  },
] as const;

type Handled =
  | 'pods'
  | 'nodes'
  | 'persistentvolumeclaims'
  | 'serviceaccounts'
  | 'leases'
  | 'csinodes'
  | 'resourceslices'
  | 'certificatesigningrequests';
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

const q = goQuote;
const deny = (request: AdmissionRequest, message: string) => forbidden(request, [message]);
const unexpectedType = (request: AdmissionRequest, object: Readonly<KubeObject> | null) =>
  deny(request, `unexpected type ${goTypeName(object)}`);

/** Upstream's Admit. CONNECT, resources upstream does not look at, and anyone but a node pass. */
const validate: PhaseFunction<NodeRestrictionConfig> = async (request, { config, state }) => {
  const resource = HANDLED[`${request.resource.group}/${request.resource.resource}`];
  if (request.operation === 'CONNECT' || resource === undefined) return allowed();
  const node = nodeIdentity(request.userInfo);
  // Our job is just to restrict nodes.
  if (node === undefined) return allowed();
  if (node === '') return deny(request, `could not determine node from user ${q(request.userInfo.username ?? '')}`);
  switch (resource) {
    case 'pods':
      switch (request.subResource) {
        case '':
          return admitPod(node, request, state.learnedPlacements);
        case 'status':
          return admitPodStatus(node, request);
        case 'eviction':
          return admitPodEviction(node, request, state.learnedPlacements);
        default:
          return deny(
            request,
            `unexpected pod subresource ${q(request.subResource)}, only 'status' and 'eviction' are allowed`,
          );
      }
    case 'nodes':
      return admitNode(node, request);
    case 'persistentvolumeclaims':
      return request.subResource === 'status'
        ? admitPVCStatus(node, request, config)
        : deny(request, 'may only update PVC status');
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
  }
};

/** The pod's spec.nodeName from the stored pod the request carries, else as learned; undefined: not found. */
async function storedPodNode(
  request: AdmissionRequest,
  podName: string,
  placements: LearnedPlacements,
): Promise<string | undefined> {
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
      if (podNode !== node)
        return deny(request, `node ${q(node)} can only delete pods with spec.nodeName set to itself`);
      return allowed();
    }
    default:
      return deny(
        request,
        `unexpected operation ${q(request.operation)}, node ${q(node)} can only create and delete mirror pods`,
      );
  }
}

async function admitPodCreate(
  node: string,
  request: AdmissionRequest,
  placements: LearnedPlacements,
): Promise<Decision> {
  const pod = request.object;
  if (!isObjectOfKind(pod, 'Pod')) return unexpectedType(request, pod);
  if (!(MIRROR_POD_ANNOTATION in objectAt(pod, 'metadata', 'annotations'))) {
    return deny(
      request,
      `pod does not have ${q(MIRROR_POD_ANNOTATION)} annotation, node ${q(node)} can only create mirror pods`,
    );
  }
  const spec = objectAt(pod, 'spec');
  if (stringAt(spec, 'nodeName') !== node)
    return deny(request, `node ${q(node)} can only create pods with spec.nodeName set to itself`);
  const owners = listAt(pod, 'metadata', 'ownerReferences');
  if (owners.length > 1)
    return deny(request, `node ${q(node)} can only create pods with a single owner reference set to itself`);
  if (owners.length === 0)
    return deny(request, `node ${q(node)} can only create pods with an owner reference set to itself`);
  const owner = objectAt(owners[0]);
  if (
    stringAt(owner, 'apiVersion') !== 'v1' ||
    stringAt(owner, 'kind') !== 'Node' ||
    stringAt(owner, 'name') !== node
  ) {
    return deny(request, `node ${q(node)} can only create pods with an owner reference set to itself`);
  }
  if (owner.controller !== true)
    return deny(request, `node ${q(node)} can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true)
    return deny(request, `node ${q(node)} must not set blockOwnerDeletion on an owner reference`);
  const known = await placements.node(node);
  if (known === undefined) return notFound('nodes', node);
  // Upstream's wording: "expected" is the owner reference's UID, "got" the Node's.
  if (stringAt(owner, 'uid') !== known.uid)
    return deny(request, `node ${node} UID mismatch: expected ${stringAt(owner, 'uid')} got ${known.uid}`);

  // No reference to any other API object.
  if (stringAt(spec, 'serviceAccountName') !== '')
    return deny(request, `node ${q(node)} can not create pods that reference a service account`);
  if (!visitPodSecretNames(spec, () => false))
    return deny(request, `node ${q(node)} can not create pods that reference secrets`);
  if (!visitPodConfigMapNames(spec, () => false))
    return deny(request, `node ${q(node)} can not create pods that reference configmaps`);
  const volumes = listAt(spec, 'volumes').map((v) => objectAt(v));
  if (volumes.some((v) => listAt(v, 'projected', 'sources').some((s) => isPresent(objectAt(s).clusterTrustBundle)))) {
    return deny(request, `node ${q(node)} can not create pods that reference clustertrustbundles`);
  }
  if (volumes.some((v) => isPresent(v.persistentVolumeClaim)))
    return deny(request, `node ${q(node)} can not create pods that reference persistentvolumeclaims`);
  return allowed();
}

function admitPodStatus(node: string, request: AdmissionRequest): Decision {
  if (request.operation !== 'UPDATE') return deny(request, `unexpected operation ${q(request.operation)}`);
  const oldPod = request.oldObject;
  if (!isObjectOfKind(oldPod, 'Pod')) return unexpectedType(request, oldPod);
  if (stringAt(oldPod, 'spec', 'nodeName') !== node)
    return deny(request, `node ${q(node)} can only update pod status for pods with spec.nodeName set to itself`);
  const newPod = request.object;
  if (!isObjectOfKind(newPod, 'Pod')) return unexpectedType(request, newPod);
  if (modifiedLabels(objectAt(oldPod, 'metadata', 'labels'), objectAt(newPod, 'metadata', 'labels')).size > 0) {
    return deny(request, `node ${q(node)} cannot update labels through pod status`);
  }
  if (
    !resourceClaimStatusesEqual(
      listAt(oldPod, 'status', 'resourceClaimStatuses'),
      listAt(newPod, 'status', 'resourceClaimStatuses'),
    )
  ) {
    return deny(request, `node ${q(node)} cannot update resource claim statues`);
  }
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
    if (isPresent(claimX) !== isPresent(claimY)) return false;
    return !isPresent(claimX) || claimX === claimY;
  });
}

async function admitPodEviction(
  node: string,
  request: AdmissionRequest,
  placements: LearnedPlacements,
): Promise<Decision> {
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

/** A copy of the claim without what a node may change, nor what an update may leave out. */
function withoutNodeWritableFields(pvc: KubeObject, recoveryEnabled: boolean): JsonObject {
  const copy = structuredClone(pvc) as JsonObject;
  const meta = objectAt(copy, 'metadata');
  delete meta.resourceVersion;
  delete meta.managedFields;
  const status = objectAt(copy, 'status');
  for (const field of PVC_STATUS_FIELDS_NODES_MAY_CHANGE) delete status[field];
  if (recoveryEnabled) for (const field of PVC_RECOVERY_FIELDS) delete status[field];
  return copy;
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
  return deny(
    request,
    `node ${q(node)} is not allowed to update fields other than status.quantity and status.conditions: changed ${differingPaths(before, after).join(', ')}`,
  );
}

function admitNode(node: string, request: AdmissionRequest): Decision {
  if (request.name !== node) return deny(request, `node ${q(node)} is not allowed to modify node ${q(request.name)}`);
  if (request.operation === 'CREATE') {
    const object = request.object;
    if (!isObjectOfKind(object, 'Node')) return unexpectedType(request, object);
    if (isPresent(objectAt(object, 'spec').configSource))
      return deny(request, `node ${q(node)} is not allowed to create pods with a non-nil configSource`);
    const labels = forbiddenLabels(modifiedLabels(objectAt(object, 'metadata', 'labels'), undefined));
    if (labels.length > 0)
      return deny(request, `node ${q(node)} is not allowed to set the following labels: ${labels.join(', ')}`);
  }
  if (request.operation === 'UPDATE') {
    const object = request.object;
    if (!isObjectOfKind(object, 'Node')) return unexpectedType(request, object);
    const old = request.oldObject;
    // Upstream prints the new object's type here too.
    if (!isObjectOfKind(old, 'Node')) return unexpectedType(request, object);
    const configSource = objectAt(object, 'spec').configSource;
    if (isPresent(configSource) && !semanticallyEqual(configSource, objectAt(old, 'spec').configSource)) {
      return deny(request, `node ${q(node)} is not allowed to update configSource to a new non-nil configSource`);
    }
    if (!semanticallyEqual(objectAt(object, 'spec').taints, objectAt(old, 'spec').taints))
      return deny(request, `node ${q(node)} is not allowed to modify taints`);
    if (!semanticallyEqual(objectAt(object, 'metadata').ownerReferences, objectAt(old, 'metadata').ownerReferences)) {
      return deny(request, `node ${q(node)} is not allowed to modify ownerReferences`);
    }
    const labels = forbiddenLabels(
      modifiedLabels(objectAt(object, 'metadata', 'labels'), objectAt(old, 'metadata', 'labels')),
    );
    if (labels.length > 0) return deny(request, `is not allowed to modify labels: ${labels.join(', ')}`);
  }
  // DELETE of its own Node passes here, as upstream: the Node authorizer no longer grants it.
  return allowed();
}

/** getModifiedLabels: keys added, removed or changed between two label maps. */
export function modifiedLabels(a: unknown, b: unknown): Set<string> {
  const left = isPlainObject(a) ? a : {};
  const right = isPlainObject(b) ? b : {};
  const modified = new Set<string>();
  for (const [k, v] of Object.entries(left)) if (!(k in right) || right[k] !== v) modified.add(k);
  for (const [k, v] of Object.entries(right)) if (!(k in left) || left[k] !== v) modified.add(k);
  return modified;
}

/** getForbiddenLabels, sorted as sets.String.List() sorts. */
function forbiddenLabels(modified: Set<string>): string[] {
  const result = [...modified].filter((label) => {
    const namespace = labelNamespace(label);
    if (inLabelDomain(namespace, NODE_RESTRICTION_LABEL_NAMESPACE)) return true;
    return (inLabelDomain(namespace, 'kubernetes.io') || inLabelDomain(namespace, 'k8s.io')) && !isKubeletLabel(label);
  });
  return result.sort();
}

async function admitServiceAccount(
  node: string,
  request: AdmissionRequest,
  config: NodeRestrictionConfig,
  placements: LearnedPlacements,
): Promise<Decision> {
  if (request.operation !== 'CREATE' || request.subResource !== 'token') return allowed();
  const tokenRequest = request.object;
  if (!isObjectOfKind(tokenRequest, 'TokenRequest')) return unexpectedType(request, tokenRequest);
  const ref = objectAt(tokenRequest, 'spec', 'boundObjectRef');
  if (
    !isPresent(objectAt(tokenRequest, 'spec').boundObjectRef) ||
    stringAt(ref, 'apiVersion') !== 'v1' ||
    stringAt(ref, 'kind') !== 'Pod' ||
    stringAt(ref, 'name') === ''
  ) {
    return deny(request, 'node requested token not bound to a pod');
  }
  const uid = stringAt(ref, 'uid');
  if (uid === '') return deny(request, 'node requested token with a pod binding without a uid');
  // A pod not learned yet is allowed (docs/plugins/node-restriction.md); upstream answers NotFound.
  const pod = await placements.pod(request.namespace, stringAt(ref, 'name'));
  if (pod !== undefined) {
    if (pod.uid !== '' && pod.uid !== uid) {
      return deny(
        request,
        `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (pod.nodeName !== node)
      return deny(request, 'node requested token bound to a pod scheduled on a different node');
  }
  if (
    config.featureGates.ServiceAccountNodeAudienceRestriction &&
    listAt(tokenRequest, 'spec', 'audiences').length > 1
  ) {
    return deny(request, 'node may only request 0 or 1 audiences');
  }
  return allowed();
}

function admitLease(node: string, request: AdmissionRequest): Decision {
  if (request.namespace !== NODE_LEASE_NAMESPACE)
    return deny(request, `can only access leases in the ${q(NODE_LEASE_NAMESPACE)} system namespace`);
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
    if (
      !isPlainObject(request.object) ||
      (request.object.metadata !== undefined && !isPlainObject(request.object.metadata))
    )
      return deny(request, 'unable to access the object name');
    name = stringAt(request.object, 'metadata', 'name');
  }
  if (name !== node) return deny(request, 'can only access CSINode with the same name as the requesting node');
  return allowed();
}

function admitResourceSlice(node: string, request: AdmissionRequest): Decision {
  if (request.operation === 'CREATE') {
    const slice = request.object;
    if (!isObjectOfKind(slice, 'ResourceSlice')) return unexpectedType(request, slice);
    if (stringAt(slice, 'spec', 'nodeName') !== node)
      return deny(request, 'can only create ResourceSlice with the same NodeName as the requesting node');
  }
  if (request.operation === 'DELETE') {
    const slice = request.oldObject;
    if (!isObjectOfKind(slice, 'ResourceSlice')) return unexpectedType(request, slice);
    if (stringAt(slice, 'spec', 'nodeName') !== node)
      return deny(request, 'can only delete ResourceSlice with the same NodeName as the requesting node');
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
    ({ commonName } = parseCertificateRequestSubject(objectAt(csr, 'spec').request));
  } catch (error) {
    if (!(error instanceof CertificateRequestParseError)) throw error;
    return deny(request, `unable to parse csr: ${error.message}`);
  }
  if (commonName !== `${NODE_USER_PREFIX}${node}`)
    return deny(request, `can only create a node CSR with CN=${NODE_USER_PREFIX}${node}`);
  return allowed();
}

export default definePlugin({
  metadata: {
    upstreamName: PLUGIN,
    name: 'node-restriction',
    summary:
      'Limits kubelets to their own Node, Lease, CSINode, ResourceSlices and CSRs, and to mirror pods and pods bound to themselves.',
    // Judges nodes' requests only and fails closed; learns pods' nodes and Nodes' UIDs from
    // everyone's pod and Node writes through a learning webhook that fails open (sideEffects:
    // NoneOnDryRun). An outage then stops kubelets' writes, as upstream's would, but no one else's.
    validating: {
      rules: RULES,
      failurePolicy: 'Fail',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
      matchConditions: [NODE_REQUESTS],
    },
    writes: false,
    needs: ['placements'],
    // Kubelets write their Leases in kube-node-lease and mirror pods in kube-system: exactly the
    // namespaces other plugins skip.
    systemNamespaces: 'include',
  },

  configure,

  validate,
});
