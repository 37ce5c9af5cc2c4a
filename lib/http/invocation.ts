// One typed context per request, carried by middy from the first middleware to the last: the
// route, the caller, the decoded review and the outcome live here, and nowhere else. Middlewares
// write what they establish; the handler and the request log read it. Nothing is bolted onto the
// API Gateway event, and nothing is re-trusted with `!`: a missing piece is a bug, and says so.
import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { AdmissionRequest } from '../admission/request.js';
import type { GatewayEvent, GatewayResult } from './event.js';
import type { WebhookRoute } from './webhook-path.js';

export interface CallerIdentity {
  readonly mode: 'mtls' | 'url-secret';
  /** The client certificate's subject DN (mTLS), or the id of the matched secret (url-secret). */
  readonly subject: string;
}

/** What was answered, for the request log. */
export interface Outcome {
  readonly allowed: boolean;
  readonly patched: boolean;
  readonly warned: boolean;
  readonly audited: boolean;
  readonly code?: number;
  /** The plugin was not asked: the request is exempt (its AdmissionConfiguration entry). */
  readonly exempt?: true;
  /** The plugin's enforcement when it is not Deny: its refusals were warnings or audit annotations. */
  readonly enforcement?: 'Warn' | 'Audit';
}

/** A failure answered instead of a review. */
export interface Failure {
  readonly statusCode: number;
  readonly reason: string;
  readonly stack?: string;
}

export interface AdmissionInvocation {
  readonly startedAt: number;
  /** Set by the route middleware: the route the path names, whether this function serves it or not. */
  requested?: WebhookRoute;
  /** Set by the route middleware once the caller is known: the requested route, served here. */
  route?: WebhookRoute;
  /** Set by callerIdentity. */
  caller?: CallerIdentity;
  /** Set by admissionReviewParser. */
  review?: AdmissionRequest;
  /** Set by the handler. */
  outcome?: Outcome;
  /** Set by the handler: the store failure that lost this request's observation (learned state). */
  learningLost?: string;
  /** Set by httpErrors. */
  failure?: Failure;
  /** Set by admissionMetrics in EMF mode while logs are on: the metrics line the request log writes. */
  metricsLine?: string;
}

export type AdmissionContext = Context & { readonly admission: AdmissionInvocation };
export type AdmissionMiddyRequest = Request<GatewayEvent, GatewayResult, Error, AdmissionContext>;
export type AdmissionMiddleware = MiddlewareObj<GatewayEvent, GatewayResult, Error, AdmissionContext>;

/**
 * Lambda's context read through, with the invocation beside it. One class, so every request's
 * context has the same shape: a new object per request whose prototype was Lambda's own context
 * (a fresh object each time, in Lambda and in the local server) made V8 build a prototype and
 * two maps per request, turned every read of the context megamorphic, and filled old space with
 * maps (docs/performance.md). Reads and the one writable flag go to Lambda's context.
 */
class InvocationContext implements AdmissionContext {
  constructor(
    private readonly lambda: Context,
    readonly admission: AdmissionInvocation,
  ) {}
  get callbackWaitsForEmptyEventLoop(): boolean {
    return this.lambda.callbackWaitsForEmptyEventLoop;
  }
  set callbackWaitsForEmptyEventLoop(value: boolean) {
    this.lambda.callbackWaitsForEmptyEventLoop = value;
  }
  get functionName(): string {
    return this.lambda.functionName;
  }
  get functionVersion(): string {
    return this.lambda.functionVersion;
  }
  get invokedFunctionArn(): string {
    return this.lambda.invokedFunctionArn;
  }
  get memoryLimitInMB(): string {
    return this.lambda.memoryLimitInMB;
  }
  get awsRequestId(): string {
    return this.lambda.awsRequestId;
  }
  get logGroupName(): string {
    return this.lambda.logGroupName;
  }
  get logStreamName(): string {
    return this.lambda.logStreamName;
  }
  get identity(): Context['identity'] {
    return this.lambda.identity;
  }
  get clientContext(): Context['clientContext'] {
    return this.lambda.clientContext;
  }
  get tenantId(): string | undefined {
    return this.lambda.tenantId;
  }
  getRemainingTimeInMillis(): number {
    return this.lambda.getRemainingTimeInMillis();
  }
  done(error?: Error, result?: unknown): void {
    this.lambda.done(error, result);
  }
  fail(error: Error | string): void {
    this.lambda.fail(error);
  }
  succeed(message: unknown, object?: unknown): void {
    this.lambda.succeed(message as string, object);
  }
}

/**
 * Gives the request its invocation: a new context that reads Lambda's through, so
 * getRemainingTimeInMillis and the request id are Lambda's, and two invocations never share
 * state even when a caller reuses one Lambda context object.
 */
export function admissionInvocation(): AdmissionMiddleware {
  const admissionInvocationBefore = (request: AdmissionMiddyRequest): void => {
    request.context = new InvocationContext(request.context, { startedAt: performance.now() });
  };
  return { before: admissionInvocationBefore };
}

/** The piece a middleware earlier in the chain established; its absence is a wiring bug. */
export function established<K extends 'route' | 'caller' | 'review'>(
  context: AdmissionContext,
  key: K,
): NonNullable<AdmissionInvocation[K]> {
  const value = context.admission?.[key];
  if (value === undefined) throw new Error(`bug: no ${key} on the admission invocation (middleware order)`);
  return value as NonNullable<AdmissionInvocation[K]>;
}
