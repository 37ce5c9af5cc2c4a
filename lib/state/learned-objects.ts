// Learned objects: StorageClasses, IngressClasses, PriorityClasses, RuntimeClasses,
// ClusterResourceQuotas, LimitRanges and Nodes (their labels) as the plugins that `need` them saw
// them written (lib/admission/learning) or `npm run sync` loaded them. One generic record per
// object, whatever the kind; plugins only read.
//
// Keys: one partition per kind (`obj#<kind>`), one item per object (sort key: its name, or
// `<namespace>/<name>` for a namespaced kind), so that `list(kind)` is a single Query (DefaultStorageClass
// and Priority look for the default among all) and so is `list(kind, namespace)` (a sort-key prefix:
// LimitRanger reads one namespace's LimitRanges). A DELETE removes the item. Observations are lost while the learning webhook is down, and two
// Lambda instances may land a create and a delete out of order; `npm run sync` (a complete listing
// per kind) puts the store back in step with the cluster.
import type { LearnedObjectObservation } from '../admission/learning.js';
import { isNamespacedKind, learnedObjectObservation } from '../admission/learning.js';
import type { LearnedObject, LearnedObjectKind, LearnedObjects } from '../admission/ports.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { KubeObject } from '../admission/types.js';
import type { Item, StateStore } from './store.js';
import { json, S, str } from './store.js';
import { PARTITION } from './partitions.js';

const partition = (kind: LearnedObjectKind) => `${PARTITION.learnedObject}${kind}`;
/** The sort key: the name, after `<namespace>/` for a namespaced kind (names never hold a `/`). */
const sortKey = (kind: LearnedObjectKind, name: string, namespace = '') =>
  isNamespacedKind(kind) ? `${namespace}/${name}` : name;
const objectKey = (kind: LearnedObjectKind, name: string, namespace?: string) => ({
  pk: S(partition(kind)),
  sk: S(sortKey(kind, name, namespace)),
});

function decode(kind: LearnedObjectKind, item: Item): LearnedObject | undefined {
  const key = str(item, 'sk');
  const object = json<KubeObject>(item, 'data');
  if (key === undefined || object === undefined) return undefined;
  const observedAt = str(item, 'observedAt') ?? '';
  if (!isNamespacedKind(kind)) return { name: key, object, observedAt };
  const slash = key.indexOf('/');
  return { name: key.slice(slash + 1), namespace: key.slice(0, slash), object, observedAt };
}

/**
 * A live read of one object from the apiserver, for a name the store does not hold (a class
 * created a moment ago, as upstream's plugins GET on an informer miss): the object as it is
 * recorded (trimmed), 'absent' (404), or undefined when the kind is not read or the apiserver
 * cannot answer in time (the never-seen answer applies). Lists never read through: a list is
 * only as complete as the store.
 */
export type ObjectReadThrough = (
  kind: LearnedObjectKind,
  name: string,
  namespace?: string,
) => Promise<KubeObject | 'absent' | undefined>;

export class LearnedObjectStore implements LearnedObjects {
  constructor(
    private readonly store: StateStore,
    private readonly readThrough?: ObjectReadThrough,
  ) {}

  async get(kind: LearnedObjectKind, name: string, namespace?: string): Promise<LearnedObject | undefined> {
    const item = await this.store.get(partition(kind), sortKey(kind, name, namespace));
    if (item) return decode(kind, item);
    const read = await this.readThrough?.(kind, name, namespace);
    if (read === undefined || read === 'absent') return undefined;
    const observedAt = new Date(this.store.now()).toISOString();
    return { name, ...(isNamespacedKind(kind) && { namespace }), object: read, observedAt };
  }

  async list(kind: LearnedObjectKind, namespace?: string): Promise<LearnedObject[]> {
    const prefix = namespace !== undefined && isNamespacedKind(kind) ? `${namespace}/` : '';
    const items = await this.store.query(partition(kind), prefix);
    return items.flatMap((item) => decode(kind, item) ?? []);
  }

  /**
   * Records what one admitted write of a learned kind teaches. Idempotent by request uid: the
   * apiserver's retries and reinvocations write once. A dry run writes nothing (the gate in store).
   */
  async observe(request: AdmissionRequest): Promise<void> {
    const observation = learnedObjectObservation(request);
    if (!observation) return;
    // A CREATE of an object already known to exist will be refused (AlreadyExists): it teaches nothing.
    if (request.operation === 'CREATE' && (await this.get(observation.of, observation.name, observation.namespace)))
      return;
    await this.record(observation, request.uid);
  }

  async record(observation: LearnedObjectObservation, requestUid: string): Promise<void> {
    const key = objectKey(observation.of, observation.name, observation.namespace);
    if (observation.kind === 'deleted') {
      await this.store.delete({ Key: key });
      return;
    }
    await this.store.putObservation(key, observation.object, requestUid);
  }

  /**
   * `npm run sync`: a complete listing of one kind. Every listed object is recorded; a learned one
   * absent from the listing no longer exists and is removed. Returns how many were removed.
   */
  async replaceAll(
    kind: LearnedObjectKind,
    observations: readonly Extract<LearnedObjectObservation, { kind: 'stored' }>[],
    runId: string,
  ): Promise<number> {
    const listed = new Set(observations.map((o) => sortKey(kind, o.name, o.namespace)));
    for (const observation of observations) await this.record(observation, runId);
    const stale = (await this.store.query(partition(kind))).filter((item) => !listed.has(str(item, 'sk') ?? ''));
    await this.store.deleteAll(stale.map((item) => ({ pk: item.pk, sk: item.sk })));
    return stale.length;
  }
}
