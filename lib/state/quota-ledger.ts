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
//   1. queue   UpdateItem rq#<ns>#queue: append {request uid, charge, usage} to one list and return the
//              whole list (ALL_NEW). DynamoDB applies the updates of one item one at a time, so
//              every request gets a place and sees exactly who is ahead of it, with no conflict.
//   2. read    Query the partition. `live` = confirmed charges + unexpired reservations. A request
//              ahead is *undecided* until its charge is written or its refusal is recorded: it
//              may still be admitted, so it counts as if it were.
//   3. decide  check(live + me) fails                  -> refused: Put decided#<uid>
//              check(live + undecided ahead + me) fits -> Put charge#<object> reserved, only if
//                                                         the name is free (or its charge expired)
//              check(live + what those ahead will take, decided in queue order, + me) fails
//                                                      -> refused: Put decided#<uid>
//              otherwise                               -> wait for those ahead, read again
//
// "What those ahead will take" is upstream's batch (plugin/pkg/admission/resourcequota: the
// quotaEvaluator checks a namespace's waiting requests in order, each against the usage the ones
// before it added): each undecided request ahead is judged by its queued charge against what
// precedes it, `fits` or `exceeds` (the plugin's `judge`); one holding a name taken before it will
// be `name-taken`. A request whose refusal would need its object (a pod under a quota on cpu or
// memory must state them in every container) cannot be judged so, and those behind it wait.
//
// Nobody waits on anyone behind them, so the queue drains front to back; in a burst the first N
// that fit are reserved at once, and the rest are refused at once behind them. No overshoot: of
// any two requests admitted, the one behind saw the one ahead in its queue, and counted it
// (undecided, or live once written); the third rule only refuses. Its judgement of those ahead is
// theirs unless the ledger changes between their reads (a charge freed or expired meanwhile):
// then a request may be refused that a later read would admit, as upstream refuses against a
// quota status its controller has not yet recalculated. Three calls per create and none retried;
// a guard takes two per attempt and N attempts for the N-th create of a burst.
//
//   request A (uid a, pod p1)          store (rq#ns)                       request B (uid b, pod p2)
//   -----------------------------      ---------------------------------   -----------------------------
//   queue += (a, p1, pods=1)      -->  queue [(a,p1)]
//   A: nobody ahead                    queue [(a,p1),(b,p2)]          <--  queue += (b, p2, pods=1)
//                                                                          B: (a,p1) ahead
//   Query: used pods=0                                                     Query: used pods=0, a undecided
//   check 0+1 <= 1: fits                                                   check 0+1 <= 1 fits, 0+1+1 > 1;
//   Put p1 reserved if free       -->  charge p1 reserved (a)              a fits first: 1+1 > 1
//                                      decided#b                      <--  refused
//   retry of A (uid a): queued, then charge p1 held by uid a: already counted (no write)
//
// One burst, as `npm run bench` traces it (quota-burst: 64 creates against pods: 32, every store
// call 10 ms away). Writes to one item are applied one at a time, so the queue is the burst's
// one serialized step; everything after it runs side by side:
//
//   time ->        0        ~T_q                 ~T_q + 2 rtt
//   p0..p31   U U U U U U | Q  Put charge ------> allowed
//   p32..p63  U U U U U U | Q  Put decided# ----> refused (the 32 ahead fill the quota)
//             `- appends --'   read, decide      record the decision
//              serialized      (one round trip)  (those behind stop counting it)
//
// T_q is 64 appends of a growing item, one after another: on DynamoDB Local in memory a few ms
// each, on its persistent (SQLite on disk) store, which `npm start` uses, 10-25 ms each under
// load, and every later write of the burst (32 charges, 32 refusals) is serialized behind them
// there too: that, not the server, is what the seconds through `npm start` are (bench/results.json,
// quotaBurst.throughServer.persistent). Waiting is left to requests ahead that cannot be judged
// by their charge; those re-read at the store's own pace, since reads that do not pace themselves
// compete with the writes they wait for.
//
// On Lambda each create is its own instance and every call a network round trip (DynamoDB's
// published single-digit ms; 10 ms here). The appends of one namespace's queue are the limit: a
// write to one item is charged by the item's size, ~200 bytes a queued entry, so the N-th append
// of a burst costs about N/5 write units, N appends about N^2/10, against 1,000 write units a
// second for one partition key. A burst of N creates then answers its last request after about
// N^2/10 ms of appends plus three round trips (append, read, write) plus, for instances started
// by the burst, one cold start (~0.2-0.3 s, an estimate): N = 64 about 0.7 s, N = 150 about 2.5 s,
// N = 200 about 4.3 s. So the p99 stays under ResourceQuota's 5 s webhook
// timeout (timeoutSeconds: 5 in its metadata) up to about 200 creates in one namespace at once;
// past that a burst needs more than the one queue item of its namespace (a sharded queue).
//
// Identity is settled by the charge's own condition: a name held by another request's live
// charge is `name-taken` (recorded in decided#<uid>), by this request's `already-counted`. A
// charge freed (DELETE) while its request could still be in a queue leaves decided#<uid> too, so
// nobody counts it again. A request that dies undecided holds its place for PENDING_SECONDS
// (longer than any webhook timeout); those behind it wait only when the quota is nearly full. A
// request that finds many decided entries at the queue's head trims them and their decided#
// records (a conditional REMOVE, so two trims never remove twice). DynamoDB bills an update by
// the item's size, so the queue is kept short: ~200 bytes an entry, trimmed every TRIM_AT.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { quotaObservation } from '../admission/learning.js';
import type { AdmissionRequest } from '../admission/request.js';
import type {
  Charge,
  ChargedObject,
  LearnedQuota,
  LiveCharge,
  QuotaLedger,
  QueuedVerdict,
  QuotaSnapshot,
  ReserveOutcome,
} from '../admission/ports.js';
import { StoreUnavailableError } from '../admission/ports.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, json, N, num, S, str } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';
import { PARTITION } from './partitions.js';

