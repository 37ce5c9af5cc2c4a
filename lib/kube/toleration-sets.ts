// Sets of tolerations as upstream's pkg/util/tolerations compares them: one toleration is a
// superset of another when it tolerates every taint the other does. PodTolerationRestriction
// merges a namespace's default tolerations into a pod's with it and checks a pod's tolerations
// against a whitelist with it, so the rules here decide what tenants may run where.
import type { Toleration } from './tolerations.js';

/** Semantic equality of two tolerations: absent strings are empty, an absent tolerationSeconds is nil. */
export function equalTolerations(a: Readonly<Toleration>, b: Readonly<Toleration>): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? '') === (b.operator ?? '') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null)
  );
}

/** Whether `ss` tolerates every taint that `t` tolerates. */
export function isSuperset(ss: Readonly<Toleration>, t: Readonly<Toleration>): boolean {
  if (equalTolerations(ss, t)) return true;
  const ssKey = ss.key ?? '';
  // An empty key with the Exists operator matches every key and value.
  if ((t.key ?? '') !== ssKey && (ssKey !== '' || ss.operator !== 'Exists')) return false;
  // An empty effect matches every effect.
  const ssEffect = ss.effect ?? '';
  if ((t.effect ?? '') !== ssEffect && ssEffect !== '') return false;
  if (ssEffect === 'NoExecute' && ss.tolerationSeconds !== undefined && ss.tolerationSeconds !== null) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null || t.tolerationSeconds > ss.tolerationSeconds)
      return false;
  }
  switch (ss.operator ?? '') {
    case 'Equal':
    case '': // an empty operator means Equal
      return t.operator === 'Equal' && (t.value ?? '') === (ss.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/**
 * MergeTolerations: `first` then `second`, keeping only tolerations that no other one in the
 * result (or later in the input) already covers. Of two equal tolerations the first is kept.
 */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => isSuperset(kept, t))) return;
    if (all.slice(i + 1).some((later) => !equalTolerations(t, later) && isSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}

/** VerifyAgainstWhitelist: every toleration is covered by one of the whitelist's. */
export function verifyAgainstWhitelist(tolerations: readonly Toleration[], whitelist: readonly Toleration[]): boolean {
  if (whitelist.length === 0 || tolerations.length === 0) return true;
  return tolerations.every((t) => whitelist.some((w) => isSuperset(w, t)));
}
