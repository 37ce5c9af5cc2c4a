// What the cluster reader reads for a set of active plugins: exactly the kinds their state is made
// of (`needs`), the same set `npm run emit` names for `npm run sync` and the reader's ClusterRole
// grants, with where each kind lives in the API and what its objects feed. Pure: emit reads it
// without loading the store.
import type { PluginMetadata } from '../admission/plugin.js';
import type { LearnedObjectKind } from '../admission/ports.js';
import { LEARNED_OBJECT_KINDS, learnedObjectKinds } from '../admission/learning.js';
import { COUNTED } from '../quota/usage.js';

/** What a kind's objects feed: one kind may feed several (pods: placements and quota counts). */
export type ReadUse = 'namespaces' | 'quotas' | 'placements' | 'learned' | 'counted';

export interface ReadKind {
  /** kubectl's name, group-qualified: `namespaces`, `storageclasses.storage.k8s.io`. */
  readonly name: string;
  readonly group: string;
  readonly version: string;
  /** The plural resource. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /**
   * Names, uids and labels are all that is read (Nodes, and counted kinds whose charge is a count):
   * listed and watched as PartialObjectMetadata.
   */
  readonly metadataOnly: boolean;
  readonly uses: ReadonlySet<ReadUse>;
}

/** Counted kinds whose charge depends on more than the object's existence. */
const COUNTED_FROM_SPEC = new Set(['pods', 'persistentvolumeclaims']);

/** The kinds the plugins read, in a stable order (namespaces first: the others' recounts use them). */
export function readKinds(plugins: readonly Pick<PluginMetadata, 'needs'>[]): ReadKind[] {
  const byName = new Map<
    string,
    { group: string; resource: string; kind: string; namespaced: boolean; uses: Set<ReadUse> }
  >();
  const add = (resource: string, group: string, kind: string, namespaced: boolean, use: ReadUse) => {
    const name = group === '' ? resource : `${resource}.${group}`;
    const entry = byName.get(name) ?? { group, resource, kind, namespaced, uses: new Set<ReadUse>() };
    entry.uses.add(use);
    byName.set(name, entry);
  };
  for (const metadata of plugins) {
    if (metadata.needs.includes('namespaces')) add('namespaces', '', 'Namespace', false, 'namespaces');
    if (metadata.needs.includes('resourcequotas')) add('resourcequotas', '', 'ResourceQuota', true, 'quotas');
    if (metadata.needs.includes('placements')) {
      add('pods', '', 'Pod', true, 'placements');
      add('nodes', '', 'Node', false, 'placements');
    }
    for (const learned of learnedObjectKinds(metadata)) {
      const { group, kind, scope } = LEARNED_OBJECT_KINDS[learned];
      add(learned, group, kind, scope === 'Namespaced', 'learned');
    }
    if (metadata.needs.includes('resourcequotas') || metadata.needs.includes('clusterresourcequotas'))
      for (const { group, kinds } of COUNTED)
        for (const [resource, kind] of Object.entries(kinds)) add(resource, group, kind, true, 'counted');
  }
  return [...byName].map(([name, { group, resource, kind, namespaced, uses }]) => ({
    name,
    group,
    version: 'v1',
    resource,
    kind,
    namespaced,
    metadataOnly: !uses.has('namespaces') && !uses.has('quotas') && !usesWholeObject(resource, uses),
    uses,
  }));
}

function usesWholeObject(resource: string, uses: ReadonlySet<ReadUse>): boolean {
  if (uses.has('learned') && !LEARNED_OBJECT_KINDS[resource as LearnedObjectKind]?.labelsOnly) return true;
  // A pod's placement is its spec.nodeName.
  if (uses.has('placements') && resource === 'pods') return true;
  return uses.has('counted') && COUNTED_FROM_SPEC.has(resource);
}

/** The collection's path, every namespace's for a namespaced kind. */
export function collectionPath(kind: Pick<ReadKind, 'group' | 'version' | 'resource'>): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return `${base}/${kind.resource}`;
}

/** One object's path. */
export function objectPath(
  kind: Pick<ReadKind, 'group' | 'version' | 'resource' | 'namespaced'>,
  name: string,
  namespace = '',
): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  const where = kind.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${where}/${kind.resource}/${encodeURIComponent(name)}`;
}
