// Where what the reader reads goes: the same records the learning webhooks and `npm run sync` write
// (lib/state), so the plugins' decision code reads the cluster's committed state unchanged. One
// sink per kind; a kind that feeds several records (pods: placements and quota counts) writes each.
//
// A list is complete: what a previous list or watch held and this list does not is gone (removed,
// or, for a namespace, recorded as deleted). `keys` is what the kind held before, as `ns/name`.
import type { NamespaceRecord, PlacementObservation } from '../admission/learning.js';
import { learnedQuotaOf, listedObjectObservation, listedObservation } from '../admission/learning.js';
import type { Charge, ChargedObject, LearnedObjectKind } from '../admission/ports.js';
import type { KubeObject } from '../admission/types.js';
import { qualifiedResource } from '../admission/request.js';
import { usageOf } from '../quota/usage.js';
import { LearnedObjectStore } from '../state/learned-objects.js';
import { LearnedNamespaceStore } from '../state/namespaces.js';
import { LearnedPlacementStore } from '../state/placements.js';
import { QuotaLedgerStore } from '../state/quota-ledger.js';
import type { StateStore } from '../state/store.js';
import type { ReadKind } from './kinds.js';

/** The uid the reader's ledgers carry. */
export const READER_UID = 'cluster-reader';

/**
 * The idempotency key of a recorded observation (learned records skip a write by the uid that
 * made them last): one per object version, so every change is written and a replay is not.
 */
const versionUid = (object: KubeObject) => `cluster-reader@${text(object.metadata?.resourceVersion)}`;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** `ns/name`, or `name` for a cluster-scoped object. */
export function keyOf(kind: Pick<ReadKind, 'namespaced'>, object: KubeObject): string {
  const name = text(object.metadata?.name);
  return kind.namespaced ? `${text(object.metadata?.namespace)}/${name}` : name;
}

function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

/** A stored Namespace as its record: Terminating once deleted or so phased. */
export function namespaceRecordOf(object: KubeObject): NamespaceRecord {
  const status = object.status as { phase?: unknown } | undefined;
  const deleting = object.metadata?.deletionTimestamp !== undefined && object.metadata?.deletionTimestamp !== null;
  return {
    labels: stringMap(object.metadata?.labels),
    annotations: stringMap(object.metadata?.annotations),
    phase: status?.phase === 'Terminating' || deleting ? 'Terminating' : 'Active',
  };
}

/**
 * Writes a list keeps in flight. A list's records each have keys of their own (one namespace, one
 * pod's placement, one namespace's quota counts), so their order does not matter; one at a time, a
 * cluster of thousands of pods spent most of its first run waiting for store round trips in turn.
 * The bound stays under the store client's 50 connections.
 */
const LIST_WRITES_IN_FLIGHT = 16;

/** `write` for every item, LIST_WRITES_IN_FLIGHT at a time; the first failure stops taking more and is thrown. */
export async function eachInFlight<T>(items: Iterable<T>, write: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < queue.length) {
      const item = queue[next++];
      try {
        await write(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIST_WRITES_IN_FLIGHT, queue.length) }, worker));
}

export interface KindSink {
  /** A complete list: records every object and removes what `before` held that the list does not. */
  list(items: readonly KubeObject[], before: ReadonlySet<string>): Promise<void>;
  /** One watch event. */
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): Promise<void>;
}

/** The records one kind feeds, written through `store` (never a dry run). */
export function sinkFor(kind: ReadKind, store: StateStore): KindSink {
  const sinks: KindSink[] = [];
  if (kind.uses.has('namespaces')) sinks.push(namespaceSink(store));
  if (kind.uses.has('quotas')) sinks.push(quotaSink(store));
  if (kind.uses.has('placements')) sinks.push(placementSink(kind, store));
  if (kind.uses.has('learned')) sinks.push(learnedSink(kind, store));
  if (kind.uses.has('counted')) sinks.push(countedSink(kind, store));
  return {
    list: async (items, before) => {
      for (const sink of sinks) await sink.list(items, before);
    },
    event: async (type, object) => {
      for (const sink of sinks) await sink.event(type, object);
    },
  };
}

function namespaceSink(store: StateStore): KindSink {
  const namespaces = new LearnedNamespaceStore(store);
  const gone: NamespaceRecord = { labels: {}, annotations: {}, phase: 'Gone' };
  return {
    async list(items, before) {
      const listed = new Set(items.map((object) => text(object.metadata?.name)));
      await eachInFlight(items, (object) =>
        namespaces.record(text(object.metadata?.name), namespaceRecordOf(object), versionUid(object)),
      );
      await eachInFlight(
        [...before].filter((name) => !listed.has(name)),
        (name) => namespaces.record(name, gone, `cluster-reader@gone`),
      );
      await namespaces.recordCompleteListing(store.now());
    },
    async event(type, object) {
      const name = text(object.metadata?.name);
      await namespaces.record(name, type === 'DELETED' ? gone : namespaceRecordOf(object), versionUid(object));
    },
  };
}

