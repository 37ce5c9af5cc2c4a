// A fleet against real apiservers, set up as an operator does it: config/clusters/<cluster>.yaml
// for each cluster, one `npm start` serving all of them (url-secret mode: each cluster's key under
// .local/clusters/<cluster>/), `npm run emit -- --cluster NAME` for each, and each control plane
// applying its own cluster's output unchanged. The server can be restarted (after a cluster's file
// is deleted); everything stops in reverse order at the end.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane, ControlPlaneOptions } from './control-plane.js';
import { startControlPlane } from './control-plane.js';
import { emit, runServer, type Server, stopServerProcess } from './webhook-cluster.js';

export interface FleetOptions {
  /** Cluster name → its AdmissionConfiguration (config/clusters/<cluster>.yaml). */
  readonly clusters: Readonly<Record<string, string>>;
  /** Cluster name → its settings (config/clusters/<cluster>.settings.yaml), where a test needs them. */
  readonly settings?: Readonly<Record<string, string>>;
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

let tables = 0;

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const workdir = mkdtempSync(join(tmpdir(), 'fleet-'));
  mkdirSync(join(workdir, 'config/clusters'), { recursive: true });
  for (const [name, configuration] of Object.entries(options.clusters))
    writeFileSync(join(workdir, 'config/clusters', `${name}.yaml`), configuration);
  for (const [name, settings] of Object.entries(options.settings ?? {}))
    writeFileSync(join(workdir, 'config/clusters', `${name}.settings.yaml`), settings);
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