export const DEFAULT_RESERVATION_SECONDS = 900;
/** How long a queued request may stay undecided: longer than any webhook timeout (at most 30 s). */
export const PENDING_SECONDS = 60;
/**
 * Reads while waiting for the requests ahead to decide, each a round trip and a pause: about 10 s
 * in all, past any webhook's timeout, after which the request answers 500.
 */
const MAX_WAITS = 100;
/** The shortest pause between two reads while waiting: about one store round trip. */
const WAIT_FLOOR_MS = 5;
/** The longest pause between two reads while waiting. */
const WAIT_CEILING_MS = 100;

/**
 * The pause before read `wait + 1` while requests ahead are undecided: paced by the store, at
 * about the round trip the last read took (a busy store answers slowly, and every read a waiter
 * sends competes with the writes it waits for), growing by half each time, between
 * WAIT_FLOOR_MS and WAIT_CEILING_MS, with jitter so the waiters of one burst spread out.
 */
export function waitPauseMs(wait: number, lastReadMs: number, random: () => number = Math.random): number {
  const paced = Math.min(WAIT_CEILING_MS, Math.max(WAIT_FLOOR_MS, lastReadMs) * 1.5 ** wait);
  return Math.round(paced * (0.5 + random()));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Decided entries at the queue's head worth one trimming write (each entry is ~200 bytes). */
const TRIM_AT = 16;

const chargeSk = (object: Pick<ChargedObject, 'resource' | 'name'>) => `charge#${object.resource}#${object.name}`;
const quotaSk = (name: string) => `quota#${name}`;
const decidedSk = (requestUid: string) => `decided#${requestUid}`;
const QUEUE_SK = 'queue';

/** One place in a namespace's queue: the request, the charge it asks for, and when it queued. */
interface QueueEntry {
  readonly uid: string;
  readonly sk: string;
  /** The charge as stored in charge items' `data`: counted while the request is undecided. */
  readonly data: string;
  readonly queuedAt: number;
}

export function reservationSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.QUOTA_RESERVATION_SECONDS ?? DEFAULT_RESERVATION_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_RESERVATION_SECONDS;
}

