// A real apiserver with this project's webhooks in its chain, set up as a user does it: `npm start`
// serves the AdmissionConfiguration's plugins on loopback, `npm run emit --out` writes the webhook
// configurations (and, for mTLS, the apiserver's AdmissionConfiguration and the kubeconfig with the
// client certificate it presents), the apiserver starts with that file unchanged, and kubectl
// applies the webhooks unchanged. The server can be stopped and started again on the same port
// (an outage), and everything stops in reverse order at the end.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { stopWithThisProcess } from '../../../infra/local/guard.js';
import type { ControlPlane, ControlPlaneOptions } from './control-plane.js';
import { startControlPlane } from './control-plane.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export type CallerAuth = 'mtls' | 'url-secret';

export interface WebhookClusterOptions {
  /** The project's AdmissionConfiguration (config/admission.yaml's format): the plugins served. */
  readonly admissionConfiguration: string;
  readonly auth?: CallerAuth;
  /** More files beside it (a plugin's `path:` configuration), by name. */
  readonly files?: Readonly<Record<string, string>>;
  /** Further arguments to emit (--staged, --plugins ...). */
  readonly emitArgs?: readonly string[];
  /** Options of the control plane other than its AdmissionConfiguration (emit writes that). */
  readonly controlPlane?: Omit<ControlPlaneOptions, 'admissionConfiguration'>;
  /** Extra environment of `npm start`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Runs on the control plane before the webhooks are applied (objects that exist before an install). */
  readonly before?: (cluster: ControlPlane) => Promise<void>;
  /** The store `npm start` uses; in a test file, the run's DynamoDB Local by default. */
  readonly dynamodbEndpoint?: string;
}

export interface WebhookCluster {
  readonly cluster: ControlPlane;
  /** The webhook server's base URL, https://127.0.0.1:PORT. */
  readonly serverUrl: string;
  /** What emit printed and kubectl applied. */
  readonly webhooks: string;
  /** The server's directory (its PKI under .local/pki). */
  readonly workdir: string;
  /** Stops `npm start` (an outage of the webhook host). */
  stopServer(): Promise<void>;
  /** Starts it again on the same port, with the same PKI, key and store. */
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

/** A running `npm start` (infra/local/start.ts) and the URL its `ready` line printed. */
export interface Server {
  readonly child: ChildProcess;
  readonly url: string;
}

/** Starts `npm start` in `workdir`; resolves when it prints `ready`, rejects if it exits first. */
export function runServer(workdir: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/local/start.ts')], {
    cwd: workdir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  stopWithThisProcess(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolveServer, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const ready = /^ready: .* on (https:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (ready) resolveServer({ child, url: ready[1] });
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${stderr}`)));
  });
}

/** Stops it (SIGTERM, SIGKILL after 10 s); nothing to do when it is not running. */
export function stopServerProcess(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((gone) => {
    child.once('exit', () => gone());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

/** Runs `npm run -s emit -- ARGS` (infra/emit/cli.ts) in `cwd`; resolves with its stdout. */
export function emit(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolveEmit, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/emit/cli.ts'), ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolveEmit(stdout) : reject(new Error(`emit ${args.join(' ')} exited with ${code}:\n${stderr}`)),
    );
  });
}

let tables = 0;

/** A control plane whose admission chain holds the webhooks `npm run emit` writes for the config. */
export async function startWebhookCluster(options: WebhookClusterOptions): Promise<WebhookCluster> {
  const auth = options.auth ?? 'mtls';
  const workdir = mkdtempSync(join(tmpdir(), 'webhook-cluster-'));
  const out = join(workdir, 'out');
  mkdirSync(out);
  const configFile = join(workdir, 'admission.yaml');
  writeFileSync(configFile, options.admissionConfiguration);
  for (const [name, contents] of Object.entries(options.files ?? {})) writeFileSync(join(workdir, name), contents);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'silent',
    ADMISSION_CONFIG: configFile,
    DYNAMODB_ENDPOINT: options.dynamodbEndpoint ?? (await import('vitest')).inject('dynamodbEndpoint'),
    STATE_TABLE: `e2e-${process.pid}-${++tables}`,
    CALLER_AUTH: auth,
    ...options.env,
  };
  let server: Server | undefined;
  let cluster: ControlPlane | undefined;
  const stop = async () => {
    await cluster?.stop();
    await stopServerProcess(server);
    rmSync(workdir, { recursive: true, force: true });
  };
  try {
    server = await runServer(workdir, env);
    const serverUrl = server.url;
    // From now on the server keeps its port across an outage.
    env.PORT = new URL(serverUrl).port;
    const kubeconfigPath = join(out, 'kubeconfig.yaml');
    const webhooks = await emit(
      workdir,
      [
        '--base-url',
        serverUrl,
        '--ca-bundle',
        join(workdir, '.local/pki/ca.crt'),
        '--auth',
        auth,
        '--out',
        out,
        ...(auth === 'mtls' ? ['--kubeconfig-path', kubeconfigPath] : []),
        ...(options.emitArgs ?? []),
      ],
      env,
    );
    cluster = await startControlPlane({
      ...options.controlPlane,
      ...(auth === 'mtls' && {
        admissionConfiguration: readFileSync(join(out, 'admission-configuration.yaml'), 'utf8'),
      }),
    });
    await options.before?.(cluster);
    const applied = await cluster.kubectl(['apply', '-f', '-'], webhooks);
    if (applied.code !== 0) throw new Error(`kubectl apply of the emitted webhooks failed: ${applied.stderr}`);
    const running = cluster;
    return {
      cluster: running,
      serverUrl,
      webhooks,
      workdir,
      stopServer: async () => {
        await stopServerProcess(server);
        server = undefined;
      },
      startServer: async () => {
        if (server) return;
        server = await runServer(workdir, env);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
