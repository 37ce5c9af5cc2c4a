// OpenShift's ClusterResourceQuota (quota.openshift.io/v1) as admission reads it: the quota its
// spec.quota states (a ResourceQuotaSpec: hard, scopes, scopeSelector) and which namespaces
// spec.selector picks. Pure, for the ClusterResourceQuota webhook and `npm run sync` alike.
import { learnedQuotaOf } from '../admission/learning.js';
import type { LabelSelector } from '../admission/label-selector.js';
import { selectorMatches } from '../admission/label-selector.js';
import type { LearnedNamespace } from '../admission/ports.js';
import type { KubeObject } from '../admission/types.js';
import { isPlainObject as isObject } from '../admission/types.js';
import type { Quota } from './quota.js';

/** spec.selector: a label selector and an annotation map, either absent (null in the API). */
export interface ClusterQuotaSelector {
  readonly labels?: LabelSelector;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface ClusterQuota {
  readonly name: string;
  readonly selector: ClusterQuotaSelector;
  /** spec.quota, as a namespace's ResourceQuota would state it (namespace ''). */
  readonly quota: Quota;
}

/** The ClusterResourceQuota a stored (or listed) object states. */
export function clusterQuotaOf(object: KubeObject): ClusterQuota {
  const name = typeof object.metadata?.name === 'string' ? object.metadata.name : '';
  const spec = isObject(object.spec) ? object.spec : {};
  const selector = isObject(spec.selector) ? spec.selector : {};
  const annotations = isObject(selector.annotations)
    ? (Object.fromEntries(Object.entries(selector.annotations).filter(([, v]) => typeof v === 'string')) as Record<
        string,
        string
      >)
    : undefined;
  return {
    name,
    selector: {
      ...(isObject(selector.labels) && { labels: selector.labels as LabelSelector }),
      ...(annotations && { annotations }),
    },
    quota: learnedQuotaOf({ spec: isObject(spec.quota) ? spec.quota : {} }, '', name),
  };
}

/**
 * library-go's clusterquotamapping GetMatcher: the label selector (when set) matches the
 * namespace's labels, and every annotation of the selector (when set) is the namespace's, with
 * the same value. Both set: both must hold. An empty label selector selects every namespace.
 */
export function selectsNamespace(
  quota: Pick<ClusterQuota, 'selector'>,
  namespace: Pick<LearnedNamespace, 'labels' | 'annotations'>,
): boolean {
  const { labels, annotations } = quota.selector;
  if (labels && !selectorMatches(labels, namespace.labels)) return false;
  for (const [key, value] of Object.entries(annotations ?? {}))
    if (!Object.hasOwn(namespace.annotations, key) || namespace.annotations[key] !== value) return false;
  return true;
}