const isConfirmed = (item: Item | undefined) => str(item, 'state') === 'confirmed';

function chargeFromSk(
  namespace: string,
  sk: string,
  data: Charge | undefined,
  state: LiveCharge['state'],
  uid?: string,
): LiveCharge | undefined {
  const [, resource, ...rest] = sk.split('#');
  if (!data || resource === undefined) return undefined;
  return {
    object: { namespace, resource, name: rest.join('#'), ...(uid && { uid }) },
    usage: data.usage,
    facts: data.facts,
    state,
  };
}

const decodeCharge = (namespace: string, item: Item) =>
  chargeFromSk(
    namespace,
    str(item, 'sk') ?? '',
    json<Charge>(item, 'data'),
    isConfirmed(item) ? 'confirmed' : 'reserved',
    str(item, 'objectUid'),
  );

function decodeQuota(namespace: string, item: Item): LearnedQuota | undefined {
  const data = json<Omit<LearnedQuota, 'namespace'>>(item, 'data');
  return data && { ...data, namespace };
}

const decodeQueue = (item: Item | undefined): QueueEntry[] =>
  (item?.entries?.L ?? []).map(({ M: e = {} }) => ({
    uid: e.u?.S ?? '',
    sk: e.k?.S ?? '',
    data: e.c?.S ?? '',
    queuedAt: Number(e.t?.N ?? 0),
  }));
const encodeEntry = (e: QueueEntry): AttributeValue => ({
  M: { u: S(e.uid), k: S(e.sk), c: S(e.data), t: N(e.queuedAt) },
});

interface NamespaceLedger {
  quotas: LearnedQuota[];
  /** Every charge item by sort key, expired ones included. */
  charges: Map<string, Item>;
  /** Confirmed charges and unexpired reservations: what counts now. */
  live: LiveCharge[];
  /** Requests that recorded a decision without a charge of their own (refused, or freed). */
  decided: Set<string>;
}

export class QuotaLedgerStore implements QuotaLedger {
  /**
   * `prefix` names the kind of ledger: `rq` (a namespace's ResourceQuotas, partitions
   * `rq#<namespace>`) or `crq` (one ClusterResourceQuota's charges across its namespaces,
   * `crq#<quota>`, lib/state/cluster-quota-ledger.ts). The algorithm is the same.
   */
  constructor(
    private readonly store: StateStore,
    private readonly requestUid: string,
    private readonly reservationSeconds: number = reservationSecondsFromEnv(),
    private readonly prefix: typeof PARTITION.quota | typeof PARTITION.clusterQuota = PARTITION.quota,
  ) {}

  private partition(scope: string): string {
    return `${this.prefix}${scope}`;
  }

  /** The queue has its own partition, so reading the ledger does not read the queue again. */
  private queuePartition(scope: string): string {
    return `${this.prefix}${scope}#queue`;
  }

  async quotas(namespace: string): Promise<LearnedQuota[]> {
    const items = await this.store.query(this.partition(namespace), 'quota#');
    return items.flatMap((item) => decodeQuota(namespace, item) ?? []);
  }

  /** Quotas, charges and decisions of a namespace, read once (strongly consistent). */
  private async read(namespace: string): Promise<NamespaceLedger> {
    const items = await this.store.query(this.partition(namespace));
    const ledger: NamespaceLedger = { quotas: [], charges: new Map(), live: [], decided: new Set() };
    for (const item of items) {
      const sk = str(item, 'sk') ?? '';
      if (sk.startsWith('quota#')) {
        const quota = decodeQuota(namespace, item);
        if (quota) ledger.quotas.push(quota);
      } else if (sk.startsWith('charge#')) {
        ledger.charges.set(sk, item);
        if (this.store.expired(item)) continue; // an unconfirmed reservation past its time
        const charge = decodeCharge(namespace, item);
        if (charge) ledger.live.push(charge);
      } else if (sk.startsWith('decided#')) {
        ledger.decided.add(sk.slice('decided#'.length));
      }
    }
    return ledger;
  }

