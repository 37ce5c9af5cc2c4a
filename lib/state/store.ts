// The thin storage layer under every state port: reads, conditional writes, transactions, and the
// one dryRun gate. Ports never send a write command themselves; they hand it to `write`, which
// sends nothing for a dry run. Store failures become StoreUnavailableError (HTTP 500, so the
// apiserver's failurePolicy decides); failed conditions become typed domain errors.
import type {
  AttributeValue,
  DeleteItemInput,
  PutItemInput,
  TransactWriteItem,
  UpdateItemInput,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDb } from './dynamodb.js';
import { StoreUnavailableError } from '../admission/ports.js';
import type { StoreCall, StoreResult } from '../metrics/index.js';
import { TTL_ATTRIBUTE } from './table.js';

export type Item = Record<string, AttributeValue>;

/** A conditional write lost: `old` is the item that made the condition false (ALL_OLD). */
export class ConditionFailed extends Error {
  override readonly name = 'ConditionFailed';
  constructor(readonly old: Item | undefined) {
    super('condition failed');
  }
}

/** A transaction was cancelled by a condition or a concurrent transaction; one reason per item. */
export class TransactionConflict extends Error {
  override readonly name = 'TransactionConflict';
  constructor(readonly reasons: readonly { code: string; old?: Item }[]) {
    super(`transaction cancelled: ${reasons.map((r) => r.code).join(', ')}`);
  }
}

export const S = (value: string): AttributeValue.SMember => ({ S: value });
export const N = (value: number): AttributeValue => ({ N: String(value) });
export const str = (item: Item | undefined, name: string): string | undefined => item?.[name]?.S;
export const num = (item: Item | undefined, name: string): number | undefined =>
  item?.[name]?.N === undefined ? undefined : Number(item[name].N);
