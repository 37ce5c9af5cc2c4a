// The local webhook host: a Node HTTPS server that asks for client certificates and hands each
// request, as API Gateway would, to the same Lambda handlers that are deployed. serverless-offline
// cannot ask for client certificates (ecosystem notes), hence our own ~150 lines.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { APIGatewayEventClientCertificate, APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { MAX_BODY_BYTES } from '../../lib/http/body-limit.js';
import { bounded, coalesceStdoutLines, logRecord, MAX_LOGGED_STACK } from '../../lib/http/log.js';
import type { CapabilityGrant, CapabilityVerifier } from '../../lib/http/capability.js';
import { deploymentName } from '../../lib/http/capability.js';
import { refusedCapability } from '../../lib/http/errors.js';
import type { ClusterShare } from './fair-share.js';
import { throttledAnswer } from './fair-share.js';
import { commonName } from '../../lib/http/caller-identity.js';
import { internalErrorAnswer } from '../../lib/http/http-errors.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import {
  basePathBeforeRoute,
  clusterOfPath,
  formatWebhookPath,
  parseWebhookPath,
  redactWebhookPath,
} from '../../lib/http/webhook-path.js';

/** What one cluster of a fleet is served: its plugins' handlers, and its own keys (url-secret). */
export interface ClusterRoutes {
  readonly handlers: ReadonlyMap<string, AdmissionHandler>;
  readonly capabilities?: CapabilityVerifier;
  /** mTLS: the certificate subjects (CN or DN) of this cluster's apiservers, as its handlers hold them. */
  readonly allowedSubjects?: readonly string[];
  /** Its fair share (./fair-share.ts): a proven caller's request beyond it is answered 429. */
  readonly share?: ClusterShare;
}

export interface LocalServerOptions {
  /** Plugin name → its Lambda handler (a single cluster; empty in a fleet). */
  readonly handlers: ReadonlyMap<string, AdmissionHandler>;
  /**
   * A fleet (lib/config/fleet.ts): cluster name → what it is served, at `/<cluster>/...`. A path
   * naming no cluster served here is refused as an unknown capability is (url-secret), or 404 (mTLS).
   */
  readonly clusters?: ReadonlyMap<string, ClusterRoutes>;
  /** caPem may hold several CAs (during a rotation, the old and the new). */
  readonly tls: { readonly caPem: string; readonly certPem: string; readonly keyPem: string };
  /** mTLS refuses the handshake without a certificate from the CA; url-secret mode cannot ask for one. */
  readonly requireClientCertificate: boolean;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly maxBodyBytes?: number;
  /** A Lambda's timeout: what context.getRemainingTimeInMillis counts down from. */
  readonly functionTimeoutMs?: number;
  /**
   * url-secret mode: the deployment's public keys, as the handlers hold them. The server checks a
   * capability itself where no handler does (the metrics, a path it cannot route, a method other
   * than POST), so that whatever a caller without a capability sends, it gets the one refusal.
   */
  readonly capabilities?: CapabilityVerifier;
  /**
   * `GET /metrics`: the handlers' metrics in Prometheus text. Behind the same client certificate as
   * the webhooks; in url-secret mode (no certificate asked) at `/<capability>/metrics` instead,
   * with the capability of grant `metrics`.
   */
  readonly metrics?: { readonly text: () => string };
  /** A fleet: called once for every request a cluster's fair share refused (429). */
  readonly onThrottled?: (cluster: string) => void;
}

/**
 * How long an idle keep-alive connection stays open. A client that reuses an idle connection just
 * as the server closes it gets `connection reset by peer`, and the apiserver's Go client keeps
 * idle connections 90 s and never retries a POST: so the server must outlast every client's idle
 * pool (Go's 90 s, curl's 118 s), never the other way round. Node's default is 5 s.
 */
export const IDLE_CONNECTION_TIMEOUT_MS = 10 * 60_000;
/** Time to receive a request's headers, counted from its first byte (not from idleness). */
export const HEADERS_TIMEOUT_MS = 60_000;
/**
 * Time to receive a whole request: at least headersTimeout (Node refuses less). A review is a few
 * hundred KB at most, and the apiserver gives up on a webhook after 30 s.
 */
export const REQUEST_TIMEOUT_MS = 120_000;

export interface LocalServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

interface Route {
  readonly cluster?: string;
  readonly capability?: string;
  readonly plugin: string;
  readonly endpoint: Endpoint;
  readonly handler: AdmissionHandler;
}

/**
 * Routes on the path only (the apiserver appends `?timeout=10s`), as API Gateway's routes do:
 * `/<plugin>/<endpoint>` with mTLS, `/<capability>/<plugin>/<endpoint>` in url-secret mode.
 */
