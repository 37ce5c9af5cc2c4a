// The quota ledger: what each object in a namespace consumes, and the ResourceQuotas learned from
// their writes. One partition per namespace (`rq#<namespace>`), so a single strongly consistent
// Query reads every quota and charge the check needs.
//
// Admission is not persistence: a later webhook may refuse the request, the name may already
// exist, etcd may fail. So a charge made at admission is a *reservation* that expires
// (QUOTA_RESERVATION_SECONDS, default 900) unless confirmed. A later observation of the object (any
// UPDATE of it or its status, which the kubelet sends within seconds of scheduling) confirms it;
// `npm run sync -- --from pods.json` recounts a namespace from a listing. An expired reservation
// stops counting at once, before DynamoDB's lazy TTL sweep deletes it.
//
// Concurrency. A ReplicaSet scale-up sends tens of creates into one namespace at once. Checking
// against a snapshot and committing only if nothing changed meanwhile (a guard version) makes
// every pair of them conflict: O(N²) cancelled transactions, and under DynamoDB's real latency the
// last ones reach their deadline. Instead a reservation never conflicts; it queues:
//
//   1. hold    Put charge#<object> state=pending, only if the name is free (or its charge
//              expired). Identity and idempotency are settled here, before any counting.
//   2. queue   UpdateItem `queue`: append {request uid, charge} to one list and return the whole
//              list (ALL_NEW). DynamoDB applies updates of one item one at a time, so every
//              request gets a position, and sees exactly who is ahead of it, without a conflict.
//   3. decide  Query the partition. `live` = confirmed charges + unexpired reservations. The
//              pending charges of requests *ahead* are undecided: they may still be admitted.
//                check(live + me) fails                  -> refused: delete my pending charge
//                check(live + undecided ahead + me) fits -> reserved: pending becomes reserved
//                otherwise                               -> wait for those ahead, Query again
//
// Nobody waits on anyone behind them, so the queue drains front to back; in a burst the first N
// that fit are reserved at once, and the rest wait only until the reservations ahead are written.
// No overshoot: of any two requests admitted, the one behind counted the one ahead (as live or
// as undecided) because the one ahead held its charge before it queued. Four calls per create,
// none retried; the old scheme needed two per attempt and N attempts for the N-th of a burst.
//
//   request A (uid a, pod p1)          store (rq#ns)                       request B (uid b, pod p2)
//   -----------------------------      ---------------------------------   -----------------------------
//   Put p1 pending (a) if free    -->  p1 pending                     <--  Put p2 pending (b) if free
//                                      p2 pending
//   queue += (a, p1)              -->  queue [(a,p1)]  -> A: none ahead
//                                      queue [(a,p1),(b,p2)]          <--  queue += (b, p2)
//                                                                          B: (a,p1) ahead
//   Query: used pods=0                                                     Query: used pods=0, p1 undecided
//   check 0+1 <= 1: fits                                                   check 0+1 <= 1: fits, 0+1+1 > 1
//   p1 pending -> reserved        -->  p1 reserved                         wait for A
//                                                                          Query: used pods=1
//                                      p2 deleted                     <--  check 1+1 > 1: refused
//   retry of A (uid a) ---------->     p1 held by uid a, reserved: already counted (no write)
//
// A request that dies while pending holds its place until its pending charge expires
// (PENDING_SECONDS, longer than any webhook timeout); those behind it wait only when the quota is
// nearly full. The queue keeps decided entries until a request finds many at its head and trims
// them (a conditional REMOVE, so two trims never remove twice).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Charge, ChargedObject, LearnedQuota, LiveCharge, QuotaLedger, QuotaSnapshot, ReserveOutcome } from './ports.js';
import { AGAIN, retryWithJitter } from './retry.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, json, N, num, S, str } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';

export const DEFAULT_RESERVATION_SECONDS = 900;
/** How long a charge may stay pending: longer than any webhook timeout (at most 30 s). */
export const PENDING_SECONDS = 60;
/** Restarts of one reservation (its pending charge lost meanwhile): rare, so few. */
const MAX_HOLDS = 20;
/** Queries while waiting for the requests ahead to decide: each takes a round trip and a pause. */
const MAX_WAITS = 400;
/** Decided entries at the queue's head worth one trimming write. */
const TRIM_AT = 64;

const partition = (namespace: string) => `rq#${namespace}`;
const chargeSk = (object: Pick<ChargedObject, 'resource' | 'name'>) => `charge#${object.resource}#${object.name}`;
const quotaSk = (name: string) => `quota#${name}`;
const QUEUE_SK = 'queue';

type ChargeState = 'pending' | 'reserved' | 'confirmed';
/** One place in a namespace's queue: the request and the charge it holds. */
interface QueueEntry {
  readonly uid: string;
  readonly sk: string;
}

