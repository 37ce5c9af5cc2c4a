// Upstream's quota check (apiserver/pkg/admission/plugin/resourcequota: CheckRequest): whether an
// object's usage fits the namespace's quotas beside everything already counted there.
import type { GroupVersionResource, KubeObject } from '../admission/types.js';
import { Quantity } from '../kube/quantity.js';
import type { Quota, Usage } from './quota.js';
import { missingConstraints, quotaMatches } from './usage.js';

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

/** CheckRequest: the first quota `usage` of `object` would exceed, as upstream words it. */
export function checkQuotas(
  namespace: NamespaceUsage,
  object: KubeObject,
  usage: Usage,
  limitedResources: readonly LimitedResource[],
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
): string | undefined {
  const quotas = [...namespace.quotas]
    .sort((a, b) => a.name.localeCompare(b.name))
    .filter((q) => quotaMatches(q, usage.facts));
  for (const limited of limitedResources) {
    if (limited.apiGroup !== resource.group || limited.resource !== resource.resource) continue;
    const needed = Object.keys(usage.usage).filter((name) => limited.matchContains.some((m) => name.includes(m)));
    const uncovered = needed.filter((name) => !quotas.some((q) => name in q.hard));
    if (uncovered.length > 0) return `insufficient quota to consume: ${uncovered.sort().join(',')}`;
  }
  for (const quota of quotas) {
    const missing = missingConstraints(quota, object, usage);
    if (missing.length > 0) return `failed quota: ${quota.name}: must specify ${missing.join(',')}`;
    const charged = namespace.charges.filter((live) => quotaMatches(quota, live.facts));
    const usedOf = (name: string) =>
      charged.reduce(
        (sum, live) => (live.usage[name] === undefined ? sum : sum.add(Quantity.parse(live.usage[name]))),
        Quantity.zero(),
      );
    const lines = Object.entries(usage.usage)
      .filter(([name]) => name in quota.hard)
      .map(([name, value]) => ({
        name,
        requested: Quantity.parse(value),
        used: usedOf(name),
        limited: Quantity.parse(quota.hard[name]),
      }));
    const exceeded = lines.filter((line) => line.used.add(line.requested).cmp(line.limited) > 0);
    if (exceeded.length > 0) {
      const column = (key: 'requested' | 'used' | 'limited') =>
        prettyPrint(exceeded.map((line) => [line.name, line[key]]));
      return `exceeded quota: ${quota.name}, requested: ${column('requested')}, used: ${column('used')}, limited: ${column('limited')}`;
    }
  }
  return undefined;
}
