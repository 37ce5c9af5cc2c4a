// Quota under a burst: a ReplicaSet scale-up's worth of pod creates sent at once into one
// namespace (64 against `pods: 32`), with 10 ms added to every store call, which is DynamoDB's
// real round trip that DynamoDB Local on loopback lacks. Counted: admitted, refused with the
// quota message, and failures (anything but HTTP 200); timed: each create's answer.
//
// Twice: in process (the handler called directly, 10 ms added at the client), and through the
// path a request takes (`npm start` in its own process, each create POSTed over mTLS on a
// keep-alive connection as the apiserver sends it, 10 ms added by a TCP proxy in front of the
// store), on an in-memory store as in process and on a persistent one as `npm start` keeps it.
// Through the server the bench also reads the event loop's delay during the burst and the store
// calls over time (the proxy's trace); in process, each create's wait in the namespace's queue and
// each kind of call's round trip.
//
// Two floors, each measured just before its round's burst. The floor (`p99 / floor`): the same
// three calls a create costs, to items of its own, so nothing coordinates. The floor with the
// shared append: the same, but each create's first write is the queue's append to one item for
// the whole burst, which counting exactly needs (a create learns its place among the others from
// one item, and the store applies one item's writes one at a time). The first floor is what the
// burst would cost if counting were free; the second, what it costs at the least with one
// namespace's creates ordered by one item: where the burst's p99 sits above 1.5x the first, the
// second says how much of that is the ordering itself. Both send their calls from the bench, so
// through the server they leave out what is not coordination at all: the mTLS handshakes of the
// connections a burst opens, the server's own work, and the creates arriving spread over that
// time. The floor through the server (`p99 / floor through the server`) has them: the same 64
// creates through `npm start`, each into a namespace of its own, so each sends a create's three
// store calls and nothing coordinates them.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { createSecureContext } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import plugin from '../../functions/resource-quota/plugin.js';
import type { AdmissionReviewWire } from '../../lib/admission/types.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { DynamoDb } from '../../lib/state/dynamodb.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { DEFAULT_STATE_TABLE } from '../../lib/state/client.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { createTable, withLatency } from '../support/dynamodb.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import type { TracedCall } from './latency-proxy.js';
import { latencyProxy } from './latency-proxy.js';
import type { LocalServerProcess } from './local-server-process.js';
import { startLocalServerProcess } from './local-server-process.js';
import { distribution, median, round, spread } from './stats.js';

const CREATES = 64;
const QUOTA = 32;
const LATENCY_MS = 10;

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

interface Answer {
  readonly ms: number;
  readonly status: number;
  readonly allowed?: boolean;
  readonly message: string;
}

const gvk = (kind: string) => ({ group: '', version: 'v1', kind });
const gvr = (resource: string) => ({ group: '', version: 'v1', resource });

/** The AdmissionReview the apiserver sends for a create, as JSON. */
function createReview(
  namespace: string,
  resource: string,
  object: Record<string, unknown>,
  uid: string = randomUUID(),
) {
  const name = (object.metadata as { name: string }).name;
  const kind = gvk(object.kind as string);
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind,
      resource: gvr(resource),
      requestKind: kind,
      requestResource: gvr(resource),
      name,
      namespace,
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        groups: ['system:serviceaccounts'],
      },
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  });
}

const quotaReview = (namespace: string) =>
  createReview(namespace, 'resourcequotas', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q', namespace },
    spec: { hard: { pods: String(QUOTA) } },
  });

const podReview = (namespace: string, i: number, uid?: string) =>
  createReview(
    namespace,
    'pods',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace, uid: `uid-p${i}-${namespace}` },
      spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
    },
    uid,
  );

function answerOf(ms: number, status: number, body: string): Answer {
  const response = status === 200 ? (JSON.parse(body) as AdmissionReviewWire).response : undefined;
  return { ms, status, allowed: response?.allowed, message: response?.status?.message ?? '' };
}

