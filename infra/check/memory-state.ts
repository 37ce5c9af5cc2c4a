// The state ports (lib/admission/ports.ts) over one process's memory, for `npm run check` and
// `npm run audit`: no AWS, no JVM, nothing left behind. One MemoryState is shared by every plugin
// of a run, as the one DynamoDB table is shared by every Lambda, so what one object's admission
// records (a namespace learned, a quota charge, a rate-limit token) is seen by the next object.
//
// What a request teaches is decided by lib/admission/learning, as in lib/state; only the keeping
// differs. There is one process and one request at a time, so none of lib/state's concurrency
// machinery (queues, conditional writes, TTL sweeps) is needed: a reservation simply holds. The
// dryRun gate is here too: a dry run (and every request of a read-only run, `npm run audit`)
// reads and writes nothing.
import type { NamespaceRecord, LearnedObjectObservation, PlacementObservation } from '../../lib/admission/learning.js';
import {
  isNamespaceRequest,
  learnedObjectObservation,
  namespaceObservation,
  placementObservation,
  quotaObservation,
} from '../../lib/admission/learning.js';
import type {
  BucketSpec,
  Charge,
  ChargedObject,
  LearnedNamespace,
  LearnedNode,
  LearnedObject,
  LearnedObjectKind,
  LearnedPod,
  LearnedQuota,
  LiveCharge,
  QuotaSnapshot,
  ReserveOutcome,
} from '../../lib/admission/ports.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { LearningState } from '../../lib/state/index.js';
import type { ListingTarget } from '../sync/sync.js';

type Cached = { allowed: boolean; reason: string; annotations: Record<string, string> };
interface HeldCharge extends LiveCharge {
  readonly requestUid: string;
}

const chargeKey = (object: ChargedObject) => `${object.resource}#${object.namespace}/${object.name}`;
const clusterLedger = (quota: string) => `crq#${quota}`;
const liveCharges = (ledger: Map<string, HeldCharge>): LiveCharge[] =>
  [...ledger.values()].map(({ requestUid: _uid, ...charge }) => charge);
/** A learned object's key: its name, or `<namespace>/<name>` for a namespaced kind (as lib/state). */
const objectKey = (name: string, namespace: string | undefined) => (namespace ? `${namespace}/${name}` : name);

export class MemoryState {
  private readonly namespaces = new Map<string, { record: NamespaceRecord; observedAt: string }>();
  private completeListing = false;
  private readonly objects = new Map<LearnedObjectKind, Map<string, LearnedObject>>();
  private readonly pods = new Map<string, LearnedPod>();
  private readonly nodes = new Map<string, LearnedNode>();
  private readonly quotas = new Map<string, Map<string, LearnedQuota>>();
  private readonly charges = new Map<string, Map<string, HeldCharge>>();
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();
  private readonly paid = new Set<string>();
  private readonly cache = new Map<string, { value: Cached; expiresAtMs: number }>();

  constructor(
    /** A read-only run (audit): no request writes, whatever its dryRun. */
    private readonly readOnly = false,
    private readonly now: () => number = Date.now,
  ) {}

  private observedAt(): string {
    return new Date(this.now()).toISOString();
  }

  private ledgerOf(namespace: string): Map<string, HeldCharge> {
    const known = this.charges.get(namespace);
    if (known) return known;
    const created = new Map();
    this.charges.set(namespace, created);
    return created;
  }

  private quotasOf(namespace: string): Map<string, LearnedQuota> {
    const known = this.quotas.get(namespace);
    if (known) return known;
    const created = new Map();
    this.quotas.set(namespace, created);
    return created;
  }

  private kindOf(kind: LearnedObjectKind): Map<string, LearnedObject> {
    const known = this.objects.get(kind);
    if (known) return known;
    const created = new Map();
    this.objects.set(kind, created);
    return created;
  }

  // ---- the records, as lib/state keeps them --------------------------------------------------

  recordNamespace(name: string, record: NamespaceRecord): void {
    this.namespaces.set(name, { record, observedAt: this.observedAt() });
  }

  learnedNamespace(name: string): LearnedNamespace | undefined {
    const entry = this.namespaces.get(name);
    if (!entry || entry.record.phase === 'Gone') return undefined;
    const { labels, annotations, phase } = entry.record;
    return { name, labels, annotations, phase, observedAt: entry.observedAt };
  }

