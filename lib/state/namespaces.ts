// Learned namespaces: what our own Namespace webhooks saw (and what `npm run sync` loaded), for
// plugins that need namespace metadata (`needs: ['namespaces']`). The handler records, once per
// request, in lib; plugins only read.
import type { NamespaceRecord } from '../admission/learning.js';
import { isNamespaceRequest, namespaceObservation } from '../admission/learning.js';
import type { LearnedNamespace, LearnedNamespaces } from '../admission/ports.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { Item, StateStore } from './store.js';
import { json, N, S, str } from './store.js';
import { PARTITION } from './partitions.js';

const NAMESPACE_SK = 'namespace';
const LISTING_PK = PARTITION.namespace;
const LISTING_SK = 'listing';
const namespaceKey = (name: string) => ({ pk: S(`${PARTITION.namespace}${name}`), sk: S(NAMESPACE_SK) });

function decode(name: string, item: Item): (LearnedNamespace & { gone: boolean }) | undefined {
  const record = json<NamespaceRecord>(item, 'data');
  if (!record) return undefined;
  return {
    name,
    labels: record.labels,
    annotations: record.annotations,
    phase: record.phase === 'Gone' ? 'Terminating' : record.phase,
    observedAt: str(item, 'observedAt') ?? '',
    gone: record.phase === 'Gone',
  };
}

/**
 * A live read of one namespace from the apiserver, for a name the store does not hold (as
 * upstream's PodNodeSelector and NamespaceLifecycle GET on an informer miss): its record, 'absent'
 * (404), or undefined when the apiserver cannot be reached in time (the never-seen answer applies).
 */
export type NamespaceReadThrough = (name: string) => Promise<NamespaceRecord | 'absent' | undefined>;

export class LearnedNamespaceStore implements LearnedNamespaces {
  constructor(
    private readonly store: StateStore,
    private readonly readThrough?: NamespaceReadThrough,
  ) {}

  async get(name: string): Promise<LearnedNamespace | undefined> {
    const item = await this.store.get(namespaceKey(name).pk.S, NAMESPACE_SK);
    const learned = item && decode(name, item);
    if (learned?.gone) return undefined;
    if (learned) {
      const { gone: _gone, ...namespace } = learned;
      return namespace;
    }
    const read = await this.readThrough?.(name);
    if (read === undefined || read === 'absent' || read.phase === 'Gone') return undefined;
    return { name, ...read, phase: read.phase, observedAt: new Date(this.store.now()).toISOString() };
  }

  async knownAbsent(name: string): Promise<boolean> {
    const item = await this.store.get(namespaceKey(name).pk.S, NAMESPACE_SK);
    if (item) return decode(name, item)?.gone === true;
    if (this.readThrough) {
      const read = await this.readThrough(name);
      if (read !== undefined) return read === 'absent';
    }
    return (await this.store.get(LISTING_PK, LISTING_SK)) !== undefined;
  }

  /**
   * Records one Namespace write. Idempotent by request uid: the apiserver's retries and
   * reinvocations of the same request write once. A dry run writes nothing (the gate in store).
   */
  async observe(request: AdmissionRequest): Promise<void> {
    if (!isNamespaceRequest(request)) return;
    const observation = namespaceObservation(request);
    if (!observation) return;
    // A CREATE of a name already known to exist is refused by the apiserver (AlreadyExists) after
    // every webhook has seen it: it teaches nothing, or anyone allowed to create namespaces could
    // rewrite an existing one's labels and annotations.
    if (request.operation === 'CREATE' && (await this.get(observation.name)) !== undefined) return;
    await this.record(observation.name, observation.record, request.uid);
  }

  async record(name: string, record: NamespaceRecord, requestUid: string): Promise<void> {
    await this.store.putObservation(namespaceKey(name), record, requestUid);
  }

  /** `npm run sync`: a complete listing; namespaces absent from it are known not to exist. */
  async recordCompleteListing(at: number): Promise<void> {
    await this.store.put({ Item: { pk: S(LISTING_PK), sk: S(LISTING_SK), listedAtMs: N(at) } });
  }
}
