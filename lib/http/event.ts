import type {
  APIGatewayEventClientCertificate,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyResult,
} from 'aws-lambda';

/**
 * The event every admission Lambda receives: an API Gateway REST (v1) or HTTP API (v2) proxy
 * event, as API Gateway sent it. What the middlewares learn about the request lives in the
 * invocation context (invocation.ts), never on the event.
 */
export type GatewayEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2;

export type GatewayResult = APIGatewayProxyResult;

function isV2(event: GatewayEvent): event is APIGatewayProxyEventV2 {
  return (event as APIGatewayProxyEventV2).version === '2.0';
}

/** The request path without query string: the apiserver appends `?timeout=10s`. */
export function requestPath(event: GatewayEvent): string {
  const path = isV2(event) ? event.rawPath : event.path;
  return (path ?? '/').split('?')[0];
}

/**
 * The name the caller reached, as API Gateway saw it: `requestContext.domainName`, the custom
 * domain or the execute-api name (the local server puts the request's Host header there, port
 * included). Never the Host header itself: on API Gateway that is the caller's word.
 */
export function reachedDomain(event: GatewayEvent): string | undefined {
  return event.requestContext?.domainName || undefined;
}

/**
 * The path as the caller sent it, before API Gateway took off a stage: REST's
 * `requestContext.path` (`/<stage>/...` on an execute-api name), HTTP API's rawPath.
 */
export function calledPath(event: GatewayEvent): string {
  if (isV2(event)) return event.rawPath ?? '/';
  return event.requestContext?.path || event.path || '/';
}

/**
 * The path a fleet's webhook route is read from: the path as called, whose first segment names
 * the cluster. A packaged fleet serves each cluster on its own API Gateway stage, named after the
 * cluster, so API Gateway routes a path without it: on the execute-api name the stage is the
 * called path's first segment and `path` leaves it out, on the custom domain the base path mapped
 * to the stage is, and `path` keeps it. `requestContext.path` holds it both ways, as the local
 * server's does.
 */
export function fleetPath(event: GatewayEvent): string {
  return calledPath(event).split('?')[0];
}

/**
 * The API Gateway stage the request came through: in a packaged fleet, the cluster whose share
 * (the stage's throttle) it spent. Undefined when the event names none.
 */
export function gatewayStage(event: GatewayEvent): string | undefined {
  return event.requestContext?.stage || undefined;
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
