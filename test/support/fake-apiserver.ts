// A loopback HTTPS server that answers as a kube-apiserver is scripted to, for the faults a real
// one will not produce on demand (a 401 for a token, an expired watch, a connection dropped
// mid-stream). Every request is recorded: its path, query, Accept and Authorization headers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { testPki } from './pki.js';

export interface ReceivedRequest {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly accept: string;
  readonly authorization: string;
  readonly watch: boolean;
}

export type Responder = (request: ReceivedRequest, response: ServerResponse) => void;

export interface FakeApiserver {
  /** https://127.0.0.1:PORT */
  readonly url: string;
  /** The CA that signed its serving certificate. */
  readonly ca: string;
  readonly received: ReceivedRequest[];
  /** Answers the next request with the first queued responder; an empty queue holds a watch open. */
  readonly queue: Responder[];
  close(): Promise<void>;
}

/** A JSON answer. */
export function answer(status: number, body: unknown): Responder {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
}

/** A metav1.Status answer, as the apiserver sends for an error. */
export function status(code: number, reason: string, message: string): Responder {
  return answer(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
}

/** A list page. */
export function listPage(items: unknown[], resourceVersion: string, continueToken = ''): Responder {
  return answer(200, {
    kind: 'List',
    apiVersion: 'v1',
    metadata: { resourceVersion, ...(continueToken !== '' && { continue: continueToken }) },
    items,
  });
}

export type StreamEnd = 'end' | 'drop' | 'hold';

/**
 * A watch stream of `events` (one JSON object a line). Then: `end` closes it as the apiserver does
 * at timeoutSeconds, `drop` destroys the connection mid-stream, `hold` keeps it open.
 */
export function watchStream(events: unknown[], then: StreamEnd = 'hold'): Responder {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    for (const event of events) response.write(`${JSON.stringify(event)}\n`);
    if (then === 'end') response.end();
    // A chunked response cut without its last chunk: the client sees the connection fail.
    else if (then === 'drop') setTimeout(() => response.socket?.destroy(), 20);
  };
}

/** A namespace object as the apiserver stores it. */
export function namespaceObject(name: string, resourceVersion: string, annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, uid: `uid-${name}`, resourceVersion, annotations },
    status: { phase: 'Active' },
  };
}

export async function startFakeApiserver(): Promise<FakeApiserver> {
  const pki = testPki();
  const received: ReceivedRequest[] = [];
  const queue: Responder[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'https://fake');
    const entry: ReceivedRequest = {
      path: url.pathname,
      query: url.searchParams,
      accept: String(req.headers.accept ?? ''),
      authorization: String(req.headers.authorization ?? ''),
      watch: url.searchParams.get('watch') === '1',
    };
    received.push(entry);
    open.add(res);
    res.on('close', () => open.delete(res));
    const next = queue.shift();
    if (next) next(entry, res);
    else if (entry.watch) watchStream([], 'hold')(entry, res);
    else status(500, 'InternalError', `no answer scripted for ${req.url}`)(entry, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    ca: pki.ca.certPem,
    received,
    queue,
    close: () =>
      new Promise((resolve) => {
        for (const res of open) res.socket?.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until `condition` holds (checked every 20 ms), failing after `boundMs` with `what`. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, boundMs = 20_000) {
  const deadline = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
