// A client for an external webhook backend named by a kubeconfig file, as the apiserver's
// webhook.LoadKubeconfig reads one (ImagePolicyWebhook's kubeConfigFile): the current context's
// cluster (server, certificate-authority[-data], insecure-skip-tls-verify) and user
// (client-certificate[-data], client-key[-data], token). Files are read once, at configuration,
// through lib/config/documents, so packaging carries them inside the packaged configuration.
import { Agent, request } from 'node:https';
import { dirname, isAbsolute, resolve } from 'node:path';
import { DocumentError, readDocument, readTextFile } from '../config/documents.js';

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

/** The backend failed to answer (network, TLS, timeout): the caller's failure policy decides. */
export class BackendError extends Error {
  override readonly name = 'BackendError';
  constructor(
    message: string,
    /** A transient failure worth retrying (connection reset, timeout). */
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export interface BackendResponse {
  readonly statusCode: number;
  readonly body: string;
}

export interface WebhookClient {
  readonly server: string;
  post(body: unknown, timeoutMs: number): Promise<BackendResponse>;
}

type Named<T> = { name?: string } & T;
interface Kubeconfig {
  'current-context'?: string;
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
}

function pick<T extends { name?: string }>(
  list: T[] | undefined,
  name: string | undefined,
  what: string,
  file: string,
): T | undefined {
  if (!list || list.length === 0) return undefined;
  if (name === undefined) {
    if (list.length === 1) return list[0];
    throw new KubeconfigError(`${file}: no current-context, and ${list.length} ${what}s to choose from`);
  }
  const found = list.find((entry) => entry.name === name);
  if (!found) throw new KubeconfigError(`${file}: ${what} ${JSON.stringify(name)} not found`);
  return found;
}

/** A PEM from `<field>-data` (base64) or `<field>` (a file, relative to the kubeconfig). */
function pem(entry: Record<string, unknown> | undefined, field: string, file: string): string | undefined {
  const data = entry?.[`${field}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  const path = entry?.[field];
  if (typeof path !== 'string' || path === '') return undefined;
  const target = isAbsolute(path) ? path : resolve(dirname(file), path);
  try {
    return readTextFile(target);
  } catch (error) {
    if (error instanceof DocumentError) throw new KubeconfigError(`${file}: ${field} ${target}: ${error.reason}`);
    throw new KubeconfigError(
      `${file}: ${field} ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

export function loadKubeconfigClient(file: string): WebhookClient {
  let config: Kubeconfig;
  try {
    config = (readDocument(file) ?? {}) as Kubeconfig;
  } catch (error) {
    if (error instanceof DocumentError) throw new KubeconfigError(`${file}: ${error.reason}`);
    throw error;
  }
  const context = pick(config.contexts, config['current-context'] || undefined, 'context', file)?.context;
  const cluster = pick(config.clusters, context?.cluster, 'cluster', file)?.cluster;
  const user = pick(config.users, context?.user, 'user', file)?.user;
  const server = cluster?.server;
  if (typeof server !== 'string' || server === '') throw new KubeconfigError(`${file}: the cluster has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`${file}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new KubeconfigError(`${file}: server ${server} must use https`);
  const cert = pem(user, 'client-certificate', file);
  const key = pem(user, 'client-key', file);
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(`${file}: client-certificate and client-key go together`);
  const token = typeof user?.token === 'string' && user.token !== '' ? user.token : undefined;
  // One keep-alive agent per backend, kept for the Lambda instance's life.
  const agent = new Agent({
    keepAlive: true,
    ca: pem(cluster, 'certificate-authority', file),
    rejectUnauthorized: cluster?.['insecure-skip-tls-verify'] !== true,
    ...(cert !== undefined && { cert, key }),
  });

  return {
    server,
    post(body, timeoutMs) {
      const payload = JSON.stringify(body);
      return new Promise<BackendResponse>((resolvePost, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              accept: 'application/json',
              'content-length': Buffer.byteLength(payload),
              ...(token && { authorization: `Bearer ${token}` }),
            },
            timeout: timeoutMs,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolvePost({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
            );
            res.on('error', (error) => reject(new BackendError(`Post "${server}": ${error.message}`, true)));
          },
        );
        req.on('timeout', () => req.destroy(new BackendError(`Post "${server}": timeout after ${timeoutMs} ms`, true)));
        req.on('error', (error: NodeJS.ErrnoException) =>
          reject(
            error instanceof BackendError
              ? error
              : new BackendError(`Post "${server}": ${error.message}`, error.code === 'ECONNRESET'),
          ),
        );
        req.end(payload);
      });
    },
  };
}
