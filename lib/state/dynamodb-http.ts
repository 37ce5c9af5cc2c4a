// The DynamoDB client every stateful function bundles: the service's JSON protocol (awsJson1_0:
// one POST with the operation in X-Amz-Target and its input as the body), signed with Signature
// Version 4 by `aws4`, over Node's own http/https with keep-alive connections. It replaces the AWS
// SDK's client in the functions because the SDK made a stateful bundle several times larger and
// its import the larger part of a cold start (docs/performance.md, "Cold starts"; the decision in
// docs/design/decisions.md); the CLIs keep the SDK (dynamodb-sdk.ts).
//
// What it keeps of the SDK's client, and tests against it (test/state/dynamodb-http.test.ts):
// - the answer: the body as the service sends it, the same shapes the SDK returns;
// - a refusal: an Error named by the service's error code, carrying the error's fields (`Item`,
//   `CancellationReasons`), as the SDK's exceptions do;
// - retries: the SDK's standard strategy (3 attempts; throttling codes, transient codes, HTTP
//   500/502/503/504 and the network errors it names; a full-jitter backoff of 100 ms, 500 ms for
//   throttling, doubling per attempt, at most 20 s). A refused condition is never retried.
// Left out: the SDK's client-wide retry quota, which stops retrying when many calls fail together;
// its correction of a skewed clock (Lambda's clock is synchronised); its credential chain beyond
// the environment; FIPS and dual-stack endpoints.
import type { Agent, IncomingMessage, request as httpRequest } from 'node:http';
import type aws4 from 'aws4';
import type { DynamoDb, DynamoDbOperation, DynamoDbOperations } from './dynamodb.js';

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface HttpDynamoDbOptions {
  /** The service's URL: regionalEndpoint(region) on AWS, DynamoDB Local's locally. */
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: AwsCredentials;
  /** Attempts per call, the first included (the SDK's default: 3). */
  readonly maxAttempts?: number;
  /** Tests: the wait before a retry, and the jitter's random source. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

/** DynamoDB's regional endpoint (the partition's domain for China's regions). */
export function regionalEndpoint(region: string): string {
  return `https://dynamodb.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;
}

/** A call the service (or the connection) refused; `name` is the service's error code. */
export class DynamoDbError extends Error {
  constructor(
    name: string,
    message: string,
    /** The HTTP status, when the service answered. */
    readonly statusCode: number | undefined,
    fields: Record<string, unknown> = {},
  ) {
    super(message);
    Object.assign(this, fields);
    this.name = name;
  }
}

// The SDK's classification (@smithy/core's service-error-classification).
const THROTTLING = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const TRANSIENT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
const NETWORK = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const DELAY_BASE_MS = 100;
const THROTTLING_DELAY_BASE_MS = 500;
const MAX_DELAY_MS = 20_000;

/** The backoff base for a retryable failure, or undefined when it is not retried. */
function retryDelayBase(error: unknown): number | undefined {
  const e = error as { name?: string; code?: string; statusCode?: number };
  if (THROTTLING.has(e?.name ?? '') || e?.statusCode === 429) return THROTTLING_DELAY_BASE_MS;
  if (TRANSIENT.has(e?.name ?? '') || TRANSIENT_STATUS.has(e?.statusCode ?? 0)) return DELAY_BASE_MS;
  if (NETWORK.has(e?.code ?? '')) return DELAY_BASE_MS;
  return undefined;
}

const TARGET_PREFIX = 'DynamoDB_20120810.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';

/** What calls go over: a keep-alive agent, its module's request, and aws4's signer. */
interface Transport {
  readonly agent: Agent;
  readonly request: typeof httpRequest;
  readonly sign: typeof aws4.sign;
}

export class HttpDynamoDb implements DynamoDb {
  private readonly url: URL;
  /**
   * Made at the first call, not when the client is: a function builds its client at init, and
   * node:https (with node:tls) and aws4 (with node:crypto) took about 10 ms of CPU there, paid by
   * every cold start, also those whose first request never reaches the store (docs/performance.md,
   * "Cold starts"). The first call pays it instead.
   */
  #transport: Promise<Transport> | undefined;
  #agent: Agent | undefined;

  constructor(private readonly options: HttpDynamoDbOptions) {
    this.url = new URL(options.endpoint);
  }

  private transport(): Promise<Transport> {
    this.#transport ??= import('aws4').then(({ default: signer }) => {
      // The SDK's Node handler keeps connections alive, 50 to a host.
      const agentOptions = { keepAlive: true, maxSockets: 50 };
      const { Agent, request } =
        this.url.protocol === 'https:' ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
      this.#agent = new Agent(agentOptions);
      return { agent: this.#agent, request, sign: signer.sign };
    });
    return this.#transport;
  }

  async call<Op extends DynamoDbOperation>(
    operation: Op,
    input: DynamoDbOperations[Op]['input'],
  ): Promise<DynamoDbOperations[Op]['output']> {
    const body = JSON.stringify(input);
    const maxAttempts = this.options.maxAttempts ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.send(operation, body)) as DynamoDbOperations[Op]['output'];
      } catch (error) {
        const base = attempt + 1 < maxAttempts ? retryDelayBase(error) : undefined;
        if (base === undefined) throw error;
        const random = this.options.random ?? Math.random;
        const delay = Math.floor(Math.min(MAX_DELAY_MS, random() * 2 ** attempt * base));
        await (this.options.sleep ?? sleep)(delay);
      }
    }
  }

  destroy(): void {
    this.#agent?.destroy();
  }

  private async send(operation: string, body: string): Promise<unknown> {
    const { credentials, region } = this.options;
    const { agent, request: send, sign } = await this.transport();
    const signed = sign(
      {
        service: 'dynamodb',
        region,
        method: 'POST',
        path: '/',
        headers: { Host: this.url.host, 'Content-Type': CONTENT_TYPE, 'X-Amz-Target': `${TARGET_PREFIX}${operation}` },
        body,
      },
      credentials,
    );
    return new Promise((resolve, reject) => {
      const request = send(
        {
          hostname: this.url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: this.url.port || undefined,
          path: '/',
          method: 'POST',
          headers: signed.headers,
          agent,
        },
        (response) => readAnswer(response).then(resolve, reject),
      );
      request.on('error', reject);
      request.end(body);
    });
  }
}

async function readAnswer(response: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const status = response.statusCode ?? 0;
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    parsed = undefined;
  }
  if (status === 200 && parsed !== undefined) return parsed;
  if (status === 200)
    throw new DynamoDbError('DeserializationError', `an answer that is not JSON: ${text.slice(0, 200)}`, status);
  // An error: its type in the body's __type ("com.amazonaws.dynamodb.v20120810#Code"), or in the
  // x-amzn-errortype header ("Code:http://..."); its message as `message` or `Message`.
  const { __type, message, Message, ...fields } = parsed ?? {};
  const header = response.headers['x-amzn-errortype'];
  const type = typeof __type === 'string' ? __type : typeof header === 'string' ? header : '';
  const name = type.split('#').pop()?.split(':')[0] || `HTTP${status}`;
  const description =
    typeof message === 'string' ? message : typeof Message === 'string' ? Message : text.slice(0, 200);
  throw new DynamoDbError(name, description, status, fields);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