function quotaSink(store: StateStore): KindSink {
  const ledger = new QuotaLedgerStore(store, READER_UID);
  const record = (object: KubeObject) =>
    ledger.recordQuota(learnedQuotaOf(object, text(object.metadata?.namespace), text(object.metadata?.name)));
  return {
    async list(items, before) {
      const listed = new Set(items.map((object) => keyOf({ namespaced: true }, object)));
      for (const object of items) await record(object);
      for (const key of before) {
        if (listed.has(key)) continue;
        const { namespace, name } = splitKey(key);
        await ledger.forgetQuota(namespace, name);
      }
    },
    async event(type, object) {
      if (type === 'DELETED') await ledger.forgetQuota(text(object.metadata?.namespace), text(object.metadata?.name));
      else await record(object);
    },
  };
}

function placementSink(kind: ReadKind, store: StateStore): KindSink {
  const placements = new LearnedPlacementStore(store);
  const listedKind = kind.kind === 'Node' ? 'Node' : 'Pod';
  const deleted = (object: KubeObject) => {
    const observation = listedObservation(listedKind, object) as Extract<PlacementObservation, { target: unknown }>;
    return placements.record({ kind: 'deleted', target: observation.target, uid: text(object.metadata?.uid) });
  };
  return {
    async list(items, before) {
      const listed = new Set(items.map((object) => keyOf(kind, object)));
      await eachInFlight(items, (object) => placements.record(listedObservation(listedKind, object)));
      await eachInFlight(
        [...before].filter((key) => !listed.has(key)),
        (key) => {
          const { namespace, name } = splitKey(key);
          return deleted({ metadata: { name, ...(kind.namespaced && { namespace }) } });
        },
      );
    },
    async event(type, object) {
      if (type === 'DELETED') await deleted(object);
      else await placements.record(listedObservation(listedKind, object));
    },
  };
}

function learnedSink(kind: ReadKind, store: StateStore): KindSink {
  const objects = new LearnedObjectStore(store);
  const of = kind.resource as LearnedObjectKind;
  // A PartialObjectMetadata item names its own kind; the learned record names the object's.
  const typed = (object: KubeObject): KubeObject => ({ ...object, kind: kind.kind });
  return {
    async list(items) {
      await objects.replaceAll(
        of,
        items.map((object) => listedObjectObservation(of, typed(object))),
        `cluster-reader@list-${Date.now()}`,
      );
    },
    async event(type, object) {
      const observation = listedObjectObservation(of, typed(object));
      if (type === 'DELETED') {
        const { name, namespace } = observation;
        await objects.record(
          { kind: 'deleted', of, name, ...(namespace !== undefined && { namespace }) },
          versionUid(object),
        );
      } else await objects.record(observation, versionUid(object));
    },
  };
}

/**
 * Quota counts: a list recounts every namespace it or the previous one held objects in (upstream's
 * quota controller's full resync); an object seen added or changed is confirmed, one seen deleted
 * frees its charge. Reservations of requests in flight stay as the ResourceQuota webhook made them.
 */
function countedSink(kind: ReadKind, store: StateStore): KindSink {
  const ledger = new QuotaLedgerStore(store, READER_UID);
  const resource = qualifiedResource({ group: kind.group, resource: kind.resource });
  const charged = (object: KubeObject): { object: ChargedObject; charge: Charge } => {
    const uid = text(object.metadata?.uid);
    return {
      object: {
        namespace: text(object.metadata?.namespace),
        resource,
        name: text(object.metadata?.name),
        ...(uid !== '' && { uid }),
      },
      charge: usageOf({ group: kind.group, resource: kind.resource }, object),
    };
  };
  return {
    async list(items, before) {
      const perNamespace = new Map<string, { object: ChargedObject; charge: Charge }[]>();
      for (const key of before) perNamespace.set(splitKey(key).namespace, []);
      for (const object of items) {
        const entry = charged(object);
        const listed = perNamespace.get(entry.object.namespace);
        if (listed) listed.push(entry);
        else perNamespace.set(entry.object.namespace, [entry]);
      }
      // Each namespace's counts are a ledger of their own.
      await eachInFlight(perNamespace, ([namespace, objects]) =>
        ledger.recount(namespace, new Set([resource]), objects),
      );
    },
    async event(type, object) {
      const entry = charged(object);
      if (type === 'DELETED') await ledger.release(entry.object);
      else await ledger.confirm(entry.object, entry.charge);
    },
  };
}
