// State over the run's DynamoDB Local for one test file: its own table, its own client with a
// wrapper that counts every operation sent to the store (the dryRun tests count writes there).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { EmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { RequestState } from '../../lib/state/index.js';
import type { DynamoDb, DynamoDbOperation, DynamoDbOperations } from '../../lib/state/dynamodb.js';
import { WRITE_OPERATIONS } from '../../lib/state/dynamodb.js';
import { createStateTable, localDynamoDbClient } from '../../lib/state/dynamodb-sdk.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import './dynamodb-global-setup.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { AdmissionReviewWire } from '../../lib/admission/types.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { gatewayEvent, lambdaContext } from './gateway-event.js';
import type { ReviewInput } from './review.js';
import { review } from './review.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';

export interface TestStore {
  endpoint: string;
  tableName: string;
  client: DynamoDb;
  /** Operations sent to the store, by name (GetItem, PutItem...), since the last reset. */
  readonly sent: string[];
  writes(): number;
  reset(): void;
  /** Request state over this table, as the plugin the store is named after (its decision cache's keys). */
  state(request: Pick<AdmissionRequest, 'uid' | 'dryRun'>, now?: () => number): RequestState;
  /** The same table through a new client (a new Lambda instance), e.g. after a store restart. */
  reconnect(endpoint: string): void;
  close(): void;
}

/** The functions' client over `endpoint`, recording the name of every operation it sends. */
export function countingClient(endpoint: string, sent: string[]): DynamoDb {
  const client = localDynamoDb(endpoint);
  return {
    call<Op extends DynamoDbOperation>(operation: Op, input: DynamoDbOperations[Op]['input']) {
      sent.push(operation);
      return client.call(operation, input);
    },
    destroy: () => client.destroy(),
  };
}

/**
 * Adds `ms` before every operation leaves the client: DynamoDB's real round trip, which DynamoDB
 * Local on loopback does not have. Contention that a fast local store hides shows under it.
 */
export function withLatency(client: DynamoDb, ms: number): DynamoDb {
  return {
    async call<Op extends DynamoDbOperation>(operation: Op, input: DynamoDbOperations[Op]['input']) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return client.call(operation, input);
    },
    destroy: () => client.destroy(),
  };
}

/** Creates the state table through the SDK (the one thing the port does not do). */
export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const admin = localDynamoDbClient(endpoint);
  try {
    await createStateTable(admin, tableName);
  } finally {
    admin.destroy();
  }
}

/** A fresh table on the run's DynamoDB Local (or `endpoint`), named after the test file. */
export async function testStore(name: string, endpoint: string = inject('dynamodbEndpoint')): Promise<TestStore> {
  const tableName = `${name}-${process.pid}-${Date.now()}`;
  const sent: string[] = [];
  await createTable(endpoint, tableName);
  let client = countingClient(endpoint, sent);
  const store: TestStore = {
    endpoint,
    tableName,
    get client() {
      return client;
    },
    sent,
    writes: () => sent.filter((c) => WRITE_OPERATIONS.has(c as DynamoDbOperation)).length,
    reset: () => void sent.splice(0),
    state: (request, now) => createRequestState(request, { plugin: name, client, tableName, ...(now && { now }) }),
    reconnect(next: string) {
      client.destroy();
      client = countingClient(next, sent);
      store.endpoint = next;
    },
    close: () => client.destroy(),
  };
  return store;
}

/** A test that restarts DynamoDB Local waits for two JVM starts, however slow a busy machine is. */
export const RESTART_TIMEOUT = 600_000;

export interface OwnStore {
  readonly store: TestStore;
  /** Stops the instance; the data stays in its directory. */
  stop(): Promise<void>;
  /** A new instance on the same data, waited for until it answers; the store reconnects to it. */
  start(): Promise<void>;
  /** Stops the instance and removes its data: call it from `finally` or `afterAll`. */
  dispose(): Promise<void>;
}

/**
 * For the tests that stop and restart the store: a DynamoDB Local of their own (the run's shared
 * one stays up for everyone else), persistent (-dbPath) in a temporary directory, started quick
 * (client compiler only) as the shared one is.
 */
export async function ownStore(name: string): Promise<OwnStore> {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-ddb-`));
  let db: EmbeddedDynamoDb | undefined;
  let store: TestStore | undefined;
  const stop = async () => {
    await db?.stop();
    db = undefined;
  };
  const dispose = async () => {
    store?.close();
    try {
      await stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
  try {
    db = await startEmbeddedDynamoDb({ dataDir, quickStart: true });
    store = await testStore(name, db.endpoint);
  } catch (error) {
    await dispose();
    throw error;
  }
  const own = store;
  return {
    store: own,
    stop,
    async start() {
      await stop();
      db = await startEmbeddedDynamoDb({ dataDir, quickStart: true });
      own.reconnect(db.endpoint);
    },
    dispose,
  };
}

export interface Invocation {
  statusCode: number;
  review?: AdmissionReviewWire;
  body: string;
}

/** A plugin's real Lambda handler over a test store: what the apiserver would get back. */
export function lambdaFor(plugin: AnyAdmissionPlugin, store: TestStore, config?: unknown) {
  // The deployed stateful handler (namespace learning included), over the test store.
  const handler = createStatefulAdmissionHandler(plugin, {
    config,
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    state: (request) => store.state(request),
  });
  return async function invoke(phase: Endpoint, input: ReviewInput): Promise<Invocation> {
    const result = await handler(
      gatewayEvent(`/${plugin.metadata.name}/${phase}`, JSON.stringify(review(input))),
      lambdaContext,
    );
    return {
      statusCode: result.statusCode,
      body: result.body,
      ...(result.statusCode === 200 && { review: JSON.parse(result.body) as AdmissionReviewWire }),
    };
  };
}

/** A Namespace write as the apiserver sends it to a plugin's webhook. */
export function namespaceReview(
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  name: string,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string>; phase?: string } = {},
  extra: Partial<ReviewInput> = {},
): ReviewInput {
  const object = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      ...(meta.labels && { labels: meta.labels }),
      ...(meta.annotations && { annotations: meta.annotations }),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: meta.phase ?? 'Active' },
  };
  return {
    operation,
    kind: { kind: 'Namespace' },
    resource: { resource: 'namespaces' },
    name,
    namespace: '',
    object: operation === 'DELETE' ? null : object,
    oldObject: operation === 'CREATE' ? null : object,
    ...extra,
  };
}
