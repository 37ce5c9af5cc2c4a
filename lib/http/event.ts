import type { APIGatewayEventClientCertificate, APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyResult } from 'aws-lambda';
import type { AdmissionRequest } from '../admission/request.js';
import type { Phase } from '../admission/response.js';

/**
 * The event every admission Lambda receives: an API Gateway REST (v1) or HTTP API (v2) proxy
 * event. The middlewares add what they learn, so the plugin call needs no HTTP knowledge.
 */
export type GatewayEvent = (APIGatewayProxyEvent | APIGatewayProxyEventV2) & {
  /** Set by admissionReviewParser. */
  admissionRequest?: AdmissionRequest;
  /** Set by the caller-identity middleware. */
  caller?: CallerIdentity;
  /** Set by the handler: what was answered, for the request log. */
  outcome?: { allowed: boolean; patched: boolean; warned: boolean; audited: boolean; code?: number };
  /** Set by the handler: the store failure that lost this request's observation (learned state). */
  learningLost?: string;
  /** Set by httpErrors: the failure answered instead of a review, for the request log. */
  failure?: { statusCode: number; reason: string; stack?: string };
};

export type GatewayResult = APIGatewayProxyResult;

export interface CallerIdentity {
  readonly mode: 'mtls' | 'url-secret' | 'none';
  /** The client certificate's subject DN (mTLS), or the id of the matched secret (url-secret). */
  readonly subject: string;
}

function isV2(event: GatewayEvent): event is APIGatewayProxyEventV2 & GatewayEvent {
  return (event as APIGatewayProxyEventV2).version === '2.0';
}

/** The request path without query string: the apiserver appends `?timeout=10s`. */
export function requestPath(event: GatewayEvent): string {
  const path = isV2(event) ? event.rawPath : event.path;
  return (path ?? '/').split('?')[0];
}

/** The phase a webhook URL names: its last path segment. */
export function requestPhase(event: GatewayEvent): Phase | undefined {
  const last = requestPath(event).split('/').filter(Boolean).pop();
  return last === 'mutate' || last === 'validate' ? last : undefined;
}

/** API Gateway passes the verified client certificate in a different place for each API type. */
export function clientCertificate(event: GatewayEvent): APIGatewayEventClientCertificate | undefined {
  if (isV2(event)) return event.requestContext?.authentication?.clientCert ?? undefined;
  return event.requestContext?.identity?.clientCert ?? undefined;
}

export function headerValue(event: GatewayEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted) return value ?? undefined;
  }
  return undefined;
}

/** The body as text, decoding API Gateway's base64 when it chose to use it. */
export function bodyText(event: GatewayEvent): string {
  if (event.body === undefined || event.body === null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The body's size in bytes as sent, without decoding it. */
export function bodyBytes(event: GatewayEvent): number {
  if (event.body === undefined || event.body === null) return 0;
  if (event.isBase64Encoded) return Math.floor((event.body.length * 3) / 4);
  return Buffer.byteLength(event.body, 'utf8');
}