  private recordPlacement(observation: PlacementObservation): void {
    const observedAt = this.observedAt();
    if (observation.kind === 'bound') {
      const { namespace, name, uid, nodeName } = observation;
      this.pods.set(`${namespace}/${name}`, { namespace, name, uid, nodeName, observedAt });
      return;
    }
    const { target } = observation;
    const key = target.kind === 'pod' ? `${target.namespace}/${target.name}` : target.name;
    const map = target.kind === 'pod' ? this.pods : this.nodes;
    if (observation.kind === 'deleted') {
      map.delete(key);
      return;
    }
    // A CREATE is a claim on a free name only; a stored object is the apiserver's truth.
    if (observation.kind === 'created' && map.has(key)) return;
    if (target.kind === 'pod') {
      const { uid, nodeName } = observation;
      this.pods.set(key, { namespace: target.namespace, name: target.name, uid, nodeName, observedAt });
    } else this.nodes.set(key, { name: target.name, uid: observation.uid, observedAt });
  }

  private recordObject(observation: LearnedObjectObservation): void {
    const objects = this.kindOf(observation.of);
    const key = objectKey(observation.name, observation.namespace);
    if (observation.kind === 'deleted') objects.delete(key);
    else
      objects.set(key, {
        name: observation.name,
        ...(observation.namespace !== undefined && { namespace: observation.namespace }),
        object: observation.object,
        observedAt: this.observedAt(),
      });
  }

  private recordQuota(quota: LearnedQuota): void {
    this.quotasOf(quota.namespace).set(quota.name, quota);
  }

  private snapshot(namespace: string): QuotaSnapshot {
    return { quotas: [...this.quotasOf(namespace).values()], charges: liveCharges(this.ledgerOf(namespace)) };
  }

  private hold(
    ledger: Map<string, HeldCharge>,
    object: ChargedObject,
    charge: Charge,
    state: HeldCharge['state'],
    requestUid: string,
  ): void {
    ledger.set(chargeKey(object), { object, ...charge, state, requestUid });
  }

  /** One request at a time: a reservation holds at once; a retry of the same uid counts once. */
  private reserveIn<Refusal>(
    ledger: Map<string, HeldCharge>,
    object: ChargedObject,
    charge: Charge,
    uid: string,
    writes: boolean,
    check: () => Refusal | undefined,
  ): ReserveOutcome<Refusal> {
    const held = ledger.get(chargeKey(object));
    if (held) return held.requestUid === uid ? { kind: 'already-counted' } : { kind: 'name-taken' };
    const refusal = check();
    if (refusal !== undefined) return { kind: 'refused', refusal };
    if (writes) this.hold(ledger, object, charge, 'reserved', uid);
    return { kind: 'reserved' };
  }

  /** sync's recount: the listed objects' charges replace those of `resources` where `covered`. */
  private recountIn(
    ledger: Map<string, HeldCharge>,
    resources: ReadonlySet<string>,
    objects: readonly { object: ChargedObject; charge: Charge }[],
    covered: (charge: HeldCharge) => boolean,
  ): { written: number; removed: number } {
    const listed = new Set(objects.map(({ object }) => chargeKey(object)));
    let removed = 0;
    for (const [key, held] of ledger)
      if (resources.has(held.object.resource) && covered(held) && !listed.has(key)) {
        ledger.delete(key);
        removed++;
      }
    for (const { object, charge } of objects) this.hold(ledger, object, charge, 'confirmed', 'listing');
    return { written: objects.length, removed };
  }

  /** `npm run sync`'s loading, into memory (infra/sync applyListings): nothing reads a request. */
  listingTarget(): ListingTarget {
    return {
      namespaces: {
        get: async (name) => this.learnedNamespace(name),
        record: async (name, record) => this.recordNamespace(name, record),
        recordCompleteListing: async () => {
          this.completeListing = true;
        },
      },
      ledger: {
        recordQuota: async (quota) => this.recordQuota(quota),
        recount: async (namespace, resources, objects) =>
          this.recountIn(this.ledgerOf(namespace), resources, objects, () => true),
      },
      clusterQuotaLedger: {
        recount: async (quota, resources, objects, listed) =>
          this.recountIn(this.ledgerOf(clusterLedger(quota)), resources, objects, (held) =>
            listed.has(held.object.namespace),
          ),
      },
      placements: { record: async (observation) => this.recordPlacement(observation) },
      learnedObjects: {
        list: async (kind) => [...this.kindOf(kind).values()],
        replaceAll: async (kind, observations) => {
          const objects = this.kindOf(kind);
          const listed = new Set(observations.map((o) => objectKey(o.name, o.namespace)));
          const stale = [...objects.keys()].filter((key) => !listed.has(key));
          for (const key of stale) objects.delete(key);
          for (const observation of observations) this.recordObject(observation);
          return stale.length;
        },
      },
      now: this.now,
    };
  }

  // ---- one request's ports ---------------------------------------------------------------------

