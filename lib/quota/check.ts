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

const prettyPrint = (list: Map<string, Quantity>) =>
  [...list.keys()]
    .sort()
    .map((k) => `${k}=${list.get(k)!.toString()}`)
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
    const requested = new Map<string, Quantity>();
    for (const [name, value] of Object.entries(usage.usage))
      if (name in quota.hard) requested.set(name, Quantity.parse(value));
    if (requested.size === 0) continue;
    const used = new Map<string, Quantity>([...requested.keys()].map((k) => [k, Quantity.zero()]));
    for (const live of namespace.charges) {
      if (!quotaMatches(quota, live.facts)) continue;
      for (const k of requested.keys())
        if (live.usage[k] !== undefined) used.set(k, used.get(k)!.add(Quantity.parse(live.usage[k])));
    }
    const exceeded = [...requested.keys()].filter(
      (k) => used.get(k)!.add(requested.get(k)!).cmp(Quantity.parse(quota.hard[k])) > 0,
    );
    if (exceeded.length > 0) {
      const mask = (source: (k: string) => Quantity) => new Map(exceeded.map((k) => [k, source(k)]));
      return `exceeded quota: ${quota.name}, requested: ${prettyPrint(mask((k) => requested.get(k)!))}, used: ${prettyPrint(mask((k) => used.get(k)!))}, limited: ${prettyPrint(mask((k) => Quantity.parse(quota.hard[k])))}`;
    }
  }
  return undefined;
}
