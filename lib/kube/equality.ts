// apimachinery's Semantic.DeepEqual as it shows on JSON, and a stand-in for Go's cmp.Diff that
// names where two objects differ.
import { isPlainObject } from '../admission/types.js';

/**
 * The zero-value blind form of a JSON value: an absent field, null, "", 0, false, [] and {} all
 * read as the Go zero value, and empty and nil slices and maps are equal. (Quantities are compared
 * as written.)
 */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map((v) => normalized(v) ?? null);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = normalized(value[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  if (value === null || value === '' || value === 0 || value === false) return undefined;
  return value;
}

/** Semantic.DeepEqual of two decoded objects. */
export function semanticallyEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalized(a)) === JSON.stringify(normalized(b));
}

/** The dotted JSON paths where two values differ semantically, standing in for Go's cmp.Diff. */
export function differingPaths(a: unknown, b: unknown, path = ''): string[] {
  if (semanticallyEqual(a, b)) return [];
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => differingPaths(a[k], b[k], path === '' ? k : `${path}.${k}`));
  }
  return [path === '' ? '(object)' : path];
}
