// What `npm run sync` needs from an existing cluster for a set of active plugins: the kinds their
// learned state is made of, as one kubectl command. `emit` prints it before anything is applied,
// so an install never leaves pre-existing objects unknown without the operator being told.
// Pure: no store, no AWS SDK (emit imports it).
import type { PluginMetadata } from '../../lib/admission/plugin.js';
import { LEARNED_OBJECT_KINDS, learnedObjectKinds } from '../../lib/admission/learning.js';
import { COUNTED } from '../../lib/quota/usage.js';

/** kubectl's plural resource name, qualified by group where the short form could be ambiguous. */
const qualified = (resource: string, group: string): string => (group === '' ? resource : `${resource}.${group}`);

export interface SeedingPlan {
  /** Plugin upstream name -> the kinds it learns, as kubectl names them. */
  readonly byPlugin: ReadonlyMap<string, readonly string[]>;
  /** Every kind, once, in a stable order. */
  readonly resources: readonly string[];
  /** The same kinds as a listing names them (infra/sync's `<group>/<Kind>` keys). */
  readonly listingKeys: ReadonlySet<string>;
}

/** kubectl name -> `<group>/<Kind>`, the key infra/sync files a listed object under. */
const LISTING_KEYS: ReadonlyMap<string, string> = new Map([
  ['namespaces', 'Namespace'],
  ['resourcequotas', 'ResourceQuota'],
  ['pods', '/Pod'],
  ['nodes', '/Node'],
  ...Object.entries(LEARNED_OBJECT_KINDS).map(
    ([resource, { group, kind }]) => [qualified(resource, group), `${group}/${kind}`] as const,
  ),
  ...COUNTED.flatMap(({ group, kinds }) =>
    Object.entries(kinds).map(([resource, kind]) => [qualified(resource, group), `${group}/${kind}`] as const),
  ),
]);

/** The kinds each plugin's learned state is made of; plugins that learn nothing are left out. */
export function seedingPlan(plugins: readonly Pick<PluginMetadata, 'upstreamName' | 'needs'>[]): SeedingPlan {
  const byPlugin = new Map<string, string[]>();
  for (const metadata of plugins) {
    const kinds: string[] = [];
    if (metadata.needs.includes('namespaces')) kinds.push('namespaces');
    if (metadata.needs.includes('resourcequotas')) kinds.push('resourcequotas');
    if (metadata.needs.includes('placements')) kinds.push('pods', 'nodes');
    for (const kind of learnedObjectKinds(metadata)) kinds.push(qualified(kind, LEARNED_OBJECT_KINDS[kind].group));
    // A quota ledger starts from a recount of the objects it charges.
    if (metadata.needs.includes('resourcequotas') || metadata.needs.includes('clusterresourcequotas'))
      for (const { group, kinds: counted } of COUNTED)
        for (const resource of Object.keys(counted)) kinds.push(qualified(resource, group));
    if (kinds.length > 0) byPlugin.set(metadata.upstreamName, [...new Set(kinds)]);
  }
  const resources = [...new Set([...byPlugin.values()].flat())];
  const listingKeys = new Set(resources.map((r) => LISTING_KEYS.get(r)).filter((k): k is string => k !== undefined));
  return { byPlugin, resources, listingKeys };
}

/**
 * One listing of every kind the plan names (`-A`: namespaced kinds from every namespace), piped
 * into sync: a listing can hold Secrets, which should not sit in a file.
 */
export function seedingCommand(plan: SeedingPlan): string {
  return `kubectl get ${plan.resources.join(',')} -A -o json | npm run -s sync -- --from -`;
}
