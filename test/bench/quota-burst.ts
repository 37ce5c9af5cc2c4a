// Quota under a burst: a ReplicaSet scale-up's worth of pod creates sent at once into one
// namespace (64 against `pods: 32`), with 10 ms added to every store call at the client, which is
// DynamoDB's real round trip that DynamoDB Local on loopback lacks. Counted: admitted, refused
// with the quota message, and failures (anything but HTTP 200); timed: each create's answer.
import plugin from '../../functions/resource-quota/plugin.js';
import type { AdmissionReviewWire } from '../../lib/admission/types.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { countingClient, createTable, withLatency } from '../support/dynamodb.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import { review } from '../support/review.js';
import { distribution, median, round, spread } from './stats.js';

export interface BurstFigures {
  readonly creates: number;
  readonly quota: number;
  readonly latencyMs: number;
  readonly admitted: number;
  readonly refused: number;
  readonly failed: number;
  /** Milliseconds from the burst's start to each answer. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Store calls sent for the whole burst, by command. */
  readonly calls: Record<string, number>;
}

const pod = (namespace: string, name: string) => ({
  object: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${name}` },
    spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
  },
});

/** One burst in a fresh namespace of an already running store. */
export async function quotaBurst(
  endpoint: string,
  tableName: string,
  namespace: string,
  creates = 64,
  quota = 32,
  latencyMs = 10,
): Promise<BurstFigures> {
  const sent: string[] = [];
  const client = withLatency(countingClient(endpoint, sent), latencyMs);
  const handler = createStatefulAdmissionHandler(plugin, {
    config: { limitedResources: [] },
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    state: (request) => createRequestState(request, { plugin: plugin.metadata.name, client, tableName }),
  });
  const send = (input: object) =>
    handler(gatewayEvent('/resource-quota/validate', JSON.stringify(review(input))), lambdaContext);
  try {
    const learned = await send({
      kind: { kind: 'ResourceQuota' },
      resource: { resource: 'resourcequotas' },
      object: { kind: 'ResourceQuota', metadata: { name: 'q', namespace }, spec: { hard: { pods: String(quota) } } },
    });
    if (learned.statusCode !== 200) throw new Error(`quota not learned: HTTP ${learned.statusCode}`);
    sent.splice(0);
    const start = performance.now();
    const answers = await Promise.all(
      Array.from({ length: creates }, async (_, i) => {
        const result = await send(pod(namespace, `p${i}`));
        const ms = performance.now() - start;
        const response =
          result.statusCode === 200 ? (JSON.parse(result.body) as AdmissionReviewWire).response : undefined;
        return { ms, status: result.statusCode, allowed: response?.allowed, message: response?.status?.message ?? '' };
      }),
    );
    const times = distribution(answers.map((a) => a.ms));
    return {
      creates,
      quota,
      latencyMs,
      admitted: answers.filter((a) => a.allowed === true).length,
      refused: answers.filter(
        (a) =>
          a.allowed === false &&
          a.message.includes(`exceeded quota: q, requested: pods=1, used: pods=${quota}, limited: pods=${quota}`),
      ).length,
      failed: answers.filter((a) => a.status !== 200).length,
      p50: round(times.p50, 1),
      p99: round(times.p99, 1),
      max: round(Math.max(...answers.map((a) => a.ms)), 1),
      calls: Object.fromEntries([...new Set(sent)].map((name) => [name, sent.filter((s) => s === name).length])),
    };
  } finally {
    client.destroy();
  }
}

/**
 * The floor: the same number of creates, each sending the three calls a create costs (a write, a
 * strongly consistent read, a write) to items of its own, through the same slowed client, so
 * nothing coordinates. What the burst takes beyond it is the price of counting exactly.
 */
async function uncoordinated(
  endpoint: string,
  tableName: string,
  tag: string,
  creates: number,
  latencyMs: number,
): Promise<{ p50: number; p99: number }> {
  const client = withLatency(localDynamoDb(endpoint), latencyMs);
  try {
    const start = performance.now();
    const times = await Promise.all(
      Array.from({ length: creates }, async (_, i) => {
        const Key = { pk: { S: `floor#${tag}` }, sk: { S: `item#${i}` } };
        await client.call('PutItem', { TableName: tableName, Item: { ...Key, data: { S: '{"usage":{"pods":"1"}}' } } });
        await client.call('Query', {
          TableName: tableName,
          ConsistentRead: true,
          KeyConditionExpression: 'pk = :pk AND sk = :sk',
          ExpressionAttributeValues: { ':pk': Key.pk, ':sk': Key.sk },
        });
        await client.call('PutItem', {
          TableName: tableName,
          Item: { ...Key, data: { S: '{"usage":{"pods":"1"}}' }, state: { S: 'reserved' } },
        });
        return performance.now() - start;
      }),
    );
    const d = distribution(times);
    return { p50: round(d.p50, 1), p99: round(d.p99, 1) };
  } finally {
    client.destroy();
  }
}

export interface BurstSummary {
  readonly rounds: number;
  readonly 'admitted (each round)': string;
  readonly 'refused with the quota message': string;
  readonly failed: number;
  readonly 'p50 ms': number;
  readonly 'p99 ms': number;
  readonly 'p99 spread ms': string;
  readonly 'floor p99 ms': number;
  readonly 'p99 / floor': number;
  readonly 'ratio spread': string;
  readonly 'calls per create': number;
}

/**
 * Rounds of floor then burst, each burst into a new namespace of one store; the medians, with
 * the spread (min–max) over rounds.
 */
export async function benchQuotaBurst(
  rounds = 5,
): Promise<{ rounds: (BurstFigures & { floorP99: number })[]; summary: BurstSummary }> {
  const db = await startEmbeddedDynamoDb({});
  const tableName = 'bench-quota-burst';
  try {
    await createTable(db.endpoint, tableName);
    await quotaBurst(db.endpoint, tableName, 'warm-up'); // the JVM's first burst is its JIT's
    const measured: (BurstFigures & { floorP99: number })[] = [];
    for (let i = 0; i < rounds; i++) {
      const floor = await uncoordinated(db.endpoint, tableName, `round-${i}`, 64, 10);
      measured.push({ ...(await quotaBurst(db.endpoint, tableName, `burst-${i}`)), floorP99: floor.p99 });
    }
    const p99 = spread(measured.map((r) => r.p99));
    const ratio = spread(measured.map((r) => r.p99 / r.floorP99));
    const calls = measured.map((r) => Object.values(r.calls).reduce((a, b) => a + b, 0) / r.creates);
    return {
      rounds: measured,
      summary: {
        rounds,
        'admitted (each round)': [...new Set(measured.map((r) => r.admitted))].join(','),
        'refused with the quota message': [...new Set(measured.map((r) => r.refused))].join(','),
        failed: measured.reduce((s, r) => s + r.failed, 0),
        'p50 ms': median(measured.map((r) => r.p50)),
        'p99 ms': p99.median,
        'p99 spread ms': `${p99.min}–${p99.max}`,
        'floor p99 ms': median(measured.map((r) => r.floorP99)),
        'p99 / floor': round(ratio.median, 2),
        'ratio spread': `${round(ratio.min, 2)}–${round(ratio.max, 2)}`,
        'calls per create': round(median(calls), 2),
      },
    };
  } finally {
    await db.stop();
  }
}