export function reservationSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.QUOTA_RESERVATION_SECONDS ?? DEFAULT_RESERVATION_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_RESERVATION_SECONDS;
}

const stateOf = (item: Item): ChargeState => {
  const state = str(item, 'state');
  return state === 'confirmed' || state === 'pending' ? state : 'reserved';
};

function decodeCharge(namespace: string, item: Item): LiveCharge | undefined {
  const sk = str(item, 'sk') ?? '';
  const [, resource, ...rest] = sk.split('#');
  const data = json<Charge>(item, 'data');
  if (!data || resource === undefined) return undefined;
  const uid = str(item, 'objectUid');
  return {
    object: { namespace, resource, name: rest.join('#'), ...(uid && { uid }) },
    usage: data.usage,
    facts: data.facts,
    state: stateOf(item) === 'confirmed' ? 'confirmed' : 'reserved',
  };
}

function decodeQuota(namespace: string, item: Item): LearnedQuota | undefined {
  const data = json<Omit<LearnedQuota, 'namespace'>>(item, 'data');
  return data && { ...data, namespace };
}

const decodeQueue = (item: Item | undefined): QueueEntry[] => (item?.entries?.L ?? []).map((e) => ({ uid: e.M?.u?.S ?? '', sk: e.M?.k?.S ?? '' }));
const encodeEntry = (entry: QueueEntry): AttributeValue => ({ M: { u: S(entry.uid), k: S(entry.sk) } });

interface NamespaceLedger {
  quotas: LearnedQuota[];
  /** Every charge item by sort key, expired and pending ones included. */
  charges: Map<string, Item>;
  /** Confirmed charges and unexpired reservations: what counts now. */
  live: LiveCharge[];
}

export class QuotaLedgerStore implements QuotaLedger {
  constructor(
    private readonly store: StateStore,
    private readonly requestUid: string,
    private readonly reservationSeconds: number = reservationSecondsFromEnv(),
  ) {}

  async quotas(namespace: string): Promise<LearnedQuota[]> {
    const items = await this.store.query(partition(namespace), 'quota#');
    return items.flatMap((item) => decodeQuota(namespace, item) ?? []);
  }

  /** Quotas and charges of a namespace, read once (strongly consistent). */
  private async read(namespace: string): Promise<NamespaceLedger> {
    const items = await this.store.query(partition(namespace));
    const quotas: LearnedQuota[] = [];
    const charges = new Map<string, Item>();
    const live: LiveCharge[] = [];
    for (const item of items) {
      const sk = str(item, 'sk') ?? '';
      if (sk.startsWith('quota#')) {
        const quota = decodeQuota(namespace, item);
        if (quota) quotas.push(quota);
      } else if (sk.startsWith('charge#')) {
        charges.set(sk, item);
        if (this.store.expired(item) || stateOf(item) === 'pending') continue;
        const charge = decodeCharge(namespace, item);
        if (charge) live.push(charge);
      }
    }
    return { quotas, charges, live };
  }

  private chargeItem(object: ChargedObject, charge: Charge, state: ChargeState): Item {
    const lifetime = state === 'pending' ? PENDING_SECONDS : state === 'reserved' ? this.reservationSeconds : undefined;
    return {
      pk: S(partition(object.namespace)),
      sk: S(chargeSk(object)),
      data: S(JSON.stringify({ usage: charge.usage, facts: charge.facts })),
      state: S(state),
      requestUid: S(this.requestUid),
      ...(object.uid && { objectUid: S(object.uid) }),
      ...(lifetime !== undefined && { [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + lifetime) }),
    };
  }

  /** What a charge already held under the object's name means for this request. */
  private heldBy(item: Item): ReserveOutcome<never> | typeof AGAIN {
    if (str(item, 'requestUid') !== this.requestUid) return { kind: 'name-taken' };
    // The same request is being reserved by another attempt (an apiserver retry): wait for it.
    return stateOf(item) === 'pending' ? AGAIN : { kind: 'already-counted' };
  }

