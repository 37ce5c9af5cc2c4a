// Toleration helpers shared by the plugins that add tolerations to pods, with upstream's notion of
// when two tolerations are "the same" (pkg/apis/core: Toleration.MatchToleration).
import type { Toleration } from 'kubernetes-types/core/v1.js';
import { isPlainObject } from '../admission/types.js';

export type { Toleration };

/** An entry that can be read as a toleration (a hostile review may hold anything). */
export function isToleration(value: unknown): value is Toleration {
  return isPlainObject(value);
}

/** A pod's tolerations, or none when the field is absent or not a list. */
export function tolerationsOf(spec: { tolerations?: unknown } | undefined): Toleration[] {
  return Array.isArray(spec?.tolerations) ? (spec.tolerations as Toleration[]) : [];
}

/** Tolerations are unique by key, effect, operator and value; absent and empty are the same. */
export function matchToleration(a: Readonly<Toleration>, b: Readonly<Toleration>): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.operator ?? '') === (b.operator ?? '') &&
    (a.value ?? '') === (b.value ?? '')
  );
}

/**
 * helper.AddOrUpdateTolerationInPod: `toleration` replaces every toleration that matches it, or is
 * appended when none does. Returns the new list, or undefined when nothing would change.
 *
 * Upstream compares a pointer with a value before replacing, so it always replaces a match; the
 * only field a match can differ in is tolerationSeconds, so a match that already agrees on it is
 * kept as it is (no patch churn over `value: ""` against an absent value).
 */
export function addOrUpdateToleration(
  tolerations: readonly Toleration[] | undefined,
  toleration: Readonly<Toleration>,
): Toleration[] | undefined {
  const current = Array.isArray(tolerations) ? tolerations : [];
  let matched = false;
  let changed = false;
  const next = current.map((existing) => {
    if (!isToleration(existing) || !matchToleration(toleration, existing)) return existing;
    matched = true;
    if ((existing.tolerationSeconds ?? null) === (toleration.tolerationSeconds ?? null)) return existing;
    changed = true;
    return { ...toleration };
  });
  if (!matched) {
    next.push({ ...toleration });
    changed = true;
  }
  return changed ? next : undefined;
}
