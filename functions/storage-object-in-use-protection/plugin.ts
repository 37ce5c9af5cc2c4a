// StorageObjectInUseProtection: deleting a PersistentVolumeClaim that a running pod still mounts,
// a PersistentVolume still bound to a claim, or a VolumeAttributesClass still referenced by a volume
// would pull storage out from under a workload. Each new object gets a protection finalizer at
// creation; the matching protection controller removes it once nothing uses the object, so the
// deletion completes only then. Upstream: plugin/pkg/admission/storage/storageobjectinuseprotection.
//
// Served as a mutating webhook (upstream Admit: add the finalizer) and a validating twin that checks
// the finalizer is still there once every other mutating webhook has run. Both see CREATE only, as
// upstream: the controllers remove the finalizer later with an UPDATE, which must never be refused.

import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource } from '../../lib/admission/request.js';
import { allowed, forbidden, patched } from '../../lib/admission/decision.js';
import { FieldPath, required } from '../../lib/admission/field.js';
import { definePlugin, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';

interface Protected {
  readonly group: string;
  readonly resource: string;
  readonly kind: string;
  readonly finalizer: string;
}

export const PROTECTED: readonly Protected[] = [
  {
    group: '',
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    finalizer: 'kubernetes.io/pvc-protection',
  },
  { group: '', resource: 'persistentvolumes', kind: 'PersistentVolume', finalizer: 'kubernetes.io/pv-protection' },
  // Upstream adds this one only while the VolumeAttributesClass feature gate is on; the API is only
  // served then, so the apiserver only sends these when upstream would act on them.
  {
    group: 'storage.k8s.io',
    resource: 'volumeattributesclasses',
    kind: 'VolumeAttributesClass',
    finalizer: 'kubernetes.io/vac-protection',
  },
];

// PVs and VolumeAttributesClasses are cluster-scoped, so the namespaceSelector that keeps system
// namespaces out never applies to them; it does keep kube-system's claims out, and the
// pvc-protection controller adds the finalizer to those claims itself.
const RULES = [
  {
    operations: ['CREATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['persistentvolumeclaims'],
    scope: 'Namespaced',
  },
  { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['persistentvolumes'], scope: 'Cluster' },
  {
    operations: ['CREATE'],
    apiGroups: ['storage.k8s.io'],
    apiVersions: ['v1', 'v1beta1', 'v1alpha1'],
    resources: ['volumeattributesclasses'],
    scope: 'Cluster',
  },
] as const;

/**
 * The protection that applies to this request, or undefined for other operations, resources and
 * subresources (persistentvolumeclaims/status...).
 */
function protectionFor(request: AdmissionRequest): Protected | undefined {
  if (request.operation !== 'CREATE') return undefined;
  return PROTECTED.find((p) => isMainResource(request, p.group, p.resource));
}

function finalizersOf(object: KubeObject): unknown[] {
  const finalizers = object.metadata?.finalizers;
  return Array.isArray(finalizers) ? finalizers : [];
}

/** The object that needs the finalizer; undefined when there is nothing to do (as upstream). */
function unprotectedObject(request: AdmissionRequest): { object: KubeObject; protection: Protected } | undefined {
  const protection = protectionFor(request);
  if (protection === undefined) return undefined;
  const object = request.object;
  // Upstream returns without a word when the object is not of the expected type.
  if (!isObjectOfKind<KubeObject>(object, protection.kind)) return undefined;
  if (object.metadata !== undefined && (object.metadata === null || typeof object.metadata !== 'object'))
    return undefined;
  if (finalizersOf(object).includes(protection.finalizer)) return undefined;
  return { object, protection };
}

export default definePlugin({
  metadata: {
    upstreamName: 'StorageObjectInUseProtection',
    name: 'storage-object-in-use-protection',
    summary:
      'Adds the pvc-protection, pv-protection or vac-protection finalizer to new PersistentVolumeClaims, PersistentVolumes and VolumeAttributesClasses.',
    // The twin fails open: with Fail, a webhook outage would stop new objects of this kind (Nodes
    // could not register), while the in-cluster controller adds the same taint or finalizer anyway.
    ...mutatingWithTwin(RULES, { twinFailurePolicy: 'Ignore' }),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  admit(request) {
    const unprotected = unprotectedObject(request);
    if (unprotected === undefined) return allowed();
    const { object, protection } = unprotected;
    // Copies only the path that changes.
    return patched({
      ...object,
      metadata: { ...object.metadata, finalizers: [...finalizersOf(object), protection.finalizer] as string[] },
    });
  },

  validate(request) {
    const unprotected = unprotectedObject(request);
    if (unprotected === undefined) return allowed();
    const detail = `a new ${unprotected.protection.kind} must carry the ${JSON.stringify(unprotected.protection.finalizer)} finalizer`;
    return forbidden(request, [required(FieldPath.of('metadata', 'finalizers'), detail)]);
  },
});