  async reserve<Refusal>(object: ChargedObject, charge: Charge, check: (snapshot: QuotaSnapshot) => Refusal | undefined): Promise<ReserveOutcome<Refusal>> {
    if (this.store.dryRun) return this.reserveDryRun(object, check);
    const sk = chargeSk(object);
    return retryWithJitter(`quota ledger: namespace ${object.namespace}`, MAX_HOLDS, async () => {
      // 1. hold: the name is ours, or the outcome is known without counting.
      try {
        await this.store.put({
          Item: this.chargeItem(object, charge, 'pending'),
          // The Powertools idempotency condition: absent, or a charge past its time.
          ConditionExpression: `attribute_not_exists(pk) OR ${TTL_ATTRIBUTE} <= :now`,
          ExpressionAttributeValues: { ':now': N(this.store.nowSeconds()) },
        });
      } catch (error) {
        if (!(error instanceof ConditionFailed)) throw error;
        return error.old ? this.heldBy(error.old) : AGAIN;
      }
      // 2. queue: our place, and everyone ahead of us.
      const queue = decodeQueue(
        await this.store.updateReturning({
          Key: { pk: S(partition(object.namespace)), sk: S(QUEUE_SK) },
          UpdateExpression: 'SET #e = list_append(if_not_exists(#e, :empty), :me)',
          ExpressionAttributeNames: { '#e': 'entries' },
          ExpressionAttributeValues: { ':empty': { L: [] }, ':me': { L: [encodeEntry({ uid: this.requestUid, sk })] } },
        }),
      );
      let place = queue.length - 1;
      while (place > 0 && !(queue[place].uid === this.requestUid && queue[place].sk === sk)) place--;
      // 3. decide, waiting only for requests ahead.
      return this.decide(object, check, queue, place);
    });
  }

  private decide<Refusal>(object: ChargedObject, check: (snapshot: QuotaSnapshot) => Refusal | undefined, queue: readonly QueueEntry[], place: number): Promise<ReserveOutcome<Refusal> | typeof AGAIN> {
    const ahead = queue.slice(0, place);
    return retryWithJitter(`quota ledger: namespace ${object.namespace} waiting for ${ahead.length} requests ahead`, MAX_WAITS, async (wait) => {
      const { quotas, charges, live } = await this.read(object.namespace);
      if (wait === 0) await this.trim(object.namespace, ahead, charges);
      const refusal = check({ quotas, charges: live });
      if (refusal !== undefined) {
        await this.drop(object);
        return { kind: 'refused', refusal };
      }
      const undecided = ahead.flatMap((entry) => {
        const item = this.pendingOf(entry, charges);
        return (item && decodeCharge(object.namespace, item)) || [];
      });
      if (undecided.length > 0 && check({ quotas, charges: [...live, ...undecided] }) !== undefined) return AGAIN;
      return this.promote(object);
    });
  }

  /** The charge an entry still holds pending, if it does: the request has not decided yet. */
  private pendingOf(entry: QueueEntry, charges: ReadonlyMap<string, Item>): Item | undefined {
    const item = charges.get(entry.sk);
    if (!item || this.store.expired(item) || stateOf(item) !== 'pending' || str(item, 'requestUid') !== entry.uid) return undefined;
    if (entry.uid === this.requestUid) return undefined; // an earlier attempt of ours, superseded
    return item;
  }

  /** Pending becomes reserved: counted, expiring unless confirmed. */
  private async promote(object: ChargedObject): Promise<ReserveOutcome<never> | typeof AGAIN> {
    try {
      await this.store.update({
        Key: { pk: S(partition(object.namespace)), sk: S(chargeSk(object)) },
        UpdateExpression: 'SET #state = :reserved, #exp = :exp',
        ConditionExpression: 'requestUid = :me AND #state = :pending',
        ExpressionAttributeNames: { '#state': 'state', '#exp': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':reserved': S('reserved'), ':pending': S('pending'), ':me': S(this.requestUid), ':exp': N(this.store.nowSeconds() + this.reservationSeconds) },
      });
      return { kind: 'reserved' };
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      // Confirmed meanwhile by an update of the object: counted. Gone (released, or expired and
      // swept): hold again. Another request's now: our pending charge expired and the name went.
      if (!error.old) return AGAIN;
      if (stateOf(error.old) === 'confirmed') return { kind: 'reserved' };
      return str(error.old, 'requestUid') === this.requestUid ? { kind: 'reserved' } : { kind: 'name-taken' };
    }
  }

  /** A refused request gives its name back at once, so those behind it need not wait. */
  private async drop(object: ChargedObject): Promise<void> {
    try {
      await this.store.delete({
        Key: { pk: S(partition(object.namespace)), sk: S(chargeSk(object)) },
        ConditionExpression: 'requestUid = :me AND #state = :pending',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':me': S(this.requestUid), ':pending': S('pending') },
      });
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
  }