export function routeOf(
  path: string,
  handlers: ReadonlyMap<string, AdmissionHandler>,
  capabilitySegment = false,
  inFleet = false,
): Route | undefined {
  const route = parseWebhookPath(path, { withCapability: capabilitySegment, inFleet });
  const handler = route && handlers.get(route.plugin);
  return route && handler ? { ...route, handler } : undefined;
}

function pemOf(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function distinguishedName(name: PeerCertificate['subject']): string {
  const entries = Object.entries(name ?? {}).flatMap(([key, value]) =>
    Array.isArray(value) ? value.map((v) => [key, v]) : [[key, value]],
  );
  entries.sort(([a], [b]) => (a === 'CN' ? -1 : b === 'CN' ? 1 : 0));
  return entries.map(([key, value]) => `${key}=${value}`).join(',');
}

const clientCertBySocket = new WeakMap<TLSSocket, APIGatewayEventClientCertificate | null>();

/**
 * The certificate as API Gateway puts it in `requestContext.identity.clientCert`, worked out once
 * per TLS connection: the apiserver keeps connections alive across many reviews.
 */
export function apiGatewayClientCert(socket: TLSSocket): APIGatewayEventClientCertificate | null {
  let cert = clientCertBySocket.get(socket);
  if (cert === undefined) {
    cert = clientCertOf(socket);
    clientCertBySocket.set(socket, cert);
  }
  return cert;
}

function clientCertOf(socket: TLSSocket): APIGatewayEventClientCertificate | null {
  const peer = socket.getPeerCertificate();
  if (!peer?.raw || !socket.authorized) return null;
  return {
    clientCertPem: pemOf(peer.raw),
    subjectDN: distinguishedName(peer.subject),
    issuerDN: distinguishedName(peer.issuer),
    serialNumber:
      peer.serialNumber
        .match(/.{1,2}/g)
        ?.join(':')
        .toLowerCase() ?? '',
    validity: { notBefore: peer.valid_from, notAfter: peer.valid_to },
  };
}

function singleValued(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key in headers) {
    const value = headers[key];
    if (value !== undefined) out[key] = Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}

/** A target the URL parser returns as it is: one `/`, then letters, digits, `_-/`; a plain query. */
const PLAIN_TARGET = /^\/(?!\/)[\w\-/]*(?:\?[\w\-=&.%+]*)?$/;

/**
 * The path and query of a request target. The apiserver's (`/always-pull-images/mutate?timeout=10s`)
 * are plain, and split here: the URL parser was about 0.5 µs of every request. Anything else
 * (dot segments, percent-encoding, `//`, a fragment) is the URL parser's, as before.
 */
export function requestTarget(target: string): { pathname: string; searchParams: URLSearchParams } {
  if (!PLAIN_TARGET.test(target)) return new URL(target, 'https://local');
  const query = target.indexOf('?');
  if (query === -1) return { pathname: target, searchParams: new URLSearchParams() };
  return { pathname: target.slice(0, query), searchParams: new URLSearchParams(target.slice(query + 1)) };
}

function restEvent(
  req: IncomingMessage,
  route: Route,
  path: string,
  query: URLSearchParams,
  body: string,
): APIGatewayProxyEvent {
  const resourcePath = formatWebhookPath({
    plugin: route.plugin,
    endpoint: route.endpoint,
    ...(route.cluster !== undefined && { cluster: route.cluster }),
  });
  const clientCert = apiGatewayClientCert(req.socket as TLSSocket);
  // A loop, not Object.fromEntries(query.entries()): the same object, a third of the time.
  const queryParameters: Record<string, string> = {};
  for (const [name, value] of query) queryParameters[name] = value;
  return {
    resource: resourcePath,
    path,
    httpMethod: req.method ?? 'POST',
    headers: singleValued(req.headers),
    multiValueHeaders: {},
    queryStringParameters: Object.keys(queryParameters).length ? queryParameters : null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: req.method ?? 'POST',
      path,
      // What API Gateway puts here is the name the caller reached; the local server has only the
      // Host header to say it, port included (lib/http/capability.ts binds capabilities to it).
      domainName: req.headers.host ?? '',
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}

/**
 * Lambda's context for one request. A class, not an object literal with closures: one shape and
 * no function created per request (tsx, which runs `npm start`, wraps each in a naming call).
 */
class LocalLambdaContext implements Context {
  callbackWaitsForEmptyEventLoop = false;
  readonly functionVersion = '$LATEST';
  readonly memoryLimitInMB = '512';
  readonly logStreamName = 'local';
  readonly awsRequestId = randomUUID();
  readonly invokedFunctionArn: string;
  readonly logGroupName: string;
  private readonly deadline: number;
  constructor(
    readonly functionName: string,
    timeoutMs: number,
  ) {
    this.deadline = Date.now() + timeoutMs;
    this.invokedFunctionArn = `arn:aws:lambda:local:000000000000:function:${functionName}`;
    this.logGroupName = `/aws/lambda/${functionName}`;
  }
  getRemainingTimeInMillis(): number {
    return Math.max(0, this.deadline - Date.now());
  }
  done(): void {}
  fail(): void {}
  succeed(): void {}
}

const lambdaContext = (plugin: string, timeoutMs: number): Context =>
  new LocalLambdaContext(`serverless-admission-local-${plugin}`, timeoutMs);

function answer(
  res: ServerResponse,
  statusCode: number,
  body: string,
  headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' },
): void {
  res.writeHead(statusCode, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The server's last line of defence: the handlers answer their own failures. Logged, never echoed. */
function answerFailure(res: ServerResponse, error: Error): void {
  logRecord({
    level: 'error',
    statusCode: 500,
    failure: { reason: bounded(`internal error: ${error.message}`), stack: bounded(error.stack, MAX_LOGGED_STACK) },
  });
  if (!res.headersSent) answer(res, 500, `${internalErrorAnswer(undefined)}\n`);
}

/** mTLS in a fleet: whether the request's certificate is one of `served`'s, as its handlers check. */
function certificateOf(req: IncomingMessage, served: ClusterRoutes): boolean {
  const subject = apiGatewayClientCert(req.socket as TLSSocket)?.subjectDN;
  if (subject === undefined) return false;
  const cn = commonName(subject);
  return (served.allowedSubjects ?? []).some((s) => s === subject || s === cn);
}

/** url-secret mode: what the handler answers a caller whose capability grants nothing here. */
function answerRefusedCapability(res: ServerResponse): void {
  answer(res, 403, `${refusedCapability().message}\n`);
}

interface ReadyAnswer {
  readonly res: ServerResponse;
  readonly statusCode: number;
  readonly body: string;
  readonly headers: Record<string, string>;
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  coalesceStdoutLines(); // one write(2) per turn of the event loop, not per request
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const functionTimeoutMs = options.functionTimeoutMs ?? 10_000;
  const known = new Set(options.handlers.keys());

  /**
   * The reviews answered in one turn of the event loop go out together at its end (setImmediate),
   * in the order they were answered. Over loopback (a kind cluster; the throughput bench), a write
   * that finds its client asleep wakes it from inside the server's own system call: written as
   * each was ready, every answer paid that wake-up (its largest cost after TLS, the bench's
   * profile shows); written back to back, the client is awake for all but the first. An answer
   * waits at most for the rest of its turn's requests.
   */
  let ready: ReadyAnswer[] = [];
  function answerAtEndOfTurn(answered: ReadyAnswer): void {
    if (ready.length === 0) setImmediate(sendReadyAnswers);
    ready.push(answered);
  }
  function sendReadyAnswers(): void {
    const answers = ready;
    ready = [];
    for (const { res, statusCode, body, headers } of answers) {
      try {
        answer(res, statusCode, body, headers);
      } catch (error) {
        answerFailure(res, error as Error);
      }
    }
  }

  const urlSecret = !options.requireClientCertificate;
  const fleet = options.clusters;
  const single: ClusterRoutes = { handlers: options.handlers, capabilities: options.capabilities };
  if (fleet)
    for (const [name, routes] of fleet) for (const plugin of [name, ...routes.handlers.keys()]) known.add(plugin);

  /**
   * url-secret mode: whether the path's capability is one for `grant` at the deployment the request
   * reached (its Host header, and the path before the route), for the cluster the path names in a
   * fleet, as the handlers check.
   */
  function grants(
    req: IncomingMessage,
    pathname: string,
    capability: string,
    grant: CapabilityGrant,
    served: ClusterRoutes,
    cluster: string | undefined,
  ): boolean {
    const { capabilities } = served;
    const deployment = deploymentName(req.headers.host ?? '', basePathBeforeRoute(pathname, cluster !== undefined));
    if (capabilities === undefined || deployment === undefined) return false;
    return (
      capabilities.check(capability, { deployment, grant, ...(cluster !== undefined && { cluster }) }) !== undefined
    );
  }

  /**
   * The scrape path: `/metrics`, or exactly `[/<cluster>]/<capability>/metrics` when the caller's
   * proof is in the path (a fleet's cluster's metrics capability, in a fleet).
   */
  function isMetricsPath(req: IncomingMessage, pathname: string): boolean {
    if (!options.metrics) return false;
    if (!urlSecret) return pathname.split('/').filter(Boolean).join('/') === 'metrics';
    const segments = pathname.split('/');
    const cluster = fleet ? segments[1] : undefined;
    const served = cluster === undefined ? single : fleet?.get(cluster);
    const rest = cluster === undefined ? segments : ['', ...segments.slice(2)];
    if (served === undefined || rest.length !== 3 || rest[0] !== '' || rest[2] !== 'metrics') return false;
    return grants(req, pathname, rest[1], 'metrics', served, cluster);
  }

  async function serve(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const url = requestTarget(req.url ?? '/');
    const { metrics } = options;
    if (req.method === 'GET' && metrics !== undefined && isMetricsPath(req, url.pathname)) {
      return answer(res, 200, metrics.text(), { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    }
    // A fleet: the cluster the path names, served here or not (a removed cluster's URLs: 4xx).
    const cluster = fleet ? clusterOfPath(url.pathname) : undefined;
    const served = fleet ? (cluster === undefined ? undefined : fleet.get(cluster)) : single;
    if (served === undefined) {
      if (urlSecret) return answerRefusedCapability(res);
      return answer(res, 404, `no cluster at ${redactWebhookPath(url.pathname, urlSecret, known)}\n`);
    }
    // mTLS in a fleet: the certificate is one of this cluster's before anything is said of its routes.
    if (fleet && !urlSecret && !certificateOf(req, served)) {
      const subject = apiGatewayClientCert(req.socket as TLSSocket)?.subjectDN ?? '';
      return answer(
        res,
        403,
        `client certificate subject ${JSON.stringify(subject)} is not allowed for cluster ${cluster}\n`,
      );
    }
    const route = routeOf(url.pathname, served.handlers, urlSecret, fleet !== undefined);
    if (!route || req.method !== 'POST') {
      // url-secret mode: what is served here is said only to a caller with a capability for it.
      const requested = urlSecret
        ? parseWebhookPath(url.pathname, { withCapability: true, inFleet: fleet !== undefined })
        : undefined;
      const granted =
        requested?.capability !== undefined &&
        grants(
          req,
          url.pathname,
          requested.capability,
          { plugin: requested.plugin, endpoint: requested.endpoint },
          served,
          cluster,
        );
      if (urlSecret && !granted) return answerRefusedCapability(res);
      if (!route) return answer(res, 404, `no webhook at ${redactWebhookPath(url.pathname, urlSecret, known)}\n`);
      return answer(res, 405, 'admission webhooks answer POST only\n', {
        'content-type': 'text/plain; charset=utf-8',
        allow: 'POST',
      });
    }
    // A fleet's fair share, drawn only by a caller proven to be the cluster (its certificate, checked
    // above, or a capability of its key): a stranger's requests cannot spend a cluster's share.
    if (fleet && cluster !== undefined && served.share !== undefined) {
      const proven =
        !urlSecret ||
        (route.capability !== undefined &&
          grants(
            req,
            url.pathname,
            route.capability,
            { plugin: route.plugin, endpoint: route.endpoint },
            served,
            cluster,
          ));
      const wait = proven ? served.share.take() : undefined;
      if (wait !== undefined) {
        options.onThrottled?.(cluster);
        return answer(res, 429, throttledAnswer(cluster, served.share.settings), {
          'content-type': 'text/plain; charset=utf-8',
          'retry-after': String(wait),
        });
      }
    }
    const event = restEvent(req, route, url.pathname, url.searchParams, body);
    const result = await route.handler(event, lambdaContext(route.plugin, functionTimeoutMs));
    const headers: Record<string, string> = {};
    for (const name in result.headers) headers[name] = String(result.headers[name]);
    answerAtEndOfTurn({ res, statusCode: result.statusCode, body: result.body, headers });
  }

  const server = createServer(
    {
      key: options.tls.keyPem,
      cert: options.tls.certPem,
      ca: options.tls.caPem,
      requestCert: options.requireClientCertificate,
      rejectUnauthorized: options.requireClientCertificate,
      minVersion: 'TLSv1.2',
      keepAliveTimeout: IDLE_CONNECTION_TIMEOUT_MS,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      let received = 0;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        // Past the limit, keep draining (so the client reads our answer) but keep nothing.
        if (received <= maxBodyBytes) chunks.push(chunk);
      });
      req.on('end', () => {
        if (received > maxBodyBytes) {
          return answer(res, 413, `body of ${received} bytes exceeds the limit of ${maxBodyBytes} bytes\n`);
        }
        // A review arrives in one chunk, mostly: decoded as it is, without a copy.
        const body = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
        serve(req, res, body).catch((error: Error) => answerFailure(res, error));
      });
      req.on('error', () => res.destroy());
    },
  );

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `https://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
