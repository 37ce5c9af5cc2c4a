// DefaultStorageClass: a PersistentVolumeClaim that names no StorageClass gets the cluster's
// default one, so users need not know which provisioner the cluster runs. Upstream:
// plugin/pkg/admission/storage/storageclass/setdefault.
//
// Upstream lists StorageClasses from an informer; here they are the StorageClasses this plugin's
// learning webhook saw written, and those `npm run sync` loaded (run it first: a default class
// created before the webhook was installed is otherwise unknown). With no learned default, a claim
// is left as it is, as upstream leaves it when the cluster has none.
//
// Served as upstream's Admit (a mutating webhook, CREATE of claims) and a twin of our own that
// refuses only what the mutation would have fixed: a new claim still without a class while a
// default is known (a later mutating webhook removed it). The twin fails open: a default class is
// a convenience, not a boundary.

import { allowed, forbidden, patched } from '../../lib/admission/decision.js';
import { FieldPath, required } from '../../lib/admission/field.js';
import type { ObjectGuard, PluginContext } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { LearnedObject } from '../../lib/admission/ports.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { claimHasClass, isDefaultStorageClass, newestDefault } from '../../lib/kube/classes.js';
import { ofKind } from '../../lib/kube/objects.js';

const NEW_CLAIMS = judgedResource(['CREATE'], '', 'persistentvolumeclaims', 'Namespaced');

const CLAIMS: ObjectGuard<KubeObject> = {
  ignore: NEW_CLAIMS.ignore,
  accepts: ofKind<KubeObject>('PersistentVolumeClaim'),
  // "if we can't convert then we don't handle this object so just return"
  otherwise: () => allowed(),
};

async function defaultClass({ state }: PluginContext<undefined>): Promise<LearnedObject | undefined> {
  return newestDefault(await state.learnedObjects.list('storageclasses'), isDefaultStorageClass);
}

export default definePlugin({
  metadata: {
    upstreamName: 'DefaultStorageClass',
    name: 'default-storage-class',
    summary: 'Sets the default StorageClass on PersistentVolumeClaims that name none (learned StorageClasses).',
    ...mutatingWithTwin(NEW_CLAIMS.rules, { twinFailurePolicy: 'Ignore' }),
    writes: false,
    needs: ['storageclasses'],
    systemNamespaces: 'exclude',
  },

  admit: guardedPhase(CLAIMS, async (claim, _request, context) => {
    // The user asked for a class (even "", which means none).
    if (claimHasClass(claim)) return allowed();
    const def = await defaultClass(context);
    if (!def) return allowed();
    return patched({ ...claim, spec: { ...(claim.spec as object | undefined), storageClassName: def.name } });
  }),

  validate: guardedPhase(CLAIMS, async (claim, request, context) => {
    if (claimHasClass(claim)) return allowed();
    const def = await defaultClass(context);
    if (!def) return allowed();
    const error = required(
      FieldPath.of('spec', 'storageClassName'),
      `the default StorageClass ${JSON.stringify(def.name)} was not set (DefaultStorageClass sets it)`,
    );
    return forbidden(request, [error]);
  }),
});
