// How the cluster reader proves who it is to the kube-apiserver, read from a kubeconfig as kubectl
// reads one: the current context's cluster (server, certificate-authority[-data]) and user (token,
// tokenFile, client-certificate[-data] + client-key[-data], or an exec credential plugin run as
// kubectl runs it: client.authentication.k8s.io/v1 ExecCredential on stdout, KUBERNETES_EXEC_INFO
// in its environment, the answer kept until its expirationTimestamp). insecure-skip-tls-verify is
// refused: a reader that believes any server would let anyone on the path decide admission.
// Hand-written: @kubernetes/client-node would bring a large dependency tree into every bundle
// that reads the cluster, for the four verbs the reader uses.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { type Kubeconfig, KubeconfigError, pem, pick, relative, serverUrl } from './kubeconfig.js';

export { KubeconfigError };

/** What one request presents: a bearer token, or a client certificate and key. */
export interface Presented {
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
}

export interface ClusterCredentials {
  /** https://host[:port][/prefix], without a trailing slash. */
  readonly server: string;
  /** PEM of the CA that signs the apiserver's certificate; undefined: the system's roots. */
  readonly ca?: string;
  /** What to present now (an exec plugin or a token source is asked only when its answer expired). */
  present(): Promise<Presented>;
  /** The apiserver answered 401: forget a cached answer, so the next present() asks again. */
  invalidate(): void;
}

/** The list, when it has an entry: the reader needs a context, a cluster and a user. */
function nonEmpty<T>(list: T[] | undefined, what: string, file: string): T[] {
  if (!list || list.length === 0) throw new KubeconfigError(`${file}: no ${what}s`);
  return list;
}