function figures(answers: readonly Answer[], sent: readonly string[]): BurstFigures {
  const times = distribution(answers.map((a) => a.ms));
  const admitted = answers.filter((a) => a.allowed === true).length;
  // A burst the quota did not bound measures nothing worth quoting: stop, saying so.
  if (admitted !== QUOTA)
    throw new Error(`quota burst: ${admitted} of ${CREATES} creates admitted against pods: ${QUOTA}`);
  return {
    creates: CREATES,
    quota: QUOTA,
    latencyMs: LATENCY_MS,
    admitted,
    refused: answers.filter(
      (a) =>
        a.allowed === false &&
        a.message.includes(`exceeded quota: q, requested: pods=1, used: pods=${QUOTA}, limited: pods=${QUOTA}`),
    ).length,
    failed: answers.filter((a) => a.status !== 200).length,
    p50: round(times.p50, 1),
    p99: round(times.p99, 1),
    max: round(Math.max(...answers.map((a) => a.ms)), 1),
    calls: Object.fromEntries([...new Set(sent)].sort().map((name) => [name, sent.filter((s) => s === name).length])),
  };
}

/** One create's store calls, in process: when each left and when its answer came (ms from the burst's start). */
interface CreateTrace {
  readonly calls: { operation: string; sentMs: number; answeredMs: number }[];
}

/**
 * Its wait in the namespace's queue: from its place's answer (the queue append) to the write that
 * decided it (its charge, or its refusal's record), and the reads in between.
 */
function queueWait(trace: CreateTrace): { ms: number; reads: number } | undefined {
  const append = trace.calls.find((c) => c.operation === 'UpdateItem');
  const decision = trace.calls.filter((c) => c.operation === 'PutItem').pop();
  if (!append || !decision) return undefined;
  return {
    ms: decision.sentMs - append.answeredMs,
    reads: trace.calls.filter((c) => c.operation === 'Query').length,
  };
}

export interface QueueFigures {
  /** When each create's first store call left, and its last store call's answer came (ms from the burst's start). */
  readonly 'first call sent p50 ms': number;
  readonly 'first call sent p99 ms': number;
  readonly 'last call answered p99 ms': number;
  /** Each call's round trip (10 ms of it added latency), by what it does: the queue append, the ledger read, the decision's write. */
  readonly 'append round trip p50 ms': number;
  readonly 'read round trip p50 ms': number;
  readonly 'decision round trip p50 ms': number;
  /** Creates that waited for requests ahead of them to decide (more than one read). */
  readonly waiters: number;
  readonly 'queue wait p50 ms': number;
  readonly 'queue wait p99 ms': number;
  readonly 'reads per waiter p50': number;
  readonly 'reads per waiter max': number;
}

function queueFigures(traces: readonly CreateTrace[]): QueueFigures {
  const waits = traces.flatMap((t) => queueWait(t) ?? []);
  const waiting = waits.filter((w) => w.reads > 1);
  const ms = distribution(waits.map((w) => w.ms));
  const roundTrips = (operation: string) =>
    distribution(
      traces.flatMap((t) => t.calls.filter((c) => c.operation === operation).map((c) => c.answeredMs - c.sentMs)),
    );
  const firstCalls = distribution(traces.flatMap((t) => t.calls[0]?.sentMs ?? []));
  const lastAnswers = distribution(traces.flatMap((t) => t.calls.at(-1)?.answeredMs ?? []));
  return {
    'first call sent p50 ms': round(firstCalls.p50, 1),
    'first call sent p99 ms': round(firstCalls.p99, 1),
    'last call answered p99 ms': round(lastAnswers.p99, 1),
    'append round trip p50 ms': round(roundTrips('UpdateItem').p50, 1),
    'read round trip p50 ms': round(roundTrips('Query').p50, 1),
    'decision round trip p50 ms': round(roundTrips('PutItem').p50, 1),
    waiters: waiting.length,
    'queue wait p50 ms': round(ms.p50, 1),
    'queue wait p99 ms': round(ms.p99, 1),
    'reads per waiter p50': waiting.length ? median(waiting.map((w) => w.reads)) : 0,
    'reads per waiter max': waiting.length ? Math.max(...waiting.map((w) => w.reads)) : 0,
  };
}

