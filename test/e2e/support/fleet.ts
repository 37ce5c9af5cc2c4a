// A fleet against real apiservers, set up as an operator does it: config/clusters/<cluster>.yaml
// for each cluster, one `npm start` serving all of them (url-secret mode: each cluster's key under
// .local/clusters/<cluster>/), `npm run emit -- --cluster NAME` for each, and each control plane
// applying its own cluster's output unchanged. The server can be restarted (after a cluster's file
// is deleted); everything stops in reverse order at the end.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { stopWithThisProcess } from '../../../infra/local/guard.js';
import type { ControlPlane, ControlPlaneOptions } from './control-plane.js';
import { startControlPlane } from './control-plane.js';
import { emit } from './webhook-cluster.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface FleetOptions {
  /** Cluster name → its AdmissionConfiguration (config/clusters/<cluster>.yaml). */
  readonly clusters: Readonly<Record<string, string>>;
  readonly controlPlane?: ControlPlaneOptions;
  readonly dynamodbEndpoint: string;
}

export interface Fleet {
  readonly serverUrl: string;
  readonly workdir: string;
  /** Each cluster's control plane and what emit --cluster printed for it. */
  readonly clusters: ReadonlyMap<string, { readonly cluster: ControlPlane; readonly webhooks: string }>;
  /** Deletes the cluster's file and restarts `npm start` on the same port: the cluster is removed. */
  removeCluster(name: string): Promise<void>;
  stop(): Promise<void>;
}

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stdout: string[];
}

function runServer(workdir: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/local/start.ts')], {
    cwd: workdir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  stopWithThisProcess(child);
  let stderr = '';
  const stdout: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolveServer, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line);
      const ready = /^ready: .* on (https:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (ready) resolveServer({ child, url: ready[1], stdout });
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${stderr}`)));
  });
}

function stopServerProcess(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((gone) => {
    child.once('exit', () => gone());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

let tables = 0;

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const workdir = mkdtempSync(join(tmpdir(), 'fleet-'));
  mkdirSync(join(workdir, 'config/clusters'), { recursive: true });
  for (const [name, configuration] of Object.entries(options.clusters))
    writeFileSync(join(workdir, 'config/clusters', `${name}.yaml`), configuration);
  const { ADMISSION_CONFIG: _unused, CLUSTER_KUBECONFIG: _none, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PORT: '0',
    LOG_LEVEL: 'silent',
    DYNAMODB_ENDPOINT: options.dynamodbEndpoint,
    STATE_TABLE: `e2e-fleet-${process.pid}-${++tables}`,
    CALLER_AUTH: 'url-secret',
  };
  let server: Server | undefined;
  const planes: ControlPlane[] = [];
  const stop = async () => {
    await Promise.all(planes.map((plane) => plane.stop()));
    await stopServerProcess(server);
    rmSync(workdir, { recursive: true, force: true });
  };
  try {
    server = await runServer(workdir, env);
    const serverUrl = server.url;
    env.PORT = new URL(serverUrl).port;
    const clusters = new Map<string, { cluster: ControlPlane; webhooks: string }>();
    await Promise.all(
      Object.keys(options.clusters).map(async (name) => {
        const webhooks = await emit(
          workdir,
          [
            '--cluster',
            name,
            '--base-url',
            serverUrl,
            '--ca-bundle',
            join(workdir, '.local/pki/ca.crt'),
            '--auth',
            'url-secret',
          ],
          env,
        );
        const cluster = await startControlPlane(options.controlPlane);
        planes.push(cluster);
        const applied = await cluster.kubectl(['apply', '-f', '-'], webhooks);
        if (applied.code !== 0) throw new Error(`kubectl apply for ${name} failed: ${applied.stderr}`);
        clusters.set(name, { cluster, webhooks });
      }),
    );
    return {
      serverUrl,
      workdir,
      clusters,
      removeCluster: async (name) => {
        rmSync(join(workdir, 'config/clusters', `${name}.yaml`));
        await stopServerProcess(server);
        server = undefined;
        server = await runServer(workdir, env);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
