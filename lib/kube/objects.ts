// What upstream's type assertion on a decoded object (`obj.(*core.Pod)`) means for an object that
// arrives as JSON, and how Go's %T would print the object when the assertion fails, so that the
// rare "not the type you said" answers read as upstream's.
import type { KubeObject } from '../admission/types.js';

export { isObjectOfKind } from '../admission/types.js';

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