/** The shared client, each create's calls recorded under its own trace. */
function tracedClient(client: DynamoDb, trace: CreateTrace, start: () => number): DynamoDb {
  return {
    async call(operation, input) {
      const sentMs = performance.now() - start();
      const out = await client.call(operation, input);
      trace.calls.push({ operation, sentMs, answeredMs: performance.now() - start() });
      return out;
    },
    destroy: () => undefined,
  };
}

/** One burst in process, in a fresh namespace of an already running store. */
export async function quotaBurst(
  endpoint: string,
  tableName: string,
  namespace: string,
): Promise<BurstFigures & { queue: QueueFigures }> {
  const client = withLatency(localDynamoDb(endpoint), LATENCY_MS);
  const traces = new Map<string, CreateTrace>();
  let start = performance.now();
  const handler = createStatefulAdmissionHandler(plugin, {
    config: { limitedResources: [] },
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    state: (req) => {
      const trace: CreateTrace = { calls: [] };
      traces.set(req.uid, trace);
      return createRequestState(req, {
        plugin: plugin.metadata.name,
        client: tracedClient(client, trace, () => start),
        tableName,
      });
    },
  });
  const send = (body: string, endpoint = 'validate') =>
    handler(gatewayEvent(`/resource-quota/${endpoint}`, body), lambdaContext);
  try {
    const learned = await send(quotaReview(namespace), 'learn');
    if (learned.statusCode !== 200) throw new Error(`quota not learned: HTTP ${learned.statusCode}`);
    traces.clear();
    start = performance.now();
    const answers = await Promise.all(
      Array.from({ length: CREATES }, async (_, i) => {
        const result = await send(podReview(namespace, i));
        return answerOf(performance.now() - start, result.statusCode, result.body);
      }),
    );
    const sent = [...traces.values()].flatMap((t) => t.calls.map((c) => c.operation));
    return { ...figures(answers, sent), queue: queueFigures([...traces.values()]) };
  } finally {
    client.destroy();
  }
}