export function json<T>(item: Item | undefined, name: string): T | undefined {
  const text = str(item, name);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

function storeError(error: unknown): Error {
  const e = error as Error & { Item?: Item; CancellationReasons?: { Code?: string; Item?: Item }[] };
  if (e?.name === 'ConditionalCheckFailedException') return new ConditionFailed(e.Item);
  if (e?.name === 'TransactionCanceledException' && Array.isArray(e.CancellationReasons)) {
    const reasons = e.CancellationReasons.map((r) => ({ code: r.Code ?? 'None', ...(r.Item && { old: r.Item }) }));
    if (
      reasons.every((r) => r.code === 'None' || r.code === 'ConditionalCheckFailed' || r.code === 'TransactionConflict')
    )
      return new TransactionConflict(reasons);
  }
  if (e?.name === 'TransactionConflictException') return new TransactionConflict([{ code: 'TransactionConflict' }]);
  if (error instanceof StoreUnavailableError) return error;
  return new StoreUnavailableError(`state store: ${e?.name ?? 'Error'}: ${e?.message ?? String(error)}`);
}

export class StateStore {
  constructor(
    readonly client: DynamoDb,
    readonly table: string,
    /** The request is a dry run: `write` sends nothing. */
    readonly dryRun: boolean,
    readonly now: () => number = Date.now,
    /** Told of every call sent, with its latency and result (lib/metrics). */
    readonly onCall?: (call: StoreCall) => void,
  ) {}

  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** True when an item's TTL has passed: it no longer counts, whether or not DynamoDB deleted it. */
  expired(item: Item | undefined): boolean {
    const expiresAt = num(item, TTL_ATTRIBUTE);
    return expiresAt !== undefined && expiresAt <= this.nowSeconds();
  }

  private async call<T>(operation: string, send: () => Promise<T>): Promise<T> {
    const started = this.onCall && performance.now();
    let result: StoreResult = 'ok';
    try {
      return await send();
    } catch (error) {
      const typed = storeError(error);
      result = typed instanceof StoreUnavailableError ? 'unavailable' : 'conflict';
      throw typed;
    } finally {
      if (started !== undefined) this.onCall?.({ operation, result, seconds: (performance.now() - started) / 1000 });
    }
  }

  async get(pk: string, sk: string): Promise<Item | undefined> {
    const out = await this.call('GetItem', () =>
      this.client.call('GetItem', { TableName: this.table, Key: { pk: S(pk), sk: S(sk) }, ConsistentRead: true }),
    );
    return out.Item;
  }

  /** Every item of a partition (whose sort key begins with `prefix`), all pages. */
  async query(pk: string, prefix = ''): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const out = await this.call('Query', () =>
        this.client.call('Query', {
          TableName: this.table,
          ConsistentRead: true,
          KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
          ExpressionAttributeValues: prefix ? { ':pk': S(pk), ':prefix': S(prefix) } : { ':pk': S(pk) },
          ...(start && { ExclusiveStartKey: start }),
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
    return items;
  }

  // ---------------------------------------------------------------------------------------------
  // The dryRun gate. Every write of every plugin passes here, and only here is the client sent a
  // write command: a dry run returns `false` (not written) having sent nothing.
  // ---------------------------------------------------------------------------------------------

  private async write(operation: string, send: () => Promise<unknown>): Promise<boolean> {
    if (this.dryRun) return false;
    await this.call(operation, send);
    return true;
  }

  put(input: Omit<PutItemInput, 'TableName'>): Promise<boolean> {
    return this.write('PutItem', () =>
      this.client.call('PutItem', { ReturnValuesOnConditionCheckFailure: 'ALL_OLD', ...input, TableName: this.table }),
    );
  }

  /**
   * Learned state: what one request saw of an object, as `data`, with when it was seen. A retry of
   * the same request (the apiserver re-sends, and re-invokes mutating webhooks) writes nothing
   * more: the item remembers the last request uid that wrote it.
   */
  async putObservation(key: Item, data: unknown, requestUid: string): Promise<void> {
    try {
      await this.put({
        Item: {
          ...key,
          data: S(JSON.stringify(data)),
          observedAt: S(new Date(this.now()).toISOString()),
          observedAtMs: N(this.now()),
          lastUid: S(requestUid),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR lastUid <> :uid',
        ExpressionAttributeValues: { ':uid': S(requestUid) },
      });
    } catch (error) {
      if (error instanceof ConditionFailed) return; // the same request, already recorded
      throw error;
    }
  }

  update(input: Omit<UpdateItemInput, 'TableName'>): Promise<boolean> {
    return this.write('UpdateItem', () =>
      this.client.call('UpdateItem', {
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...input,
        TableName: this.table,
      }),
    );
  }

  /** An update that answers the item as it is after the write (ALL_NEW); undefined for a dry run. */
  async updateReturning(input: Omit<UpdateItemInput, 'TableName' | 'ReturnValues'>): Promise<Item | undefined> {
    let written: Item | undefined;
    await this.write('UpdateItem', async () => {
      const out = await this.client.call('UpdateItem', { ...input, TableName: this.table, ReturnValues: 'ALL_NEW' });
      written = out.Attributes;
    });
    return written;
  }

  delete(input: Omit<DeleteItemInput, 'TableName'>): Promise<boolean> {
    return this.write('DeleteItem', () =>
      this.client.call('DeleteItem', {
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...input,
        TableName: this.table,
      }),
    );
  }

  /** A delete that answers the item as it was (ALL_OLD); undefined for a dry run or no item. */
  async deleteReturning(input: Omit<DeleteItemInput, 'TableName' | 'ReturnValues'>): Promise<Item | undefined> {
    let old: Item | undefined;
    await this.write('DeleteItem', async () => {
      const out = await this.client.call('DeleteItem', {
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...input,
        TableName: this.table,
        ReturnValues: 'ALL_OLD',
      });
      old = out.Attributes;
    });
    return old;
  }

  /** Deletes by key, 25 to a call (BatchWriteItem's limit); unprocessed keys are sent again. */
  async deleteAll(keys: readonly Item[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 25) {
      let requests = keys.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests.length > 0 && attempt < 5; attempt++) {
        const batch = requests;
        let left: typeof requests = [];
        await this.write('BatchWriteItem', async () => {
          const out = await this.client.call('BatchWriteItem', { RequestItems: { [this.table]: batch } });
          left = (out.UnprocessedItems?.[this.table] ?? []) as typeof requests;
        });
        requests = left;
      }
    }
  }

  /** All or nothing: no request half-writes state. Items name no table; this store's is added. */
  transact(items: readonly TransactWriteItem[]): Promise<boolean> {
    const withTable = items.map((item) => {
      const [kind, body] = Object.entries(item)[0] as [keyof TransactWriteItem, Record<string, unknown>];
      return { [kind]: { ...body, TableName: this.table } } as TransactWriteItem;
    });
    // No ClientRequestToken: a retry after a conflict re-sends other values under the same request,
    // which DynamoDB would refuse as an idempotency mismatch. Idempotency lives in the items.
    return this.write('TransactWriteItems', () => this.client.call('TransactWriteItems', { TransactItems: withTable }));
  }
}