  private chargeItem(object: ChargedObject, charge: Charge, state: 'reserved' | 'confirmed'): Item {
    return {
      pk: S(this.partition(object.namespace)),
      sk: S(chargeSk(object)),
      data: S(JSON.stringify({ usage: charge.usage, facts: charge.facts })),
      state: S(state),
      requestUid: S(this.requestUid),
      reservedAt: N(this.store.nowSeconds()),
      ...(object.uid && { objectUid: S(object.uid) }),
      ...(state === 'reserved' && { [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + this.reservationSeconds) }),
    };
  }

  async reserve<Refusal>(
    object: ChargedObject,
    charge: Charge,
    check: (snapshot: QuotaSnapshot) => Refusal | undefined,
    judge?: (snapshot: QuotaSnapshot, queued: LiveCharge) => QueuedVerdict,
  ): Promise<ReserveOutcome<Refusal>> {
    if (this.store.dryRun) return this.reserveDryRun(object, check);
    const me: QueueEntry = {
      uid: this.requestUid,
      sk: chargeSk(object),
      data: JSON.stringify({ usage: charge.usage, facts: charge.facts }),
      queuedAt: this.store.nowSeconds(),
    };
    // 1. queue: our place, and everyone ahead of us.
    const queue = decodeQueue(
      await this.store.updateReturning({
        Key: { pk: S(this.queuePartition(object.namespace)), sk: S(QUEUE_SK) },
        UpdateExpression: 'SET #e = list_append(if_not_exists(#e, :empty), :me)',
        ExpressionAttributeNames: { '#e': 'entries' },
        ExpressionAttributeValues: { ':empty': { L: [] }, ':me': { L: [encodeEntry(me)] } },
      }),
    );
    let place = queue.length - 1;
    while (place >= 0 && !(queue[place].uid === me.uid && queue[place].sk === me.sk)) place--;
    // ALL_NEW holds our own append; without it we could not know who is ahead, so nothing is decided.
    if (place < 0)
      throw new StoreUnavailableError(`quota ledger: namespace ${object.namespace}: our queue entry is missing`);
    const ahead = queue.slice(0, place);
    // 2. read, 3. decide; again after a pause while requests ahead are undecided.
    for (let wait = 0; wait < MAX_WAITS; wait++) {
      const started = performance.now();
      const ledger = await this.read(object.namespace);
      const readMs = performance.now() - started;
      const decision = this.decide(object, charge, ahead, ledger, check, judge);
      if (decision === undefined) {
        await sleep(waitPauseMs(wait, readMs));
        continue;
      }
      // One request in TRIM_AT tries to trim, so a burst does not send a trim per request; beside
      // its own decision's write, so the trim costs it no round trip. The answer is the decision's:
      // a trim that fails leaves the queue as it was (the next trimming request tries again), and
      // a decision written is not turned into a 5xx by it.
      const trimming = wait === 0 && place > 0 && place % TRIM_AT === 0;
      const [outcome] = await Promise.allSettled([
        decision(),
        trimming ? this.trim(object.namespace, ahead, ledger) : undefined,
      ]);
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    }
    throw new StoreUnavailableError(
      `quota ledger: namespace ${object.namespace}, ${ahead.length} requests ahead: still undecided after ${MAX_WAITS} reads`,
    );
  }