function postOnce(agent: Agent, url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A POST as the apiserver's client sends it: a kept-alive connection that the server closed
 * while idle is retried once on a new one (Go's transport does the same for a request it could
 * not have delivered).
 */
async function post(agent: Agent, url: string, body: string): Promise<{ status: number; body: string }> {
  try {
    return await postOnce(agent, url, body);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return postOnce(agent, url, body);
  }
}

/** Store calls per 100 ms of a burst through the server, as the proxy saw them leave. */
export interface TimelineRow {
  readonly 'from ms': number;
  readonly UpdateItem: number;
  readonly Query: number;
  readonly PutItem: number;
  readonly other: number;
  readonly 'answers to the apiserver': number;
}

function timeline(calls: readonly TracedCall[], answers: readonly Answer[], start: number): TimelineRow[] {
  const end = Math.max(...answers.map((a) => a.ms));
  const rows: TimelineRow[] = [];
  for (let from = 0; from <= end; from += 100) {
    const mine = calls.filter((c) => c.sentMs - start >= from && c.sentMs - start < from + 100);
    const count = (op: string) => mine.filter((c) => c.operation === op).length;
    rows.push({
      'from ms': from,
      UpdateItem: count('UpdateItem'),
      Query: count('Query'),
      PutItem: count('PutItem'),
      other: mine.length - count('UpdateItem') - count('Query') - count('PutItem'),
      'answers to the apiserver': answers.filter((a) => a.ms >= from && a.ms < from + 100).length,
    });
  }
  return rows;
}

/** New connections each agent has opened (each a full mTLS handshake with the server). */
const connections = new WeakMap<Agent, { count: number }>();

function countingAgent(options: ConstructorParameters<typeof Agent>[0]): Agent {
  const agent = new Agent(options);
  const opened = { count: 0 };
  connections.set(agent, opened);
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (...args: Parameters<typeof create>) => {
    opened.count++;
    return create(...args);
  };
  return agent;
}

/**
 * The floor through the server: the same 64 creates POSTed at once on the same agent, each into a
 * namespace of its own (under the same quota), so each sends a create's three store calls and
 * nothing coordinates them; the handshakes, the server's work and its store calls are the burst's.
 */
async function serverFloor(server: LocalServerProcess, agent: Agent, take: () => TracedCall[], tag: string) {
  const namespaces = Array.from({ length: CREATES }, (_, i) => `${tag}-${i}`);
  // Learned at once, as the burst's creates are sent: the agent keeps as many idle connections after.
  const learned = await Promise.all(
    namespaces.map((ns) => post(agent, `${server.url}/resource-quota/learn?timeout=2s`, quotaReview(ns))),
  );
  if (learned.some((l) => l.status !== 200)) throw new Error(`floor's quotas not learned in ${tag}`);
  take();
  const start = performance.now();
  const answers = await Promise.all(
    namespaces.map(async (ns, i) => {
      const result = await post(agent, `${server.url}/resource-quota/validate?timeout=5s`, podReview(ns, i));
      return answerOf(performance.now() - start, result.status, result.body);
    }),
  );
  take();
  if (answers.some((a) => a.allowed !== true)) throw new Error(`floor through the server: a create refused in ${tag}`);
  return round(distribution(answers.map((a) => a.ms)).p99, 1);
}

/** One burst through the server: the creates POSTed at once on the apiserver-like agent. */
async function serverBurst(
  server: LocalServerProcess,
  agent: Agent,
  take: () => TracedCall[],
  namespace: string,
): Promise<
  BurstFigures & {
    newConnections: number;
    firstStoreCallMs: number;
    eventLoop: { p50: number; p99: number; max: number };
    timeline: TimelineRow[];
  }
> {
  const url = `${server.url}/resource-quota/validate?timeout=5s`;
  const learned = await post(agent, `${server.url}/resource-quota/learn?timeout=2s`, quotaReview(namespace));
  if (learned.status !== 200) throw new Error(`quota not learned: HTTP ${learned.status}: ${learned.body}`);
  await server.eventLoopDelay(); // from here on
  take();
  const opened = connections.get(agent) ?? { count: 0 };
  const before = opened.count;
  const start = performance.now();
  const answers = await Promise.all(
    Array.from({ length: CREATES }, async (_, i) => {
      const result = await post(agent, url, podReview(namespace, i));
      return answerOf(performance.now() - start, result.status, result.body);
    }),
  );
  const eventLoop = await server.eventLoopDelay();
  const calls = take();
  return {
    ...figures(
      answers,
      calls.map((c) => c.operation),
    ),
    newConnections: opened.count - before,
    firstStoreCallMs: round(Math.min(...calls.map((c) => c.sentMs)) - start, 1),
    eventLoop,
    timeline: timeline(calls, answers, start),
  };
}

/**
 * The floor: the same number of creates, each sending the three calls a create costs (a write, a
 * strongly consistent read, a write) to items of its own, through the same slowed path, so
 * nothing coordinates. What the burst takes beyond it is the price of counting exactly.
 *
 * With `shared`, the first write of every create is the queue's append instead (the same entry,
 * to one item for the whole burst, its list returned): the one write per create that counting
 * exactly cannot do without, since each create must learn its place among the others from one
 * item, and the store applies the writes of one item one at a time. What the burst takes beyond
 * that floor is the rest of the coordination: reading the namespace's ledger, and deciding.
 */
async function uncoordinated(
  client: DynamoDb,
  tableName: string,
  tag: string,
  shared = false,
): Promise<{ p50: number; p99: number }> {
  // A queued pod's charge, as the ledger's entries carry it.
  const data = JSON.stringify({
    usage: { 'count/pods': '1', pods: '1' },
    facts: { pod: true, terminating: false, bestEffort: true, priorityClass: '' },
  });
  const start = performance.now();
  const times = await Promise.all(
    Array.from({ length: CREATES }, async (_, i) => {
      const Key = { pk: { S: `floor#${tag}` }, sk: { S: `item#${i}` } };
      if (shared)
        await client.call('UpdateItem', {
          TableName: tableName,
          Key: { pk: { S: `floor#${tag}#queue` }, sk: { S: 'queue' } },
          UpdateExpression: 'SET #e = list_append(if_not_exists(#e, :empty), :me)',
          ExpressionAttributeNames: { '#e': 'entries' },
          ExpressionAttributeValues: {
            ':empty': { L: [] },
            ':me': {
              L: [{ M: { u: { S: randomUUID() }, k: { S: `charge#pods#p${i}` }, c: { S: data }, t: { N: '0' } } }],
            },
          },
          ReturnValues: 'ALL_NEW',
        });
      else
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
}

/** Both floors of one round, measured just before its burst. */
async function floors(client: DynamoDb, tableName: string, tag: string): Promise<Floors> {
  const floor = await uncoordinated(client, tableName, tag);
  const shared = await uncoordinated(client, tableName, `${tag}-shared`, true);
  return { floorP99: floor.p99, sharedFloorP99: shared.p99 };
}

interface Floors {
  readonly floorP99: number;
  /** The floor whose first write is the queue's append to one shared item. */
  readonly sharedFloorP99: number;
}

export interface BurstSummary {
  readonly path: string;
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
  readonly 'floor with the shared append p99 ms': number;
  readonly 'p99 / floor with the shared append': number;
  readonly 'shared-append ratio spread': string;
}

type Round = BurstFigures & Floors;

function summarise(path: string, measured: readonly Round[]): BurstSummary {
  const p99 = spread(measured.map((r) => r.p99));
  const ratio = spread(measured.map((r) => r.p99 / r.floorP99));
  const shared = spread(measured.map((r) => r.p99 / r.sharedFloorP99));
  const calls = measured.map((r) => Object.values(r.calls).reduce((a, b) => a + b, 0) / r.creates);
  return {
    path,
    rounds: measured.length,
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
    'floor with the shared append p99 ms': median(measured.map((r) => r.sharedFloorP99)),
    'p99 / floor with the shared append': round(shared.median, 2),
    'shared-append ratio spread': `${round(shared.min, 2)}–${round(shared.max, 2)}`,
  };
}

/** Rounds of floor then burst in process, each burst into a new namespace of one in-memory store. */
async function inProcess(
  rounds: number,
): Promise<{ rounds: (Round & { queue: QueueFigures })[]; summary: BurstSummary }> {
  const db = await startEmbeddedDynamoDb({});
  const tableName = 'bench-quota-burst';
  const floorClient = withLatency(localDynamoDb(db.endpoint), LATENCY_MS);
  try {
    await createTable(db.endpoint, tableName);
    await quotaBurst(db.endpoint, tableName, 'warm-up'); // the JVM's first burst is its JIT's
    const measured: (Round & { queue: QueueFigures })[] = [];
    for (let i = 0; i < rounds; i++) {
      const floor = await floors(floorClient, tableName, `round-${i}`);
      measured.push({ ...(await quotaBurst(db.endpoint, tableName, `burst-${i}`)), ...floor });
    }
    return { rounds: measured, summary: summarise('in process, in-memory store', measured) };
  } finally {
    floorClient.destroy();
    await db.stop();
  }
}

export interface ServerPathFigures {
  readonly rounds: (Round & {
    /** The floor through the server: the same creates, each into a namespace of its own. */
    serverFloorP99: number;
    newConnections: number;
    firstStoreCallMs: number;
    eventLoop: { p50: number; p99: number; max: number };
  })[];
  readonly summary: BurstSummary & {
    'floor through the server p99 ms': number;
    'p99 / floor through the server': number;
    'server-floor ratio spread': string;
    'new connections a burst': number;
    'first store call ms': number;
    'event loop delay p99 ms (max of rounds)': number;
  };
  /** The last round's store calls per 100 ms. */
  readonly timeline: TimelineRow[];
}

/**
 * Rounds of floor then burst through `npm start`, the store behind a 10 ms proxy. The client
 * keeps 25 idle connections between bursts, as client-go's transport does, so each burst opens
 * 39 new mTLS connections; or, `warm`, keeps all 64, so the burst is only the webhook's work.
 */
async function throughServer(rounds: number, persistent: boolean, warm = false): Promise<ServerPathFigures> {
  const dataDir = persistent ? mkdtempSync(join(tmpdir(), 'bench-quota-ddb-')) : undefined;
  const db = await startEmbeddedDynamoDb(dataDir ? { dataDir } : {});
  const proxy = await latencyProxy(db.endpoint, LATENCY_MS, true);
  const floorClient = localDynamoDb(proxy.endpoint);
  let server: LocalServerProcess | undefined;
  let agent: Agent | undefined;
  try {
    server = await startLocalServerProcess({
      endpoint: proxy.endpoint,
      logDir: `.local/bench/quota-burst-${persistent ? 'persistent' : 'in-memory'}${warm ? '-warm' : ''}`,
      probeEventLoop: true,
    });
    // One TLS context for every connection, as Go's client keeps one tls.Config: Node's agent
    // would otherwise parse the certificates and the key again for each new connection (~1.5 ms
    // of this machine's CPU each, taken from the server under test).
    agent = countingAgent({
      keepAlive: true,
      maxFreeSockets: warm ? CREATES : 25,
      secureContext: createSecureContext({
        ca: server.identity.caPem,
        cert: server.identity.certPem,
        key: server.identity.keyPem,
      }),
    });
    await serverBurst(server, agent, proxy.take, 'warm-up'); // the JVM's JIT and the server's
    const measured: ServerPathFigures['rounds'] = [];
    let last: TimelineRow[] = [];
    for (let i = 0; i < rounds; i++) {
      const floor = await floors(floorClient, DEFAULT_STATE_TABLE, `round-${i}`);
      const serverFloorP99 = await serverFloor(server, agent, proxy.take, `floor-${i}`);
      const { timeline: rows, ...burst } = await serverBurst(server, agent, proxy.take, `burst-${i}`);
      measured.push({ ...burst, ...floor, serverFloorP99 });
      last = rows;
    }
    const path = `through npm start over mTLS, ${persistent ? 'persistent store (as npm start keeps it)' : 'in-memory store'}${warm ? ', every connection kept warm' : ', 25 connections kept'}`;
    const serverRatio = spread(measured.map((r) => r.p99 / r.serverFloorP99));
    return {
      rounds: measured,
      summary: {
        ...summarise(path, measured),
        'new connections a burst': median(measured.map((r) => r.newConnections)),
        'first store call ms': median(measured.map((r) => r.firstStoreCallMs)),
        'event loop delay p99 ms (max of rounds)': Math.max(...measured.map((r) => r.eventLoop.p99)),
        'floor through the server p99 ms': median(measured.map((r) => r.serverFloorP99)),
        'p99 / floor through the server': round(serverRatio.median, 2),
        'server-floor ratio spread': `${round(serverRatio.min, 2)}–${round(serverRatio.max, 2)}`,
      },
      timeline: last,
    };
  } finally {
    agent?.destroy();
    await server?.stop();
    floorClient.destroy();
    await proxy.close();
    await db.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchQuotaBurst(rounds = Number(process.env.BENCH_ROUNDS ?? 5)): Promise<{
  rounds: (Round & { queue: QueueFigures })[];
  summary: BurstSummary;
  throughServer: { inMemory: ServerPathFigures; inMemoryWarm: ServerPathFigures; persistent: ServerPathFigures };
}> {
  const { rounds: measured, summary } = await inProcess(rounds);
  const inMemory = await throughServer(rounds, false);
  const inMemoryWarm = await throughServer(rounds, false, true);
  const persistent = await throughServer(rounds, true);
  return { rounds: measured, summary, throughServer: { inMemory, inMemoryWarm, persistent } };
}
