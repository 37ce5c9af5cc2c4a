// A real control plane with the cluster reader installed as an operator would: `emit --out` with a
// reader configured (no learning webhook), `emit --reader-rbac` applied, and `npm start` reading
// the apiserver with a token of that ServiceAccount (not admin's). `beforeInstall` shapes the
// cluster first, so what existed before the install is read, never sent to a webhook.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';
import { emitCommand } from '../../../infra/emit/cli.js';
import { stopWithThisProcess } from '../../../infra/local/guard.js';
import { ensureLocalPki } from '../../../infra/pki/pki.js';
import type { ControlPlane, ControlPlaneOptions } from './control-plane.js';
import { freePort, startControlPlane } from './control-plane.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const TSX = join(ROOT, 'node_modules/tsx/dist/esm/index.mjs');
export const READER_NAMESPACE = 'serverless-admission';
export const READER_ACCOUNT = 'reader';

export interface ReaderCluster {
  readonly cluster: ControlPlane;
  readonly webhooksYaml: string;
  /** kubectl as admin; throws on a non-zero exit. */
  must(args: readonly string[], input?: string): Promise<string>;
  /** A server-side dry run of a pod create in `namespace`: the admission chain's answer. */
  dryRunPod(namespace: string, pod: object): Promise<{ status: number; body: DryRunPod }>;
  stop(): Promise<void>;
}

export interface DryRunPod {
  metadata?: { annotations?: Record<string, string> };
  spec?: {
    nodeSelector?: Record<string, string>;
    tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
    containers?: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }[];
  };
  message?: string;
}

export async function startReaderCluster(options: {
  admissionConfig: string;
  controlPlane?: ControlPlaneOptions;
  beforeInstall(must: ReaderCluster['must']): Promise<void>;
}): Promise<ReaderCluster> {
  const workdir = mkdtempSync(join(tmpdir(), 'reader-cluster-'));
  let cluster: ControlPlane | undefined;
  let server: ChildProcess | undefined;
  const stop = async () => {
    if (server && server.exitCode === null) {
      const gone = new Promise((r) => server?.once('exit', r));
      server.kill('SIGTERM');
      await gone;
    }
    await cluster?.stop();
    rmSync(workdir, { recursive: true, force: true });
  };
  try {
    const pki = ensureLocalPki(join(workdir, '.local/pki'));
    const admissionConfig = join(workdir, 'admission.yaml');
    writeFileSync(admissionConfig, options.admissionConfig);
    const port = await freePort();
    const out = join(workdir, 'out');
    const io = (sink: string[]) => ({
      stdout: (text: string) => sink.push(text),
      stderr: () => undefined,
      env: {
        ...process.env,
        ADMISSION_CONFIG: admissionConfig,
        CLUSTER_KUBECONFIG: join(workdir, 'reader.kubeconfig'),
      },
    });
    const emitted: string[] = [];
    const args = ['--base-url', `https://127.0.0.1:${port}`, '--ca-bundle', pki.files.ca, '--out', out];
    const mtls = ['--client-cert', pki.files.clientCert, '--client-key', pki.files.clientKey];
    const code = await emitCommand([...args, ...mtls, '--kubeconfig-path', join(out, 'kubeconfig.yaml')], io(emitted));
    if (code !== 0) throw new Error(`emit exited ${code}`);
    const rbac: string[] = [];
    const account = `${READER_NAMESPACE}/${READER_ACCOUNT}`;
    if ((await emitCommand(['--reader-rbac', '--reader-service-account', account], io(rbac))) !== 0)
      throw new Error('emit --reader-rbac failed');

    const plane = await startControlPlane({
      ...options.controlPlane,
      admissionConfiguration: readFileSync(join(out, 'admission-configuration.yaml'), 'utf8'),
    });
    cluster = plane;
    const must = async (kubectlArgs: readonly string[], input?: string) => {
      const result = await plane.kubectl(kubectlArgs, input);
      if (result.code !== 0) throw new Error(`kubectl ${kubectlArgs.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    await options.beforeInstall(must);
    await must(['create', 'namespace', READER_NAMESPACE]);
    await must(['apply', '-f', '-'], rbac.join(''));
    const token = await plane.request(
      'POST',
      `/api/v1/namespaces/${READER_NAMESPACE}/serviceaccounts/${READER_ACCOUNT}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    if (token.status !== 201) throw new Error(`TokenRequest: ${token.status} ${token.body}`);
    const readerKubeconfig = plane.tokenKubeconfig('reader', token.json<{ status: { token: string } }>().status.token);

    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/local/start.ts')], {
      cwd: workdir,
      env: {
        ...process.env,
        PORT: String(port),
        LOG_LEVEL: 'silent',
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        STATE_TABLE: `reader-cluster-${process.pid}-${Date.now()}`,
        ADMISSION_CONFIG: admissionConfig,
        CLUSTER_KUBECONFIG: readerKubeconfig,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = child;
    stopWithThisProcess(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolveReady, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('ready')) resolveReady();
      });
      child.once('exit', (exitCode) => reject(new Error(`npm start exited with ${exitCode}: ${stderr}`)));
    });
    if (!stderr.includes('reader: in step with the cluster')) throw new Error(`the reader is not in step:\n${stderr}`);
    const webhooksYaml = readFileSync(join(out, 'webhooks.yaml'), 'utf8');
    await must(['apply', '-f', join(out, 'webhooks.yaml')]);
    return {
      cluster: plane,
      webhooksYaml,
      must,
      async dryRunPod(namespace, pod) {
        const answer = await plane.request('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All`, pod);
        return { status: answer.status, body: answer.json<DryRunPod>() };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