  /**
   * Step 3 on one read of the ledger: the write that decides this request, or undefined while the
   * requests ahead leave it open (it fits only if some of them are refused).
   */
  private decide<Refusal>(
    object: ChargedObject,
    charge: Charge,
    ahead: readonly QueueEntry[],
    ledger: NamespaceLedger,
    check: (snapshot: QuotaSnapshot) => Refusal | undefined,
    judge: ((snapshot: QuotaSnapshot, queued: LiveCharge) => QueuedVerdict) | undefined,
  ): (() => Promise<ReserveOutcome<Refusal>>) | undefined {
    const { quotas, live } = ledger;
    const held = ledger.charges.get(chargeSk(object));
    if (held && !this.store.expired(held)) return () => Promise.resolve(this.heldBy(object, held));
    const refusal = check({ quotas, charges: live });
    if (refusal !== undefined) return () => this.decided(object, { kind: 'refused' as const, refusal });
    const undecided = ahead.flatMap((entry) => {
      if (!this.isUndecided(entry, ledger)) return [];
      return chargeFromSk(object.namespace, entry.sk, JSON.parse(entry.data) as Charge, 'reserved') ?? [];
    });
    // Fits even if every undecided request ahead is admitted: nothing they do can make it overshoot.
    if (undecided.length === 0 || check({ quotas, charges: [...live, ...undecided] }) === undefined)
      return () => this.admit(object, charge);
    // Cannot fit behind what those ahead will take, decided in queue order: refused now, as
    // upstream's evaluator refuses a waiting request after the ones ahead in its batch.
    const taken = judge && this.chargesAfterAhead(object.namespace, ahead, ledger, judge);
    const behind = taken && check({ quotas, charges: taken });
    if (behind !== undefined) return () => this.decided(object, { kind: 'refused' as const, refusal: behind });
    return undefined;
  }

  /**
   * What will count once the requests ahead have decided: the live charges of requests not queued
   * ahead, then, in queue order, the charges of those ahead that are written, or that `judge` says
   * fit beside everything before them (one holding a name taken before it would be `name-taken`).
   * Undefined when a request ahead cannot be judged by its charge alone.
   *
   * Only a refusal is decided on it. Refusing never overshoots a quota; and the requests ahead
   * decide as judged here unless the ledger changes under them (a charge freed or expired
   * meanwhile), the window in which upstream's own counting is stale too.
   */
  private chargesAfterAhead(
    namespace: string,
    ahead: readonly QueueEntry[],
    ledger: NamespaceLedger,
    judge: (snapshot: QuotaSnapshot, queued: LiveCharge) => QueuedVerdict,
  ): LiveCharge[] | undefined {
    const ownCharge = (entry: QueueEntry) => {
      const item = ledger.charges.get(entry.sk);
      return item && str(item, 'requestUid') === entry.uid ? item : undefined;
    };
    const aheadCharges = new Set(ahead.flatMap((entry) => (ownCharge(entry) ? [entry.sk] : [])));
    const taken = new Set<string>();
    const counted: LiveCharge[] = [];
    for (const [sk, item] of ledger.charges) {
      if (this.store.expired(item)) continue;
      taken.add(sk);
      if (aheadCharges.has(sk)) continue;
      const live = decodeCharge(namespace, item);
      if (live) counted.push(live);
    }
    for (const entry of ahead) {
      if (entry.uid === this.requestUid) continue;
      const written = ownCharge(entry);
      if (written) {
        const live = !this.store.expired(written) && aheadCharges.delete(entry.sk) && decodeCharge(namespace, written);
        if (live) counted.push(live);
        continue;
      }
      if (!this.isUndecided(entry, ledger) || taken.has(entry.sk)) continue;
      const queued = chargeFromSk(namespace, entry.sk, JSON.parse(entry.data) as Charge, 'reserved');
      if (!queued) continue;
      const verdict = judge({ quotas: ledger.quotas, charges: counted }, queued);
      if (verdict === 'unknown') return undefined;
      if (verdict === 'fits') {
        counted.push(queued);
        taken.add(entry.sk);
      }
    }
    return counted;
  }