  /** The state one plugin sees for one request; writes pass the dryRun gate. */
  state(request: Pick<AdmissionRequest, 'uid' | 'dryRun'>, plugin: string): LearningState {
    const writes = !request.dryRun && !this.readOnly;
    const uid = request.uid;
    return {
      learnedNamespaces: {
        get: async (name) => this.learnedNamespace(name),
        knownAbsent: async (name) => {
          const entry = this.namespaces.get(name);
          return entry ? entry.record.phase === 'Gone' : this.completeListing;
        },
      },
      namespaceLearner: {
        observe: async (r) => {
          const observation = isNamespaceRequest(r) ? namespaceObservation(r) : undefined;
          if (writes && observation) this.recordNamespace(observation.name, observation.record);
        },
      },
      learnedObjects: {
        get: async (kind, name, namespace) => this.objects.get(kind)?.get(objectKey(name, namespace)),
        list: async (kind, namespace) =>
          [...(this.objects.get(kind)?.values() ?? [])].filter(
            (learned) => namespace === undefined || learned.namespace === namespace,
          ),
      },
      objectLearner: {
        observe: async (r) => {
          const observation = learnedObjectObservation(r);
          if (writes && observation) this.recordObject(observation);
        },
      },
      learnedPlacements: {
        pod: async (namespace, name) => this.pods.get(`${namespace}/${name}`),
        node: async (name) => this.nodes.get(name),
      },
      placementLearner: {
        observe: async (r, admitted) => {
          const observation = placementObservation(r, admitted);
          if (writes && observation) this.recordPlacement(observation);
        },
      },
      quotaLedger: {
        quotas: async (namespace) => [...this.quotasOf(namespace).values()],
        reserve: async <Refusal>(
          object: ChargedObject,
          charge: Charge,
          check: (snapshot: QuotaSnapshot) => Refusal | undefined,
        ): Promise<ReserveOutcome<Refusal>> =>
          this.reserveIn(this.ledgerOf(object.namespace), object, charge, uid, writes, () =>
            check(this.snapshot(object.namespace)),
          ),
        confirm: async (object, charge) => {
          if (writes) this.hold(this.ledgerOf(object.namespace), object, charge, 'confirmed', uid);
        },
        release: async (object) => {
          if (writes) this.ledgerOf(object.namespace).delete(chargeKey(object));
        },
      },
      // One ledger per ClusterResourceQuota, across the namespaces it selects (lib/state keys the
      // charges the same way: by namespace and name).
      clusterQuotaLedger: {
        reserve: async (quota, object, charge, check) => {
          const ledger = this.ledgerOf(clusterLedger(quota));
          return this.reserveIn(ledger, object, charge, uid, writes, () => check(liveCharges(ledger)));
        },
        confirm: async (quota, object, charge) => {
          if (writes) this.hold(this.ledgerOf(clusterLedger(quota)), object, charge, 'confirmed', uid);
        },
        release: async (quota, object) => {
          if (writes) this.ledgerOf(clusterLedger(quota)).delete(chargeKey(object));
        },
      },
      quotaLearner: {
        observe: async (r) => {
          const observation = quotaObservation(r);
          if (!writes || !observation) return;
          if (observation.kind === 'stated') this.recordQuota(observation.quota);
          else this.quotasOf(observation.namespace).delete(observation.name);
        },
      },
      tokenBuckets: {
        take: async (buckets) => this.takeAll(buckets, uid, writes)[0] ?? -1,
        takeAll: async (buckets) => this.takeAll(buckets, uid, writes),
      },
      decisionCache: {
        get: async (key) => {
          const entry = this.cache.get(`${plugin}#${key}`);
          return entry && entry.expiresAtMs > this.now() ? entry.value : undefined;
        },
        put: async (key, value, ttlSeconds) => {
          if (writes && ttlSeconds > 0)
            this.cache.set(`${plugin}#${key}`, { value, expiresAtMs: this.now() + ttlSeconds * 1000 });
        },
      },
    };
  }

  /** lib/state/token-buckets' arithmetic: refill since the last take, all tokens or none. */
  private takeAll(
    buckets: readonly { readonly key: string; readonly spec: BucketSpec }[],
    uid: string,
    writes: boolean,
  ): number[] {
    if (buckets.length === 0 || this.paid.has(uid)) return [];
    const nowMs = this.now();
    const levels = buckets.map(({ key, spec }) => {
      const bucket = this.buckets.get(key);
      const since = bucket ? Math.max(0, nowMs - bucket.atMs) / 1000 : 0;
      return Math.min(spec.burst, (bucket?.tokens ?? spec.burst) + since * spec.qps);
    });
    const empty = levels.flatMap((tokens, i) => (tokens < 1 ? [i] : []));
    if (empty.length > 0 || !writes) return empty;
    for (const [i, { key }] of buckets.entries()) this.buckets.set(key, { tokens: levels[i] - 1, atMs: nowMs });
    this.paid.add(uid);
    return [];
  }
}
