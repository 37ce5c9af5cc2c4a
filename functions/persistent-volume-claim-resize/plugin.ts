// PersistentVolumeClaimResize: a claim may grow only when it is bound and its StorageClass says
// `allowVolumeExpansion: true`, so users cannot ask for an expansion no provisioner will carry out
// (the claim would stay in a resize state forever). Upstream:
// plugin/pkg/admission/storage/persistentvolume/resize.
//
// Upstream reads the StorageClass from an informer; here it is the StorageClasses this plugin's
// learning webhook saw written, and those `npm run sync` loaded. A class never learned is treated
// as upstream treats a lister miss: the expansion is refused (run `npm run sync` first, or every
// expansion of a claim whose class predates the webhook is refused until the class is next written).

import { allowed, forbidden } from '../../lib/admission/decision.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, validatingOnly } from '../../lib/admission/plugin.js';
import type { PluginState } from '../../lib/admission/ports.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { claimClass } from '../../lib/kube/classes.js';
import { isObjectOfKind, ofKind } from '../../lib/kube/objects.js';
import { Quantity } from '../../lib/kube/quantity.js';

const CLAIM_UPDATES = judgedResource(['UPDATE'], '', 'persistentvolumeclaims', 'Namespaced');

const CLAIMS: ObjectGuard<KubeObject> = {
  ignore: CLAIM_UPDATES.ignore,
  accepts: ofKind<KubeObject>('PersistentVolumeClaim'),
  // "if we can't convert then we don't handle this object so just return"
  otherwise: () => allowed(),
};

const NOT_BOUND = 'Only bound persistent volume claims can be expanded';
const NOT_EXPANDABLE =
  'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';

/** spec.resources.requests.storage; absent is zero, as a missing map key in Go. */
function requestedStorage(claim: KubeObject): Quantity | undefined {
  const requests = (claim.spec as { resources?: { requests?: Record<string, unknown> } } | undefined)?.resources
    ?.requests;
  const storage = requests?.storage;
  if (storage === undefined || storage === null) return Quantity.zero();
  try {
    return Quantity.parse(String(storage));
  } catch {
    return undefined; // an object upstream could not have decoded: not judged
  }
}

/** Upstream's allowResize: the same class before and after, learned, with allowVolumeExpansion true. */
async function allowResize(claim: KubeObject, old: KubeObject, state: PluginState): Promise<boolean> {
  const [name, oldName] = [claimClass(claim), claimClass(old)];
  if (name === '' || oldName === '' || name !== oldName) return false;
  const learned = await state.learnedObjects.get('storageclasses', name);
  return learned?.object.allowVolumeExpansion === true;
}

export default definePlugin({
  metadata: {
    upstreamName: 'PersistentVolumeClaimResize',
    name: 'persistent-volume-claim-resize',
    summary:
      'Refuses growing a PersistentVolumeClaim that is not bound or whose StorageClass does not allow expansion.',
    ...validatingOnly(CLAIM_UPDATES.rules),
    writes: false,
    needs: ['storageclasses'],
    systemNamespaces: 'exclude',
  },

  validate: guardedPhase(CLAIMS, async (claim, request, { state }) => {
    const old = request.oldObject;
    if (!isObjectOfKind(old, 'PersistentVolumeClaim')) return allowed();
    const [oldSize, newSize] = [requestedStorage(old), requestedStorage(claim)];
    if (!oldSize || !newSize || newSize.cmp(oldSize) <= 0) return allowed();
    const phase = (old.status as { phase?: unknown } | undefined)?.phase;
    if (phase !== 'Bound') return forbidden(request, [NOT_BOUND]);
    // Growing persistent volumes is only allowed for claims whose StorageClass explicitly allows it.
    if (!(await allowResize(claim, old, state))) return forbidden(request, [NOT_EXPANDABLE]);
    return allowed();
  }),
});
