// Cached decisions of an external backend (ImagePolicyWebhook's allowTTL / denyTTL), shared by
// every Lambda instance of one plugin: keyed under the plugin's name (`cache#<plugin>#<key>`). An
// expired entry is a miss even before DynamoDB's TTL sweep removes it.
import type { DecisionCache } from '../admission/ports.js';
import type { StateStore } from './store.js';
import { json, N, S } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';
import { PARTITION } from './partitions.js';

type Cached = { allowed: boolean; reason: string; annotations: Record<string, string> };

export class DecisionCacheStore implements DecisionCache {
  constructor(
    private readonly store: StateStore,
    /** The plugin whose answers these are. */
    private readonly plugin: string,
  ) {}

  async get(key: string): Promise<Cached | undefined> {
    const item = await this.store.get(`${PARTITION.decisionCache}${this.plugin}#${key}`, 'decision');
    if (!item || this.store.expired(item)) return undefined;
    return json<Cached>(item, 'data');
  }

  async put(key: string, value: Cached, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    await this.store.put({
      Item: {
        pk: S(`${PARTITION.decisionCache}${this.plugin}#${key}`),
        sk: S('decision'),
        data: S(JSON.stringify(value)),
        [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + Math.ceil(ttlSeconds)),
      },
    });
  }
}
