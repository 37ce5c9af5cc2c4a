// What the class-defaulting plugins share: which learned class is the default, and what class a
// PersistentVolumeClaim asks for (k8s.io/kubernetes pkg/apis/core/helper, pkg/apis/storage/util).
import type { LearnedObject } from '../admission/ports.js';
import type { KubeObject } from '../admission/types.js';

/** storageutil.IsDefaultStorageClassAnnotation and its beta twin. */
export const IS_DEFAULT_STORAGE_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const BETA_IS_DEFAULT_STORAGE_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
/** api.BetaStorageClassAnnotation: a claim's class before spec.storageClassName. */
export const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

const annotationsOf = (object: KubeObject | null | undefined): Record<string, unknown> =>
  (object?.metadata?.annotations as Record<string, unknown> | undefined) ?? {};

/** storageutil.IsDefaultAnnotation: either annotation, exactly "true". */
export function isDefaultStorageClass(object: KubeObject): boolean {
  const annotations = annotationsOf(object);
  return annotations[IS_DEFAULT_STORAGE_CLASS] === 'true' || annotations[BETA_IS_DEFAULT_STORAGE_CLASS] === 'true';
}

const specOf = (claim: KubeObject) => (claim.spec ?? {}) as { storageClassName?: unknown };

/** helper.PersistentVolumeClaimHasClass: the beta annotation or spec.storageClassName set (even to ""). */
export function claimHasClass(claim: KubeObject): boolean {
  if (Object.hasOwn(annotationsOf(claim), BETA_STORAGE_CLASS)) return true;
  const name = specOf(claim).storageClassName;
  return name !== undefined && name !== null;
}

/** helper.GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "". */
export function claimClass(claim: KubeObject): string {
  const annotations = annotationsOf(claim);
  if (Object.hasOwn(annotations, BETA_STORAGE_CLASS)) {
    const value = annotations[BETA_STORAGE_CLASS];
    return typeof value === 'string' ? value : '';
  }
  const name = specOf(claim).storageClassName;
  return typeof name === 'string' ? name : '';
}

/** metav1.Time in milliseconds; an absent or unreadable one is Go's zero time (oldest). */
function createdAt(object: KubeObject): number {
  const at = object.metadata?.creationTimestamp;
  const ms = typeof at === 'string' ? Date.parse(at) : Number.NaN;
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

/**
 * Upstream's getDefaultClass since 1.26: of the classes marked default, the newest (creation
 * time), ties broken by the lower name; undefined when none is marked. Several defaults are not an
 * error (they are while a default is being replaced). Timestamps on the wire have whole seconds,
 * which is all a webhook can compare.
 */
export function newestDefault(
  classes: readonly LearnedObject[],
  isDefault: (object: KubeObject) => boolean,
): LearnedObject | undefined {
  const defaults = classes.filter((c) => isDefault(c.object));
  defaults.sort((a, b) => {
    const [ta, tb] = [createdAt(a.object), createdAt(b.object)];
    if (ta === tb) return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    return ta > tb ? -1 : 1;
  });
  return defaults[0];
}
