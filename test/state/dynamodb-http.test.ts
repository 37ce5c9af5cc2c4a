// The functions' DynamoDB client (lib/state/dynamodb-http.ts) held to the AWS SDK's: its requests
// verified by the SDK's own Signature V4 signer as they arrive on a loopback server; its answers
// and refusals compared with the SDK client's, operation by operation, on DynamoDB Local; its
// retries by the SDK's rules; and its connections kept alive.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { StoreUnavailableError } from '../../lib/admission/ports.js';
import { awsDynamoDb } from '../../lib/state/client.js';
import type { DynamoDb, DynamoDbOperation, DynamoDbOperations } from '../../lib/state/dynamodb.js';
import type { HttpDynamoDbOptions } from '../../lib/state/dynamodb-http.js';
import { HttpDynamoDb, regionalEndpoint } from '../../lib/state/dynamodb-http.js';
import { localDynamoDbClient, sdkDynamoDb } from '../../lib/state/dynamodb-sdk.js';
import { StateStore } from '../../lib/state/store.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly socket: unknown;
}

/** A loopback HTTP server answering each request with the next of `answers` (the last repeats). */
async function fakeService(
  answers: ((request: Received, response: ServerResponse) => void)[],
): Promise<{ endpoint: string; received: Received[]; connections: () => number }> {
  const received: Received[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), socket: request.socket };
      received.push(entry);
      answers[Math.min(received.length - 1, answers.length - 1)](entry, response);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    connections: () => connections,
  };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_: Received, response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...headers });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
const serviceError = (status: number, code: string, fields: Record<string, unknown> = {}) =>
  json(status, { __type: `com.amazonaws.dynamodb.v20120810#${code}`, message: `${code} happened`, ...fields });

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

