// CEL pieces of the two plugins that merge a namespace's node selector into a new pod's
// (PodNodeSelector, OpenShift's OriginPodNodeEnvironment): the namespace's annotations the
// selector is read from, and, once it is parsed into `variables.labels`, the pod's own selector,
// the conflict between them and the merge.
import type { NamedExpression } from './policy.js';

/** The annotations of the request's namespace (namespaceObject), where the selectors are kept. */
export const NAMESPACE_ANNOTATIONS: NamedExpression = {
  name: 'annotations',
  expression: 'namespaceObject.metadata.?annotations.orValue({})',
};

export const POD_SELECTOR: NamedExpression = {
  name: 'podSelector',
  expression: 'object.spec.?nodeSelector.orValue({})',
};

/** labels.Conflicts(selector, pod): a key both set, to different values. */
export const CONFLICT =
  'variables.labels.exists(k, k in variables.podSelector && variables.podSelector[k] != variables.labels[k])';

/**
 * JSON patches adding the keys of `variables.labels` the pod's nodeSelector lacks (the whole map
 * where it has none): labels.Merge(selector, pod), the pod's own values kept.
 */
export const MERGE_LABELS =
  "(has(object.spec.nodeSelector) ? variables.labels.filter(k, !(k in variables.podSelector)).map(k, JSONPatch{op: 'add', path: '/spec/nodeSelector/' + jsonpatch.escapeKey(k), value: variables.labels[k]}) : size(variables.labels) == 0 ? [] : [JSONPatch{op: 'add', path: '/spec/nodeSelector', value: variables.labels}])";