  /** Removes the decided entries at the queue's head once there are many. */
  private async trim(namespace: string, ahead: readonly QueueEntry[], charges: ReadonlyMap<string, Item>): Promise<void> {
    let decided = 0;
    while (decided < ahead.length && this.pendingOf(ahead[decided], charges) === undefined && !this.isOurs(ahead[decided], charges)) decided++;
    if (decided < TRIM_AT) return;
    const [first, last] = [ahead[0], ahead[decided - 1]];
    try {
      await this.store.update({
        Key: { pk: S(partition(namespace)), sk: S(QUEUE_SK) },
        UpdateExpression: `REMOVE ${Array.from({ length: decided }, (_, i) => `#e[${i}]`).join(', ')}`,
        // Only if the head is still what was read: two trims never remove twice.
        ConditionExpression: `#e[0].#u = :fu AND #e[0].#k = :fk AND #e[${decided - 1}].#u = :lu AND #e[${decided - 1}].#k = :lk`,
        ExpressionAttributeNames: { '#e': 'entries', '#u': 'u', '#k': 'k' },
        ExpressionAttributeValues: { ':fu': S(first.uid), ':fk': S(first.sk), ':lu': S(last.uid), ':lk': S(last.sk) },
      });
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
  }

  /** An entry of this request still pending (an earlier attempt): not decided, so never trimmed. */
  private isOurs(entry: QueueEntry, charges: ReadonlyMap<string, Item>): boolean {
    const item = charges.get(entry.sk);
    return entry.uid === this.requestUid && item !== undefined && stateOf(item) === 'pending' && !this.store.expired(item);
  }

  /** A dry run gets the real answer from the same read, and writes nothing. */
  private async reserveDryRun<Refusal>(object: ChargedObject, check: (snapshot: QuotaSnapshot) => Refusal | undefined): Promise<ReserveOutcome<Refusal>> {
    const { quotas, charges, live } = await this.read(object.namespace);
    const existing = charges.get(chargeSk(object));
    if (existing && !this.store.expired(existing)) {
      return str(existing, 'requestUid') === this.requestUid ? { kind: 'already-counted' } : { kind: 'name-taken' };
    }
    const refusal = check({ quotas, charges: live });
    return refusal === undefined ? { kind: 'reserved' } : { kind: 'refused', refusal };
  }

  async confirm(object: ChargedObject, charge: Charge): Promise<void> {
    const current = await this.store.get(partition(object.namespace), chargeSk(object));
    if (current && !this.store.expired(current) && str(current, 'state') === 'confirmed') return;
    if (current && !this.store.expired(current) && object.uid && str(current, 'objectUid') && str(current, 'objectUid') !== object.uid) return;
    try {
      // The object exists: it counts whatever the quota says (upstream's controller would count it
      // too). A create still pending finds its charge confirmed and answers reserved.
      await this.store.put({
        Item: this.chargeItem(object, charge, 'confirmed'),
        ConditionExpression: `attribute_not_exists(pk) OR #state <> :confirmed`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':confirmed': S('confirmed') },
      });
    } catch (error) {
      if (error instanceof ConditionFailed) return; // confirmed meanwhile by another request
      throw error;
    }
  }

  async release(object: ChargedObject): Promise<void> {
    try {
      await this.store.delete({
        Key: { pk: S(partition(object.namespace)), sk: S(chargeSk(object)) },
        // A review naming another object with the same name (a forged uid) frees nothing.
        ...(object.uid && {
          ConditionExpression: 'attribute_not_exists(objectUid) OR objectUid = :uid',
          ExpressionAttributeValues: { ':uid': S(object.uid) },
        }),
      });
    } catch (error) {
      if (error instanceof ConditionFailed) return;
      throw error;
    }
  }

  async recordQuota(quota: LearnedQuota): Promise<void> {
    const { namespace, ...data } = quota;
    await this.store.put({ Item: { pk: S(partition(namespace)), sk: S(quotaSk(quota.name)), data: S(JSON.stringify(data)), lastUid: S(this.requestUid) } });
  }

  async forgetQuota(namespace: string, name: string): Promise<void> {
    await this.store.delete({ Key: { pk: S(partition(namespace)), sk: S(quotaSk(name)) } });
  }

  /**
   * `npm run sync`: replaces a namespace's charges of `resources` with confirmed charges for the
   * objects of a listing (a recount). Stale reservations and charges of vanished objects go.
   */
  async recount(namespace: string, resources: ReadonlySet<string>, objects: readonly { object: ChargedObject; charge: Charge }[]): Promise<{ written: number; removed: number }> {
    const { charges } = await this.read(namespace);
    const keep = new Set(objects.map(({ object }) => chargeSk(object)));
    let removed = 0;
    for (const [sk, item] of charges) {
      const resource = sk.split('#')[1];
      if (!resources.has(resource) || keep.has(sk)) continue;
      if (stateOf(item) !== 'confirmed' && !this.store.expired(item)) continue; // in flight: may still be created
      await this.store.delete({ Key: { pk: S(partition(namespace)), sk: S(sk) } });
      removed++;
    }
    for (const { object, charge } of objects) await this.store.put({ Item: this.chargeItem(object, charge, 'confirmed') });
    return { written: objects.length, removed };
  }
}