  /** Whether a request ahead may still write its charge, so those behind must count it. */
  private isUndecided(entry: QueueEntry, ledger: NamespaceLedger): boolean {
    if (entry.uid === this.requestUid) return false; // an earlier attempt of this request
    if (entry.queuedAt + PENDING_SECONDS <= this.store.nowSeconds()) return false; // it died undecided
    if (ledger.decided.has(entry.uid)) return false;
    const item = ledger.charges.get(entry.sk);
    // Its own charge is written (and counts while live), or the object exists and is counted.
    return !(item && (str(item, 'requestUid') === entry.uid || isConfirmed(item)));
  }

  /** The charge, only if the name is free or its charge past its time. */
  private async admit(object: ChargedObject, charge: Charge): Promise<ReserveOutcome<never>> {
    try {
      await this.store.put({
        Item: this.chargeItem(object, charge, 'reserved'),
        // The Powertools idempotency condition: absent, or a reservation past its time.
        ConditionExpression: `attribute_not_exists(pk) OR ${TTL_ATTRIBUTE} <= :now`,
        ExpressionAttributeValues: { ':now': N(this.store.nowSeconds()) },
      });
      return { kind: 'reserved' };
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      return this.heldBy(object, error.old);
    }
  }

  /** The name is held by a live charge: ours (a retry counts once) or another request's. */
  private heldBy(
    object: ChargedObject,
    item: Item | undefined,
  ): Promise<ReserveOutcome<never>> | ReserveOutcome<never> {
    // Our own charge already tells those behind that we are decided.
    if (str(item, 'requestUid') === this.requestUid) return { kind: 'already-counted' };
    return this.decided(object, { kind: 'name-taken' });
  }

  /** Records that this request wrote no charge of its own, so nobody behind it waits for one. */
  private async decided<Outcome>(
    object: ChargedObject,
    outcome: Outcome,
    requestUid = this.requestUid,
  ): Promise<Outcome> {
    const expiresAt = N(this.store.nowSeconds() + PENDING_SECONDS);
    await this.store.put({
      Item: { pk: S(this.partition(object.namespace)), sk: S(decidedSk(requestUid)), [TTL_ATTRIBUTE]: expiresAt },
    });
    return outcome;
  }

  /** Removes the decided entries at the queue's head, and their records, once there are many. */
  private async trim(namespace: string, ahead: readonly QueueEntry[], ledger: NamespaceLedger): Promise<void> {
    let decided = 0;
    while (
      decided < ahead.length &&
      !this.isUndecided(ahead[decided], ledger) &&
      ahead[decided].uid !== this.requestUid
    )
      decided++;
    if (decided < TRIM_AT) return;
    const [first, last] = [ahead[0], ahead[decided - 1]];
    try {
      await this.store.update({
        Key: { pk: S(this.queuePartition(namespace)), sk: S(QUEUE_SK) },
        UpdateExpression: `REMOVE ${Array.from({ length: decided }, (_, i) => `#e[${i}]`).join(', ')}`,
        // Only if the head is still what was read: two trims never remove twice.
        ConditionExpression: `#e[0].#u = :fu AND #e[0].#k = :fk AND #e[${decided - 1}].#u = :lu AND #e[${decided - 1}].#k = :lk`,
        ExpressionAttributeNames: { '#e': 'entries', '#u': 'u', '#k': 'k' },
        ExpressionAttributeValues: { ':fu': S(first.uid), ':fk': S(first.sk), ':lu': S(last.uid), ':lk': S(last.sk) },
      });
    } catch (error) {
      if (error instanceof ConditionFailed) return; // trimmed meanwhile by another request
      throw error;
    }
    const records = ahead.slice(0, decided).filter((entry) => ledger.decided.has(entry.uid));
    await this.store.deleteAll(
      records.map((entry) => ({ pk: S(this.partition(namespace)), sk: S(decidedSk(entry.uid)) })),
    );
  }