function client(endpoint: string, options: Partial<HttpDynamoDbOptions> = {}): HttpDynamoDb & { delays: number[] } {
  const delays: number[] = [];
  const db = new HttpDynamoDb({
    endpoint,
    region: 'eu-west-1',
    credentials: CREDENTIALS,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
  onTestFinished(() => db.destroy());
  return Object.assign(db, { delays });
}

/** The SDK's signer, with the SDK client's own SHA-256, re-signing a request as it arrived. */
async function sdkAuthorization(request: Received, credentials: typeof CREDENTIALS & { sessionToken?: string }) {
  const authorization = String(request.headers.authorization);
  const signed = /SignedHeaders=([^,]+)/.exec(authorization)?.[1].split(';') ?? [];
  const sdk = new DynamoDBClient({ region: 'eu-west-1', credentials });
  const signer = new SignatureV4({
    credentials,
    region: 'eu-west-1',
    service: 'dynamodb',
    sha256: sdk.config.sha256,
    applyChecksum: false,
  });
  sdk.destroy();
  const stamp = String(request.headers['x-amz-date']);
  const signingDate = new Date(
    `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
  );
  const headers = Object.fromEntries(signed.map((name) => [name, String(request.headers[name])]));
  const host = String(request.headers.host);
  const out = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: host.split(':')[0],
      port: Number(host.split(':')[1]),
      path: '/',
      query: {},
      headers,
      body: request.body,
    },
    { signingDate },
  );
  return { signed, authorization: out.headers.authorization };
}

describe('requests', () => {
  it("are the service's JSON protocol, signed as the SDK's signer signs them", async () => {
    const service = await fakeService([json(200, { Item: { pk: { S: 'a' } } })]);
    const out = await client(service.endpoint).call('GetItem', {
      TableName: 't',
      Key: { pk: { S: 'a' }, sk: { S: 'ü ☃' } },
      ConsistentRead: true,
    });
    expect(out).toEqual({ Item: { pk: { S: 'a' } } });
    const [request] = service.received;
    expect(request.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
    expect(request.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(JSON.parse(request.body)).toEqual({
      TableName: 't',
      Key: { pk: { S: 'a' }, sk: { S: 'ü ☃' } },
      ConsistentRead: true,
    });
    const oracle = await sdkAuthorization(request, CREDENTIALS);
    expect(oracle.signed).toEqual(['content-length', 'content-type', 'host', 'x-amz-date', 'x-amz-target']);
    expect(request.headers.authorization).toBe(oracle.authorization);
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, /,
    );
  });

  it("carry the role's session token, signed", async () => {
    const service = await fakeService([json(200, {})]);
    const credentials = { ...CREDENTIALS, sessionToken: 'session/token+value==' };
    await client(service.endpoint, { credentials }).call('PutItem', { TableName: 't', Item: { pk: { S: 'a' } } });
    const [request] = service.received;
    expect(request.headers['x-amz-security-token']).toBe('session/token+value==');
    const oracle = await sdkAuthorization(request, credentials);
    expect(oracle.signed).toContain('x-amz-security-token');
    expect(request.headers.authorization).toBe(oracle.authorization);
  });

  it('reuse one kept-alive connection', async () => {
    const service = await fakeService([json(200, {})]);
    const db = client(service.endpoint);
    for (let i = 0; i < 5; i++) await db.call('GetItem', { TableName: 't', Key: { pk: { S: `${i}` } } });
    expect(service.received).toHaveLength(5);
    expect(service.connections()).toBe(1);
  });

  it('go to the regional endpoint with the Lambda environment’s region and credentials, and nowhere without them', async () => {
    expect(regionalEndpoint('eu-west-1')).toBe('https://dynamodb.eu-west-1.amazonaws.com');
    expect(regionalEndpoint('cn-north-1')).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn');
    // A store failure: HTTP 500 to the apiserver, whose failurePolicy decides; no secret in it.
    const failures = [
      [{ AWS_REGION: 'eu-west-1' }, /^state store: MissingCredentials: no AWS credentials/],
      [{ AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }, /^state store: MissingCredentials: /],
      [
        { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey },
        /^state store: MissingRegion: no AWS region/,
      ],
    ] as const;
    for (const [env, message] of failures) {
      const store = new StateStore(awsDynamoDb(env), 't', false);
      const failure = await store.get('a', 'b').catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as Error).message).toMatch(message);
      expect((failure as Error).message).not.toContain(CREDENTIALS.secretAccessKey);
    }
  });
});

describe('retries, as the SDK retries', () => {
  it('a 500 once, then answers; the wait is the full-jitter backoff (100 ms base)', async () => {
    const service = await fakeService([serviceError(500, 'InternalServerError'), json(200, { Items: [] })]);
    const db = client(service.endpoint);
    expect(await db.call('Query', { TableName: 't' })).toEqual({ Items: [] });
    expect(service.received).toHaveLength(2);
    expect(db.delays).toEqual([50]); // random 0.5 × 2^0 × 100
  });

  it('throttling three times: 3 attempts, 500 ms base, then the throttling error itself', async () => {
    const service = await fakeService([serviceError(400, 'ProvisionedThroughputExceededException')]);
    const db = client(service.endpoint);
    const error = await db.call('GetItem', { TableName: 't', Key: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ProvisionedThroughputExceededException', statusCode: 400 });
    expect(service.received).toHaveLength(3);
    expect(db.delays).toEqual([250, 500]);
  });

  it('a reset connection, a 502 that is not JSON, and a refused connection', async () => {
    const service = await fakeService([
      (request) => (request.socket as { destroy(): void }).destroy(),
      (_, response) => {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html>bad gateway</html>');
      },
      json(200, {}),
    ]);
    const db = client(service.endpoint);
    expect(await db.call('PutItem', { TableName: 't', Item: {} })).toEqual({});
    expect(service.received).toHaveLength(3);
    const refused = client('http://127.0.0.1:9', { maxAttempts: 2 });
    await expect(refused.call('GetItem', { TableName: 't', Key: {} })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(refused.delays).toHaveLength(1);
  });

  it('never a refused condition, a validation error or a cancelled transaction', async () => {
    for (const code of ['ConditionalCheckFailedException', 'ValidationException', 'TransactionCanceledException']) {
      const service = await fakeService([serviceError(400, code), json(200, {})]);
      const db = client(service.endpoint);
      await expect(db.call('PutItem', { TableName: 't', Item: {} })).rejects.toMatchObject({ name: code });
      expect(service.received, code).toHaveLength(1);
    }
  });

  it("reads the error's type from the x-amzn-errortype header when the body has none", async () => {
    const service = await fakeService([
      json(400, { message: 'slow down' }, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/' }),
      json(200, {}),
    ]);
    const db = client(service.endpoint);
    expect(await db.call('GetItem', { TableName: 't', Key: {} })).toEqual({});
    expect(db.delays).toEqual([250]);
  });
});

describe('on DynamoDB Local, the same answers and refusals as the SDK client', () => {
  let store: TestStore;
  let sdk: DynamoDb;
  beforeAll(async () => {
    store = await testStore('dynamodb-http');
    sdk = sdkDynamoDb(localDynamoDbClient(store.endpoint));
  });
  afterAll(() => {
    sdk.destroy();
    store.close();
  });

  /** One operation through both clients, each on its own key (`#http` or `#sdk` suffixes). */
  async function both<Op extends DynamoDbOperation>(
    operation: Op,
    input: (suffix: string) => DynamoDbOperations[Op]['input'],
  ): Promise<[unknown, unknown]> {
    const settle = (p: Promise<unknown>) =>
      p.then(
        (value) => ({ value: JSON.parse(JSON.stringify(value).replaceAll('#http', '#x').replaceAll('#sdk', '#x')) }),
        (error: Error & Record<string, unknown>) => ({
          error: error.name,
          message: error.message,
          Item: error.Item,
          CancellationReasons: error.CancellationReasons,
        }),
      );
    const http = await settle(store.client.call(operation, input('#http')));
    const viaSdk = await settle(sdk.call(operation, input('#sdk')));
    return [
      JSON.parse(JSON.stringify(http).replaceAll('#http', '#x')),
      JSON.parse(JSON.stringify(viaSdk).replaceAll('#sdk', '#x')),
    ];
  }

  const table = () => store.tableName;
  const key = (suffix: string, sk = 'item') => ({ pk: { S: `parity${suffix}` }, sk: { S: sk } });

  it('writes, reads, updates and pages alike', async () => {
    const steps: [unknown, unknown][] = [];
    for (let i = 0; i < 5; i++)
      steps.push(
        await both('PutItem', (s) => ({
          TableName: table(),
          Item: {
            ...key(s, `item-${i}`),
            n: { N: String(i) },
            list: { L: [{ S: 'x' }, { BOOL: true }, { NULL: true }] },
          },
        })),
      );
    steps.push(await both('GetItem', (s) => ({ TableName: table(), Key: key(s, 'item-3'), ConsistentRead: true })));
    steps.push(
      await both('UpdateItem', (s) => ({
        TableName: table(),
        Key: key(s, 'item-3'),
        UpdateExpression: 'ADD n :one SET m = :m',
        ExpressionAttributeValues: { ':one': { N: '1' }, ':m': { M: { a: { SS: ['b', 'c'] } } } },
        ReturnValues: 'ALL_NEW',
      })),
    );
    steps.push(
      await both('Query', (s) => ({
        TableName: table(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': key(s).pk },
        Limit: 2,
        ConsistentRead: true,
      })),
    );
    steps.push(
      await both('BatchWriteItem', (s) => ({
        RequestItems: { [table()]: [{ DeleteRequest: { Key: key(s, 'item-0') } }] },
      })),
    );
    steps.push(
      await both('DeleteItem', (s) => ({ TableName: table(), Key: key(s, 'item-1'), ReturnValues: 'ALL_OLD' })),
    );
    for (const [http, viaSdk] of steps) expect(http).toEqual(viaSdk);
    // The answers were read, not empty: the update's item and the page's continuation key.
    expect(steps[6][0]).toMatchObject({ value: { Attributes: { n: { N: '4' } } } });
    expect(steps[7][0]).toMatchObject({ value: { Count: 2, LastEvaluatedKey: { sk: { S: 'item-1' } } } });
  });

  it('refuses alike: a failed condition with the old item, a cancelled transaction with its reasons', async () => {
    await both('PutItem', (s) => ({ TableName: table(), Item: { ...key(s, 'held'), v: { N: '1' } } }));
    const condition = await both('PutItem', (s) => ({
      TableName: table(),
      Item: { ...key(s, 'held'), v: { N: '2' } },
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }));
    expect(condition[0]).toEqual(condition[1]);
    expect(condition[0]).toMatchObject({
      error: 'ConditionalCheckFailedException',
      Item: { v: { N: '1' } },
    });
    const transaction = await both('TransactWriteItems', (s) => ({
      TransactItems: [
        { Put: { TableName: table(), Item: { ...key(s, 'free') } } },
        {
          ConditionCheck: {
            TableName: table(),
            Key: key(s, 'held'),
            ConditionExpression: 'v = :two',
            ExpressionAttributeValues: { ':two': { N: '2' } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ],
    }));
    expect(transaction[0]).toEqual(transaction[1]);
    expect(transaction[0]).toMatchObject({
      error: 'TransactionCanceledException',
      CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { v: { N: '1' } } }],
    });
    const invalid = await both('GetItem', () => ({ TableName: table(), Key: { pk: { S: 'only-half' } } }));
    expect(invalid[0]).toEqual(invalid[1]);
    expect(invalid[0]).toMatchObject({ error: 'ValidationException' });
  });
});