/** A file the kubeconfig names, read now from the disk. */
function readFile(file: string, field: string, target: string): string {
  try {
    return readFileSync(target, 'utf8');
  } catch (error) {
    throw new KubeconfigError(`${file}: ${field} ${target}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

/** The server URL, checked: https only, no trailing slash. */
export function checkedServer(server: unknown, where: string): string {
  serverUrl(server, where);
  return (server as string).replace(/\/+$/, '');
}

/** The credentials a kubeconfig file names (its current context). */
export function kubeconfigCredentials(file: string, env: NodeJS.ProcessEnv = process.env): ClusterCredentials {
  let config: Kubeconfig;
  try {
    config = (parse(readFileSync(file, 'utf8')) ?? {}) as Kubeconfig;
  } catch (error) {
    throw new KubeconfigError(`${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const read = (field: string, target: string) => readFile(file, field, target);
  const context = pick(
    nonEmpty(config.contexts, 'context', file),
    config['current-context'] || undefined,
    'context',
    file,
  )?.context;
  const cluster = pick(nonEmpty(config.clusters, 'cluster', file), context?.cluster, 'cluster', file)?.cluster;
  const user = pick(nonEmpty(config.users, 'user', file), context?.user, 'user', file)?.user ?? {};
  const server = checkedServer(cluster?.server, file);
  if (cluster?.['insecure-skip-tls-verify'] === true)
    throw new KubeconfigError(
      `${file}: insecure-skip-tls-verify is refused: the reader must know the apiserver it reads; give certificate-authority-data`,
    );
  const ca = pem(cluster, 'certificate-authority', file, read);
  const cert = pem(user, 'client-certificate', file, read);
  const key = pem(user, 'client-key', file, read);
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(`${file}: client-certificate and client-key go together`);
  const exec = user.exec as ExecConfig | undefined;
  if (exec !== undefined) return { server, ca, ...execCredentials(file, exec, server, ca, env) };
  const token = typeof user.token === 'string' && user.token !== '' ? user.token : undefined;
  const tokenFile = typeof user.tokenFile === 'string' && user.tokenFile !== '' ? user.tokenFile : undefined;
  if (token === undefined && tokenFile === undefined && cert === undefined)
    throw new KubeconfigError(`${file}: the user has no token, tokenFile, client certificate or exec plugin`);
  return {
    server,
    ca,
    // A token file is read again for each connection's credentials (projected tokens rotate).
    present: async () => ({
      ...(cert !== undefined && { cert, key }),
      ...(token !== undefined
        ? { token }
        : tokenFile !== undefined && { token: readFile(file, 'tokenFile', relative(file, tokenFile)).trim() }),
    }),
    invalidate: () => undefined,
  };
}

interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  provideClusterInfo?: boolean;
  interactiveMode?: string;
}

const EXEC_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
const EXEC_TIMEOUT_MS = 60_000;

function execCredentials(
  file: string,
  exec: ExecConfig,
  server: string,
  ca: string | undefined,
  env: NodeJS.ProcessEnv,
): Pick<ClusterCredentials, 'present' | 'invalidate'> {
  const apiVersion = exec.apiVersion ?? '';
  if (!EXEC_VERSIONS.includes(apiVersion))
    throw new KubeconfigError(`${file}: exec.apiVersion must be one of ${EXEC_VERSIONS.join(', ')}, got ${apiVersion}`);
  if (typeof exec.command !== 'string' || exec.command === '')
    throw new KubeconfigError(`${file}: exec.command is required`);
  if (exec.interactiveMode === 'Always')
    throw new KubeconfigError(`${file}: exec.interactiveMode Always: the reader runs without a terminal`);
  // As kubectl: a command with a path separator is relative to the kubeconfig's directory.
  const command = exec.command.includes('/') ? relative(file, exec.command) : exec.command;
  const info = {
    apiVersion,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      ...(exec.provideClusterInfo && {
        cluster: {
          server,
          ...(ca !== undefined && { 'certificate-authority-data': Buffer.from(ca).toString('base64') }),
        },
      }),
    },
  };
  let cached: { presented: Presented; expiresAt: number } | undefined;
  let running: Promise<Presented> | undefined;
  const run = () =>
    new Promise<Presented>((resolveRun, reject) => {
      execFile(
        command,
        exec.args ?? [],
        {
          env: {
            ...env,
            ...Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value])),
            KUBERNETES_EXEC_INFO: JSON.stringify(info),
          },
          timeout: EXEC_TIMEOUT_MS,
          maxBuffer: 1 << 20,
        },
        (error, stdout) => {
          // Its stderr is the plugin's own; what it prints may hold secrets, so none of it is repeated.
          if (error)
            return reject(new KubeconfigError(`${file}: exec plugin ${exec.command} failed: ${error.message}`));
          try {
            const answer = JSON.parse(stdout) as {
              apiVersion?: string;
              kind?: string;
              status?: {
                token?: string;
                clientCertificateData?: string;
                clientKeyData?: string;
                expirationTimestamp?: string;
              };
            };
            if (answer.kind !== 'ExecCredential' || answer.apiVersion !== apiVersion)
              throw new Error(`answered ${answer.apiVersion}/${answer.kind}, not ${apiVersion}/ExecCredential`);
            const status = answer.status ?? {};
            const presented: Presented =
              status.token !== undefined && status.token !== ''
                ? { token: status.token }
                : status.clientCertificateData && status.clientKeyData
                  ? { cert: status.clientCertificateData, key: status.clientKeyData }
                  : {};
            if (presented.token === undefined && presented.cert === undefined)
              throw new Error('status holds neither a token nor clientCertificateData and clientKeyData');
            const expires = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Number.NaN;
            cached = { presented, expiresAt: Number.isNaN(expires) ? Number.POSITIVE_INFINITY : expires };
            resolveRun(presented);
          } catch (problem) {
            reject(new KubeconfigError(`${file}: exec plugin ${exec.command}: ${(problem as Error).message}`));
          }
        },
      );
    });
  return {
    present: async () => {
      // Renewed a little before it expires, so no request carries a token that lapses in flight.
      if (cached && cached.expiresAt - 10_000 > Date.now()) return cached.presented;
      running ??= run().finally(() => {
        running = undefined;
      });
      return running;
    },
    invalidate: () => {
      cached = undefined;
    },
  };
}