  /** A dry run gets the real answer from the same read, and writes nothing. */
  private async reserveDryRun<Refusal>(
    object: ChargedObject,
    check: (snapshot: QuotaSnapshot) => Refusal | undefined,
  ): Promise<ReserveOutcome<Refusal>> {
    const { quotas, charges, live } = await this.read(object.namespace);
    const existing = charges.get(chargeSk(object));
    if (existing && !this.store.expired(existing)) {
      return str(existing, 'requestUid') === this.requestUid ? { kind: 'already-counted' } : { kind: 'name-taken' };
    }
    const refusal = check({ quotas, charges: live });
    return refusal === undefined ? { kind: 'reserved' } : { kind: 'refused', refusal };
  }

  async confirm(object: ChargedObject, charge: Charge): Promise<void> {
    const current = await this.store.get(this.partition(object.namespace), chargeSk(object));
    if (current && !this.store.expired(current) && str(current, 'state') === 'confirmed') return;
    if (
      current &&
      !this.store.expired(current) &&
      object.uid &&
      str(current, 'objectUid') &&
      str(current, 'objectUid') !== object.uid
    )
      return;
    try {
      // The object exists, so it counts whatever the quota says (upstream's controller would
      // count it too); no check, so nothing to serialise with.
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
    let old: Item | undefined;
    try {
      old = await this.store.deleteReturning({
        Key: { pk: S(this.partition(object.namespace)), sk: S(chargeSk(object)) },
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
    // Freed within its queue entry's lifetime: record the reserving request as decided, or those
    // queued behind it would count it as undecided again.
    const requestUid = str(old, 'requestUid');
    if (requestUid && (num(old, 'reservedAt') ?? 0) + PENDING_SECONDS > this.store.nowSeconds())
      await this.decided(object, undefined, requestUid);
  }

  /**
   * Records what one ResourceQuota write teaches (the handler calls it for every plugin that needs
   * `resourcequotas`). A dry run writes nothing (the gate in store).
   */
  async observe(request: AdmissionRequest): Promise<void> {
    const observation = quotaObservation(request);
    // A CREATE of a quota already known to exist will be refused (AlreadyExists): it teaches nothing.
    if (
      observation?.kind === 'stated' &&
      request.operation === 'CREATE' &&
      (await this.quotas(observation.quota.namespace)).some((q) => q.name === observation.quota.name)
    )
      return;
    if (observation?.kind === 'stated') await this.recordQuota(observation.quota);
    else if (observation?.kind === 'deleted') await this.forgetQuota(observation.namespace, observation.name);
  }

  async recordQuota(quota: LearnedQuota): Promise<void> {
    const { namespace, ...data } = quota;
    await this.store.put({
      Item: {
        pk: S(this.partition(namespace)),
        sk: S(quotaSk(quota.name)),
        data: S(JSON.stringify(data)),
        lastUid: S(this.requestUid),
      },
    });
  }

  async forgetQuota(namespace: string, name: string): Promise<void> {
    await this.store.delete({ Key: { pk: S(this.partition(namespace)), sk: S(quotaSk(name)) } });
  }

  /**
   * `npm run sync`: replaces a namespace's charges of `resources` with confirmed charges for the
   * objects of a listing (a recount). Stale reservations and charges of vanished objects go.
   * `listed` says which charged names the listing covers (all, unless told).
   */
  async recount(
    namespace: string,
    resources: ReadonlySet<string>,
    objects: readonly { object: ChargedObject; charge: Charge }[],
    listed: (name: string) => boolean = () => true,
  ): Promise<{ written: number; removed: number }> {
    const { charges } = await this.read(namespace);
    const keep = new Set(objects.map(({ object }) => chargeSk(object)));
    let removed = 0;
    for (const [sk, item] of charges) {
      const [, resource, ...name] = sk.split('#');
      if (!resources.has(resource) || keep.has(sk) || !listed(name.join('#'))) continue;
      if (!isConfirmed(item) && !this.store.expired(item)) continue; // in flight: may still be created
      await this.store.delete({ Key: { pk: S(this.partition(namespace)), sk: S(sk) } });
      removed++;
    }
    for (const { object, charge } of objects)
      await this.store.put({ Item: this.chargeItem(object, charge, 'confirmed') });
    return { written: objects.length, removed };
  }
}
