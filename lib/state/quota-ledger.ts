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
// Concurrency: every reservation in a namespace bumps the namespace's guard version in the same
// transaction that writes the charge, conditioned on the version it read. Two creates that read
// the same usage cannot both commit; the loser re-reads and checks again, so a quota is never
// overshot. Idempotency: the charge is keyed by object identity and remembers the request uid.
//
//   request A (uid a, pod p1)           store (rq#ns)                    request B (uid b, pod p2)
//   ------------------------------      ------------------------------   ------------------------------
//   Query: guard v=7, used pods=1                                        Query: guard v=7, used pods=1
//   check 1+1 <= 2: fits                                                 check 1+1 <= 2: fits
//   Transact: guard v=7->8,        -->  guard v=8, charge p1 (a)
//             put charge p1 if absent
//                                       guard v=8 != 7: cancelled   <--  Transact: guard v=7->8, put p2
//                                                                        re-Query: v=8, used pods=2
//                                                                        check 2+1 > 2: refused
//   retry of A (uid a) -----------> charge p1 exists, requestUid a: already counted (no write)
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { Charge, ChargedObject, LearnedQuota, LiveCharge, QuotaLedger, QuotaSnapshot, ReserveOutcome } from '../admission/ports.js';
import { StoreUnavailableError } from '../admission/ports.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, json, N, num, S, str, TransactionConflict } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';

export const DEFAULT_RESERVATION_SECONDS = 900;
const MAX_ATTEMPTS = 200;

const partition = (namespace: string) => `rq#${namespace}`;
const chargeSk = (object: Pick<ChargedObject, 'resource' | 'name'>) => `charge#${object.resource}#${object.name}`;
const quotaSk = (name: string) => `quota#${name}`;
const GUARD_SK = 'guard';

export function reservationSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.QUOTA_RESERVATION_SECONDS ?? DEFAULT_RESERVATION_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_RESERVATION_SECONDS;
}

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
    state: str(item, 'state') === 'confirmed' ? 'confirmed' : 'reserved',
  };
}

function decodeQuota(namespace: string, item: Item): LearnedQuota | undefined {
  const data = json<Omit<LearnedQuota, 'namespace'>>(item, 'data');
  return data && { ...data, namespace };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

  /** Quotas and live charges of a namespace, read once (strongly consistent). */
  private async read(namespace: string): Promise<{ version: number; quotas: LearnedQuota[]; charges: Map<string, Item>; snapshot: QuotaSnapshot }> {
    const items = await this.store.query(partition(namespace));
    let version = 0;
    const quotas: LearnedQuota[] = [];
    const charges = new Map<string, Item>();
    const live: LiveCharge[] = [];
    for (const item of items) {
      const sk = str(item, 'sk') ?? '';
      if (sk === GUARD_SK) version = num(item, 'version') ?? 0;
      else if (sk.startsWith('quota#')) {
        const quota = decodeQuota(namespace, item);
        if (quota) quotas.push(quota);
      } else if (sk.startsWith('charge#')) {
        charges.set(sk, item);
        if (this.store.expired(item)) continue; // an unconfirmed reservation past its time
        const charge = decodeCharge(namespace, item);
        if (charge) live.push(charge);
      }
    }
    return { version, quotas, charges, snapshot: { quotas, charges: live } };
  }

  private guardUpdate(namespace: string, version: number): TransactWriteItem {
    return {
      Update: {
        TableName: this.store.table,
        Key: { pk: S(partition(namespace)), sk: S(GUARD_SK) },
        UpdateExpression: 'SET version = :next',
        ConditionExpression: version === 0 ? 'attribute_not_exists(pk) OR version = :zero' : 'version = :version',
        ExpressionAttributeValues: version === 0 ? { ':next': N(1), ':zero': N(0) } : { ':next': N(version + 1), ':version': N(version) },
      },
    };
  }

  private chargeItem(object: ChargedObject, charge: Charge, state: 'reserved' | 'confirmed'): Item {
    return {
      pk: S(partition(object.namespace)),
      sk: S(chargeSk(object)),
      data: S(JSON.stringify({ usage: charge.usage, facts: charge.facts })),
      state: S(state),
      requestUid: S(this.requestUid),
      ...(object.uid && { objectUid: S(object.uid) }),
      ...(state === 'reserved' && { [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + this.reservationSeconds) }),
    };
  }

  async reserve<Refusal>(object: ChargedObject, charge: Charge, check: (snapshot: QuotaSnapshot) => Refusal | undefined): Promise<ReserveOutcome<Refusal>> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { version, charges, snapshot } = await this.read(object.namespace);
      const existing = charges.get(chargeSk(object));
      if (existing && !this.store.expired(existing)) {
        return str(existing, 'requestUid') === this.requestUid ? { kind: 'already-counted' } : { kind: 'name-taken' };
      }
      const refusal = check(snapshot);
      if (refusal !== undefined) return { kind: 'refused', refusal };
      try {
        await this.store.transact([
          this.guardUpdate(object.namespace, version),
          {
            Put: {
              TableName: this.store.table,
              Item: this.chargeItem(object, charge, 'reserved'),
              // The Powertools idempotency condition: absent, or a reservation past its time.
              ConditionExpression: `attribute_not_exists(pk) OR ${TTL_ATTRIBUTE} <= :now`,
              ExpressionAttributeValues: { ':now': N(this.store.nowSeconds()) },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ]);
        return { kind: 'reserved' };
      } catch (error) {
        if (!(error instanceof TransactionConflict)) throw error;
        const old = error.reasons[1]?.code === 'ConditionalCheckFailed' ? error.reasons[1].old : undefined;
        if (old && str(old, 'requestUid') === this.requestUid) return { kind: 'already-counted' };
        // Lost the race: re-read and check again, after a short jittered pause.
        await pause(Math.floor(Math.random() * Math.min(50, 2 + attempt * 2)));
      }
    }
    throw new StoreUnavailableError(`quota ledger: namespace ${object.namespace} too contended, gave up after ${MAX_ATTEMPTS} attempts`);
  }

  async confirm(object: ChargedObject, charge: Charge): Promise<void> {
    const current = await this.store.get(partition(object.namespace), chargeSk(object));
    if (current && !this.store.expired(current) && str(current, 'state') === 'confirmed') return;
    if (current && !this.store.expired(current) && object.uid && str(current, 'objectUid') && str(current, 'objectUid') !== object.uid) return;
    try {
      await this.store.transact([
        {
          Update: {
            TableName: this.store.table,
            Key: { pk: S(partition(object.namespace)), sk: S(GUARD_SK) },
            UpdateExpression: 'ADD version :one',
            ExpressionAttributeValues: { ':one': N(1) },
          },
        },
        {
          Put: {
            TableName: this.store.table,
            Item: this.chargeItem(object, charge, 'confirmed'),
            ConditionExpression: `attribute_not_exists(pk) OR #state <> :confirmed`,
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':confirmed': S('confirmed') },
          },
        },
      ]);
    } catch (error) {
      if (error instanceof TransactionConflict) return; // confirmed meanwhile by another request
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
      if (str(item, 'state') === 'reserved' && !this.store.expired(item)) continue; // in flight: may still be created
      await this.store.delete({ Key: { pk: S(partition(namespace)), sk: S(sk) } });
      removed++;
    }
    for (const { object, charge } of objects) await this.store.put({ Item: this.chargeItem(object, charge, 'confirmed') });
    return { written: objects.length, removed };
  }
}
