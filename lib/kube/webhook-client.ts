// A client for an external webhook backend named by a kubeconfig file, as the apiserver's
// webhook.LoadKubeconfig reads one (ImagePolicyWebhook's kubeConfigFile): the current context's
// cluster (server, certificate-authority[-data], insecure-skip-tls-verify) and user
// (client-certificate[-data], client-key[-data], token). Files are read once, at configuration,
// through lib/config/documents, so packaging carries them inside the packaged configuration.
import { Agent, request } from 'node:https';
import { DocumentError, readDocument, readTextFile } from '../config/documents.js';
import { type Kubeconfig, KubeconfigError, pem, pick, serverUrl } from './kubeconfig.js';

export { KubeconfigError };

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

/** A file the kubeconfig names, read once through the configuration's documents. */
function readFile(file: string, field: string, target: string): string {
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
  // An empty list is no error here: its entry is undefined, and the checks below name what is
  // then missing (the server).
  const context = pick(config.contexts, config['current-context'] || undefined, 'context', file)?.context;
  const cluster = pick(config.clusters, context?.cluster, 'cluster', file)?.cluster;
  const user = pick(config.users, context?.user, 'user', file)?.user;
  const url = serverUrl(cluster?.server, file);
  const server = cluster?.server as string;
  const read = (field: string, target: string) => readFile(file, field, target);
  const cert = pem(user, 'client-certificate', file, read);
  const key = pem(user, 'client-key', file, read);
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(`${file}: client-certificate and client-key go together`);
  const token = typeof user?.token === 'string' && user.token !== '' ? user.token : undefined;
  // One keep-alive agent per backend, kept for the Lambda instance's life.
  const agent = new Agent({
    keepAlive: true,
    ca: pem(cluster, 'certificate-authority', file, read),
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
