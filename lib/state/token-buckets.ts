// Token buckets shared by every Lambda instance (EventRateLimit): a bucket is one item holding its
// tokens at a time; refill is computed on read. A bucket that would be full again is as good as
// absent, so each item expires when it would be full: DynamoDB's TTL sweeps idle buckets and an
// expired one reads as full, exactly like a bucket upstream's LRU cache has evicted.
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { BucketSpec, TokenBuckets } from '../admission/ports.js';
import { AGAIN, retryWithJitter } from './retry.js';
import type { StateStore } from './store.js';
import { N, num, S, TransactionConflict } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';
import { PARTITION, TOKEN_BUCKET_REQUESTS } from './partitions.js';

const MAX_ATTEMPTS = 100;

export class TokenBucketStore implements TokenBuckets {
  constructor(
    private readonly store: StateStore,
    private readonly requestUid: string,
  ) {}

  async take(buckets: readonly { readonly key: string; readonly spec: BucketSpec }[]): Promise<number> {
    const empty = await this.takeAll(buckets);
    return empty.length > 0 ? empty[0] : -1;
  }

  async takeAll(buckets: readonly { readonly key: string; readonly spec: BucketSpec }[]): Promise<number[]> {
    if (buckets.length === 0) return [];
    const doneKey = { pk: S(`${TOKEN_BUCKET_REQUESTS}${this.requestUid}`), sk: S('done') };
    return retryWithJitter('token buckets', MAX_ATTEMPTS, async () => {
      const done = await this.store.get(doneKey.pk.S, 'done');
      if (done && !this.store.expired(done)) return []; // a retry of a request that already paid
      const nowMs = this.store.now();
      const writes: TransactWriteItem[] = [];
      const empty: number[] = [];
      for (let i = 0; i < buckets.length; i++) {
        const { key, spec } = buckets[i];
        const item = await this.store.get(`${PARTITION.tokenBucket}${key}`, 'bucket');
        const live = item && !this.store.expired(item) ? item : undefined;
        const version = num(live, 'version');
        const stored = num(live, 'tokens') ?? spec.burst;
        const since = Math.max(0, nowMs - (num(live, 'updatedAtMs') ?? nowMs)) / 1000;
        const tokens = Math.min(spec.burst, stored + since * spec.qps);
        if (tokens < 1) {
          empty.push(i);
          continue;
        }
        const left = tokens - 1;
        const fullInSeconds = spec.qps > 0 ? Math.ceil((spec.burst - left) / spec.qps) : 365 * 24 * 3600;
        writes.push({
          Put: {
            TableName: this.store.table,
            Item: {
              pk: S(`${PARTITION.tokenBucket}${key}`),
              sk: S('bucket'),
              tokens: N(left),
              updatedAtMs: N(nowMs),
              version: N((version ?? 0) + 1),
              [TTL_ATTRIBUTE]: N(Math.floor(nowMs / 1000) + fullInSeconds + 1),
            },
            ...(version === undefined
              ? {
                  ConditionExpression: 'attribute_not_exists(pk) OR attribute_not_exists(version) OR #exp <= :now',
                  ExpressionAttributeNames: { '#exp': TTL_ATTRIBUTE },
                  ExpressionAttributeValues: { ':now': N(this.store.nowSeconds()) },
                }
              : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': N(version) } }),
          },
        });
      }
      if (empty.length > 0) return empty;
      writes.push({
        Put: {
          TableName: this.store.table,
          Item: { ...doneKey, [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + 600) },
          ConditionExpression: 'attribute_not_exists(pk) OR #exp <= :now',
          ExpressionAttributeNames: { '#exp': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':now': N(this.store.nowSeconds()) },
        },
      });
      try {
        await this.store.transact(writes);
        return [];
      } catch (error) {
        if (!(error instanceof TransactionConflict)) throw error;
        const last = error.reasons[writes.length - 1];
        if (last?.code === 'ConditionalCheckFailed') return [];
        return AGAIN; // a bucket moved since it was read: read again
      }
    });
  }
}
