// Upstream's quota check (apiserver/pkg/admission/plugin/resourcequota: CheckRequest): whether an
// object's usage fits the namespace's quotas beside everything already counted there.
import type { QueuedVerdict } from '../admission/ports.js';
import type { GroupVersionResource, KubeObject } from '../admission/types.js';
import { Quantity } from '../kube/quantity.js';
import type { Quota, Usage } from './quota.js';
import { constrainsPods, missingConstraints, quotaMatches } from './usage.js';

/** apiserver.config.k8s.io/v1 ResourceQuotaConfiguration's limitedResources. */
export interface LimitedResource {
  readonly apiGroup: string;
  readonly resource: string;
  readonly matchContains: readonly string[];
}

/** A namespace's quotas and what its live objects already consume. */
export interface NamespaceUsage {
  readonly quotas: readonly Quota[];
  readonly charges: readonly Usage[];
}

/** `name=quantity` pairs sorted by name, as upstream's prettyPrint. */
const prettyPrint = (list: readonly (readonly [name: string, quantity: Quantity])[]) =>
  [...list]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, quantity]) => `${name}=${quantity.toString()}`)
    .join(',');

/** The quotas that cap `usage`, in name order (upstream checks them in the order it lists them). */
const matchingQuotas = (quotas: readonly Quota[], usage: Usage) =>
  [...quotas].sort((a, b) => a.name.localeCompare(b.name)).filter((q) => quotaMatches(q, usage.facts));

/** limitedResources: what `usage` consumes of a limited resource that no matching quota covers. */
function uncoveredResources(
  quotas: readonly Quota[],
  usage: Usage,
  limitedResources: readonly LimitedResource[],
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
): string[] {
  return limitedResources.flatMap((limited) => {
    if (limited.apiGroup !== resource.group || limited.resource !== resource.resource) return [];
    const needed = Object.keys(usage.usage).filter((name) => limited.matchContains.some((m) => name.includes(m)));
    return needed.filter((name) => !quotas.some((q) => name in q.hard));
  });
}

interface ExceededLine {
  readonly name: string;
  readonly requested: Quantity;
  readonly used: Quantity;
  readonly limited: Quantity;
}

/** The resources of `quota` that `usage` would take past its hard limit beside `charges`. */
function exceeded(quota: Quota, charges: readonly Usage[], usage: Usage): ExceededLine[] {
  const charged = charges.filter((live) => quotaMatches(quota, live.facts));
  const usedOf = (name: string) =>
    charged.reduce(
      (sum, live) => (live.usage[name] === undefined ? sum : sum.add(Quantity.parse(live.usage[name]))),
      Quantity.zero(),
    );
  return Object.entries(usage.usage)
    .filter(([name]) => name in quota.hard)
    .map(([name, value]) => ({
      name,
      requested: Quantity.parse(value),
      used: usedOf(name),
      limited: Quantity.parse(quota.hard[name]),
    }))
    .filter((line) => line.used.add(line.requested).cmp(line.limited) > 0);
}

/** CheckRequest: the first quota `usage` of `object` would exceed, as upstream words it. */
export function checkQuotas(
  namespace: NamespaceUsage,
  object: KubeObject,
  usage: Usage,
  limitedResources: readonly LimitedResource[],
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
): string | undefined {
  const quotas = matchingQuotas(namespace.quotas, usage);
  const uncovered = uncoveredResources(quotas, usage, limitedResources, resource);
  if (uncovered.length > 0) return `insufficient quota to consume: ${uncovered.sort().join(',')}`;
  for (const quota of quotas) {
    const missing = missingConstraints(quota, object, usage);
    if (missing.length > 0) return `failed quota: ${quota.name}: must specify ${missing.join(',')}`;
    const lines = exceeded(quota, namespace.charges, usage);
    if (lines.length > 0) {
      const column = (key: 'requested' | 'used' | 'limited') =>
        prettyPrint(lines.map((line) => [line.name, line[key]]));
      return `exceeded quota: ${quota.name}, requested: ${column('requested')}, used: ${column('used')}, limited: ${column('limited')}`;
    }
  }
  return undefined;
}

/**
 * What checkQuotas would answer for another request queued in the namespace, known only by its
 * charge (its usage and scope facts) and its group-qualified resource (`pods`, `deployments.apps`):
 * `exceeds` (it would be refused), `fits`, or `unknown` when the answer needs the object itself
 * (a matching quota caps compute resources, which every container of a pod must then state).
 */
export function judgeQueued(
  namespace: NamespaceUsage,
  usage: Usage,
  qualifiedResource: string,
  limitedResources: readonly LimitedResource[],
): QueuedVerdict {
  const quotas = matchingQuotas(namespace.quotas, usage);
  const dot = qualifiedResource.indexOf('.');
  const resource =
    dot < 0
      ? { group: '', resource: qualifiedResource }
      : { group: qualifiedResource.slice(dot + 1), resource: qualifiedResource.slice(0, dot) };
  if (uncoveredResources(quotas, usage, limitedResources, resource).length > 0) return 'exceeds';
  if (usage.facts.pod === true && quotas.some((q) => Object.keys(q.hard).some(constrainsPods))) return 'unknown';
  return quotas.some((q) => exceeded(q, namespace.charges, usage).length > 0) ? 'exceeds' : 'fits';
}
