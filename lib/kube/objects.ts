// What upstream's type assertion on a decoded object (`obj.(*core.Pod)`) means for an object that
// arrives as JSON, how Go's %T would print the object when the assertion fails, so that the rare
// "not the type you said" answers read as upstream's, and how Go reads a field of it: an absent
// or mistyped field reads as the zero value.
import type { KubeObject } from '../admission/types.js';
import { isObjectOfKind, isPlainObject } from '../admission/types.js';

/** A JSON object read as Go reads a struct. */
export type JsonObject = Record<string, unknown>;

/** A field that is set: Go's `!= nil` on a pointer, slice or map. */
export const isPresent = (value: unknown): boolean => value !== undefined && value !== null;

/** The object at `path`, or {} when any step is absent or not an object. */
export function objectAt(value: unknown, ...path: string[]): JsonObject {
  let at: unknown = value;
  for (const key of path) at = isPlainObject(at) ? at[key] : undefined;
  return isPlainObject(at) ? at : {};
}

/** The string at `path`, or '' (Go's zero value) when it is absent or not a string. */
export function stringAt(value: unknown, ...path: string[]): string {
  const field = objectAt(value, ...path.slice(0, -1))[path[path.length - 1]];
  return typeof field === 'string' ? field : '';
}

/** The list at `path`, or [] when it is absent or not a list. */
export function listAt(value: unknown, ...path: string[]): unknown[] {
  const field = objectAt(value, ...path.slice(0, -1))[path[path.length - 1]];
  return Array.isArray(field) ? field : [];
}

export { isObjectOfKind };

/** isObjectOfKind as a type guard, for ObjectGuard.accepts. */
export function ofKind<T extends KubeObject>(kind: string): (object: unknown) => object is T {
  return (object: unknown): object is T => isObjectOfKind<T>(object, kind);
}

// API groups without a dot whose internal types live in a package of the same name.
const UNDOTTED_BUILT_IN_GROUPS = new Set(['apps', 'autoscaling', 'batch', 'policy']);

/**
 * Go's `%T` of the internal object the apiserver would have decoded: `*core.Service`,
 * `*apps.Deployment`, `*unstructured.Unstructured` for custom resources, `<nil>` for none.
 */
export function goTypeName(object: Readonly<KubeObject> | null): string {
  if (object === null) return '<nil>';
  const kind = typeof object.kind === 'string' && object.kind !== '' ? object.kind : 'Unknown';
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : 'v1';
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return `*core.${kind}`;
  const group = apiVersion.slice(0, slash);
  if (UNDOTTED_BUILT_IN_GROUPS.has(group)) return `*${group}.${kind}`;
  if (group.endsWith('.k8s.io')) return `*${group.slice(0, group.indexOf('.'))}.${kind}`;
  return '*unstructured.Unstructured';
}
