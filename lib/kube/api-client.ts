// The few verbs the cluster reader needs from the kube-apiserver: GET, LIST (paged with limit and
// continue, at a resourceVersion), WATCH (a stream of JSON lines, from a resourceVersion, with
// bookmarks) and metadata-only lists and watches (PartialObjectMetadata) where only names, uids,
// labels or counts are read. One keep-alive HTTPS agent per client certificate; a 401 asks the
// credentials again once (an exec plugin's token may have been revoked or rotated).
import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../admission/types.js';
import type { ClusterCredentials, Presented } from './cluster-credentials.js';

/** The apiserver answered with an error status (its Status message), or could not be reached (status 0). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    /** metav1.Status reason (NotFound, Expired, Gone...) when the apiserver gave one. */
    readonly reason = '',
  ) {
    super(message);
  }
  /** The resourceVersion asked for is older than the apiserver keeps (410): relist. */
  get gone(): boolean {
    return this.status === 410;
  }
}

export interface ObjectList {
  readonly items: KubeObject[];
  /** The list's resourceVersion: a watch from it misses nothing. */
  readonly resourceVersion: string;
}

export type WatchEvent =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: KubeObject }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string };

export interface ListOptions {
  readonly metadataOnly?: boolean;
  /** Page size (default 500, as client-go's pager). */
  readonly limit?: number;
  readonly timeoutMs?: number;
}

export interface WatchOptions {
  readonly resourceVersion: string;
  readonly metadataOnly?: boolean;
  /** The apiserver ends the watch after this many seconds (it may end it sooner). */
  readonly timeoutSeconds: number;
  /** Stops the watch from this side. */
  readonly signal?: AbortSignal;
}

const JSON_TYPE = 'application/json';
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const METADATA_OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const DEFAULT_TIMEOUT_MS = 30_000;

function statusError(status: number, body: string, what: string): ApiError {
  try {
    const parsed = JSON.parse(body) as { kind?: string; message?: string; reason?: string };
    if (parsed.kind === 'Status' && typeof parsed.message === 'string')
      return new ApiError(status, `${what}: ${parsed.message}`, parsed.reason ?? '');
  } catch {
    // not a Status: the status code alone speaks
  }
  return new ApiError(status, `${what}: HTTP ${status}`);
}

export class ApiClient {
  private readonly agents = new Map<string, Agent>();

  constructor(readonly credentials: ClusterCredentials) {}

  get server(): string {
    return this.credentials.server;
  }

  private agentFor(presented: Presented): Agent {
    const id = presented.cert ?? '';
    let agent = this.agents.get(id);
    if (agent === undefined) {
      agent = new Agent({
        keepAlive: true,
        ca: this.credentials.ca,
        ...(presented.cert !== undefined && { cert: presented.cert, key: presented.key }),
      });
      this.agents.set(id, agent);
    }
    return agent;
  }

  /** One request; the response stream is handed over unread (a watch reads it as it comes). */
  private async open(
    path: string,
    accept: string,
    timeoutMs: number,
    signal?: AbortSignal,
    retried = false,
  ): Promise<IncomingMessage> {
    const presented = await this.credentials.present();
    const what = `GET ${path}`;
    const response = await new Promise<IncomingMessage>((resolveOpen, reject) => {
      const req = request(`${this.server}${path}`, {
        method: 'GET',
        agent: this.agentFor(presented),
        headers: {
          accept,
          'user-agent': 'serverless-admission-reader',
          ...(presented.token !== undefined && { authorization: `Bearer ${presented.token}` }),
        },
        timeout: timeoutMs,
        ...(signal && { signal }),
      });
      req.on('response', resolveOpen);
      req.on('timeout', () => req.destroy(new ApiError(0, `${what}: no answer in ${timeoutMs} ms`)));
      req.on('error', (error) =>
        reject(error instanceof ApiError ? error : new ApiError(0, `${what}: ${(error as Error).message}`)),
      );
      req.end();
    });
    const status = response.statusCode ?? 0;
    if (status === 401 && !retried) {
      response.resume();
      this.credentials.invalidate();
      return this.open(path, accept, timeoutMs, signal, true);
    }
    if (status >= 300) throw statusError(status, await readAll(response), what);
    return response;
  }

  /** The object at `path`, or undefined when the apiserver says 404. */
  async get(path: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<KubeObject | undefined> {
    try {
      const response = await this.open(path, JSON_TYPE, timeoutMs);
      return JSON.parse(await readAll(response)) as KubeObject;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /**
   * Every object of a collection, page by page, as of one resourceVersion (the first page's; the
   * continue token keeps the snapshot). An expired continue token is a 410: the caller lists again.
   */
  async list(path: string, options: ListOptions = {}): Promise<ObjectList> {
    const items: KubeObject[] = [];
    let continueToken = '';
    let resourceVersion = '';
    do {
      const query = new URLSearchParams({ limit: String(options.limit ?? 500) });
      if (continueToken !== '') query.set('continue', continueToken);
      const response = await this.open(
        `${path}?${query}`,
        options.metadataOnly ? METADATA_LIST : JSON_TYPE,
        options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      );
      const page = JSON.parse(await readAll(response)) as {
        items?: KubeObject[];
        metadata?: { resourceVersion?: string; continue?: string };
      };
      items.push(...(page.items ?? []));
      if (resourceVersion === '') resourceVersion = page.metadata?.resourceVersion ?? '';
      continueToken = page.metadata?.continue ?? '';
    } while (continueToken !== '');
    return { items, resourceVersion };
  }

  /**
   * Watches a collection from `resourceVersion` until the apiserver ends the stream (its
   * timeoutSeconds), the signal aborts it, or it fails. Each event is handed to `onEvent` in order,
   * the next only once the previous one is handled. An ERROR event becomes an ApiError (410: relist).
   */
  async watch(path: string, options: WatchOptions, onEvent: (event: WatchEvent) => Promise<void>): Promise<void> {
    const query = new URLSearchParams({
      watch: '1',
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(options.timeoutSeconds),
    });
    const response = await this.open(
      `${path}?${query}`,
      options.metadataOnly ? METADATA_OBJECT : JSON_TYPE,
      // The socket idles between events; the apiserver's timeoutSeconds ends the stream.
      (options.timeoutSeconds + 30) * 1000,
      options.signal,
    );
    let buffered = '';
    try {
      for await (const chunk of response) {
        buffered += (chunk as Buffer).toString('utf8');
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf('\n');
          if (line !== '') await onEvent(decodeEvent(line, path));
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error instanceof ApiError ? error : new ApiError(0, `watch ${path}: ${(error as Error).message}`);
    }
  }

  /** Closes idle keep-alive sockets (at the end of a Lambda run, or a test). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

function decodeEvent(line: string, path: string): WatchEvent {
  const event = JSON.parse(line) as { type?: string; object?: KubeObject & { code?: number; message?: string } };
  const object = event.object ?? {};
  switch (event.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { type: event.type, object };
    case 'BOOKMARK':
      return { type: 'BOOKMARK', resourceVersion: String(object.metadata?.resourceVersion ?? '') };
    case 'ERROR': {
      const reason = typeof (object as { reason?: unknown }).reason === 'string' ? String(object.reason) : '';
      throw new ApiError(object.code ?? 500, `watch ${path}: ${object.message ?? 'error'}`, reason);
    }
    default:
      throw new ApiError(0, `watch ${path}: unknown event type ${JSON.stringify(event.type)}`);
  }
}

async function readAll(stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
