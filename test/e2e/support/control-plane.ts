// A real Kubernetes control plane for the end-to-end suite: etcd, kube-apiserver and (by default)
// kube-controller-manager from the directory KUBEBUILDER_ASSETS names (controller-runtime envtest's
// convention), on loopback free ports, with a throwaway PKI and an admin kubeconfig. Everything a
// control plane starts is stopped (controller-manager, then apiserver, then etcd: a 1.36 apiserver
// whose etcd is gone hangs in its graceful shutdown) and its directory removed, even when the test
// fails; a guard process stops each binary should the test worker itself die first.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopWithThisProcess } from '../../../infra/local/guard.js';
import { addressInUse, freePort } from '../../../infra/local/ports.js';
import type { KeyAndCertificate } from '../../../infra/pki/pki.js';
import { issueCertificate } from '../../../infra/pki/pki.js';

export const ASSET_BINARIES = ['kube-apiserver', 'etcd', 'kubectl', 'kube-controller-manager'] as const;

/** The directory KUBEBUILDER_ASSETS names, checked to hold every binary the suite runs. */
export function assetsDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.KUBEBUILDER_ASSETS;
  if (!dir) throw new Error(missingAssetsMessage('KUBEBUILDER_ASSETS is not set'));
  const missing = ASSET_BINARIES.filter((binary) => !existsSync(join(dir, binary)));
  if (missing.length > 0) throw new Error(missingAssetsMessage(`${dir} has no ${missing.join(', ')}`));
  return dir;
}

export function missingAssetsMessage(why: string): string {
  return (
    `${why}: the end-to-end suite needs KUBEBUILDER_ASSETS naming a directory with ` +
    `${ASSET_BINARIES.join(', ')} (controller-runtime's setup-envtest provides one; ` +
    'see docs/design/development.md)'
  );
}

export { freePort };

export interface ControlPlaneOptions {
  /** The apiserver's --admission-control-config-file contents (YAML), when a test needs one. */
  readonly admissionConfiguration?: string;
  /** Further files beside it (a webhook kubeconfig, a plugin's configuration), by file name. */
  readonly files?: Readonly<Record<string, string>>;
  readonly enableAdmissionPlugins?: readonly string[];
  readonly disableAdmissionPlugins?: readonly string[];
  /** Without it: no default ServiceAccount, no quota status, namespaces stay Terminating. */
  readonly controllerManager?: boolean;
  readonly extraApiserverArgs?: readonly string[];
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  /** Each header's values as sent (several `warning` headers stay apart). */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  json<T = unknown>(): T;
}

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ControlPlane {
  /** The apiserver's base URL, https://127.0.0.1:PORT. */
  readonly url: string;
  /** Holds the PKI, the kubeconfig and every file given in the options; removed at stop. */
  readonly dir: string;
  /** An admin (system:masters) kubeconfig. */
  readonly kubeconfig: string;
  readonly ca: KeyAndCertificate;
  readonly admin: KeyAndCertificate;
  /** Writes a file into `dir` and returns its path. */
  writeFile(name: string, contents: string): string;
  /** kubectl with the admin kubeconfig; `input` goes to its standard input. */
  kubectl(args: readonly string[], input?: string): Promise<KubectlResult>;
  /** A request to the apiserver as admin (JSON body). */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string | string[]>,
  ): Promise<HttpAnswer>;
  /** A kubeconfig for `user` that authenticates with a bearer token. */
  tokenKubeconfig(name: string, token: string): string;
  /** Stops the apiserver and starts it again on the same port and etcd (a watch's resumption). */
  restartApiserver(): Promise<void>;
  stop(): Promise<void>;
}

interface Running {
  readonly name: string;
  readonly child: ChildProcess;
  readonly output: string[];
}

const STOP_GRACE_MS = 10_000;

function launch(name: string, binary: string, args: readonly string[], running: Running[]): Running {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  stopWithThisProcess(child);
  // The last lines each binary printed, for the error when it does not come up.
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 40) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const entry = { name, child, output };
  running.push(entry);
  return entry;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function stopProcess(entry: Running): Promise<void> {
  const { child } = entry;
  if (exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}

function httpsCall(
  url: string,
  tls: { ca: string; cert?: string; key?: string; token?: string },
  method: string,
  body?: unknown,
  headers: Record<string, string | string[]> = {},
): Promise<HttpAnswer> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        agent: false,
        headers: {
          accept: 'application/json',
          ...(payload !== undefined && { 'content-type': 'application/json' }),
          ...(tls.token && { authorization: `Bearer ${tls.token}` }),
          ...headers,
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            headers: res.headersDistinct as Record<string, string[]>,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function waitFor(what: string, entry: Running, probe: () => Promise<boolean>, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (exited(entry.child))
      throw new Error(
        `${what} exited with ${entry.child.exitCode ?? entry.child.signalCode}:\n${entry.output.join('')}`,
      );
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready in ${limitMs / 1000} s:\n${entry.output.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function kubeconfigYaml(server: string, caFile: string, user: Record<string, string>): string {
  const userLines = Object.entries(user)
    .map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`)
    .join('\n');
  return `apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: ${server}
    certificate-authority: ${JSON.stringify(caFile)}
users:
- name: user
  user:
${userLines}
contexts:
- name: e2e
  context:
    cluster: e2e
    user: user
current-context: e2e
`;
}

/** Starts a control plane; stop() it in afterAll (it removes everything it made). */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const assets = assetsDir();
  const dir = mkdtempSync(join(tmpdir(), 'control-plane-'));
  const running: Running[] = [];
  const file = (name: string, contents: string, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, contents, { mode });
    return path;
  };
  try {
    // PKI: one CA signs the apiserver's serving certificate and the admin's client certificate;
    // the service-account key pair signs tokens.
    const ca = issueCertificate({ commonName: 'e2e control plane CA', days: 2, usage: 'ca' });
    const serving = issueCertificate(
      {
        commonName: 'kube-apiserver',
        days: 2,
        usage: 'server',
        dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
        ipAddresses: ['127.0.0.1', '10.0.0.1'],
      },
      ca,
    );
    const admin = issueCertificate(
      { commonName: 'e2e-admin', organization: 'system:masters', days: 2, usage: 'client' },
      ca,
    );
    const saKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const caFile = file('ca.crt', ca.certPem);
    const caKeyFile = file('ca.key', ca.keyPem);
    const servingCert = file('apiserver.crt', serving.certPem);
    const servingKey = file('apiserver.key', serving.keyPem);
    const adminCert = file('admin.crt', admin.certPem);
    const adminKey = file('admin.key', admin.keyPem);
    const saPub = file('sa.pub', saKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const saKey = file('sa.key', saKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    for (const [name, contents] of Object.entries(options.files ?? {})) file(name, contents);
    const admissionFile =
      options.admissionConfiguration === undefined ? undefined : file('admission.yaml', options.admissionConfiguration);

    const etcdUrl = await onFreePorts(
      'etcd',
      running,
      async ([client, peer]) => {
        // A fresh data directory each attempt: a member's directory remembers its peer URL.
        rmSync(join(dir, 'etcd'), { recursive: true, force: true });
        mkdirSync(join(dir, 'etcd'), { mode: 0o700 });
        const clientUrl = `http://127.0.0.1:${client}`;
        const peerUrl = `http://127.0.0.1:${peer}`;
        const etcd = launch(
          'etcd',
          join(assets, 'etcd'),
          [
            '--data-dir',
            join(dir, 'etcd'),
            '--name',
            'e2e',
            '--listen-client-urls',
            clientUrl,
            '--advertise-client-urls',
            clientUrl,
            '--listen-peer-urls',
            peerUrl,
            '--initial-advertise-peer-urls',
            peerUrl,
            '--initial-cluster',
            `e2e=${peerUrl}`,
            '--unsafe-no-fsync',
          ],
          running,
        );
        await waitFor('etcd', etcd, async () => (await fetch(`${clientUrl}/health`)).ok, 60_000);
        return clientUrl;
      },
      2,
    );

    const apiserverArgs = (apiPort: number) => [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${servingCert}`,
      `--tls-private-key-file=${servingKey}`,
      `--client-ca-file=${caFile}`,
      `--service-account-issuer=https://kubernetes.default.svc`,
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      '--api-audiences=https://kubernetes.default.svc',
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=RBAC',
      '--profiling=false',
      '--allow-privileged=true',
      ...(admissionFile ? [`--admission-control-config-file=${admissionFile}`] : []),
      ...(options.enableAdmissionPlugins?.length
        ? [`--enable-admission-plugins=${options.enableAdmissionPlugins.join(',')}`]
        : []),
      ...(options.disableAdmissionPlugins?.length
        ? [`--disable-admission-plugins=${options.disableAdmissionPlugins.join(',')}`]
        : []),
      ...(options.extraApiserverArgs ?? []),
    ];
    const adminTls = { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem };
    let url = '';
    const request = (method: string, path: string, body?: unknown, headers?: Record<string, string | string[]>) =>
      httpsCall(`${url}${path}`, adminTls, method, body, headers);
    let apiserver: Running | undefined;
    const startApiserver = async (apiPort: number) => {
      url = `https://127.0.0.1:${apiPort}`;
      apiserver = launch('kube-apiserver', join(assets, 'kube-apiserver'), apiserverArgs(apiPort), running);
      await waitFor('kube-apiserver', apiserver, async () => (await request('GET', '/readyz')).status === 200, 120_000);
    };
    const apiPort = await onFreePorts('kube-apiserver', running, ([port]) => startApiserver(port).then(() => port), 1);

    const kubeconfig = file(
      'admin.kubeconfig',
      kubeconfigYaml(url, caFile, { 'client-certificate': adminCert, 'client-key': adminKey }),
    );
    if (options.controllerManager ?? true) {
      await onFreePorts(
        'kube-controller-manager',
        running,
        async ([port]) => {
          const kcm = launch(
            'kube-controller-manager',
            join(assets, 'kube-controller-manager'),
            [
              `--kubeconfig=${kubeconfig}`,
              `--authentication-kubeconfig=${kubeconfig}`,
              `--authorization-kubeconfig=${kubeconfig}`,
              `--service-account-private-key-file=${saKey}`,
              `--root-ca-file=${caFile}`,
              `--cluster-signing-cert-file=${caFile}`,
              `--cluster-signing-key-file=${caKeyFile}`,
              '--leader-elect=false',
              '--bind-address=127.0.0.1',
              `--secure-port=${port}`,
              '--use-service-account-credentials=false',
              '--controllers=*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-route,-service',
            ],
            running,
          );
          // Ready once the default namespace has its ServiceAccount: the controllers are running.
          await waitFor(
            'kube-controller-manager',
            kcm,
            async () => (await request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
            120_000,
          );
        },
        1,
      );
    }

    let stopped = false;
    const controlPlane: ControlPlane = {
      url,
      dir,
      kubeconfig,
      ca,
      admin,
      writeFile: (name, contents) => file(name, contents),
      kubectl: (args, input) =>
        new Promise((resolve, reject) => {
          const child = spawn(join(assets, 'kubectl'), ['--kubeconfig', kubeconfig, ...args], {
            stdio: ['pipe', 'pipe', 'pipe'],
          });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
          child.stdin.end(input ?? '');
        }),
      request,
      tokenKubeconfig: (name, token) => file(`${name}.kubeconfig`, kubeconfigYaml(url, caFile, { token })),
      restartApiserver: async () => {
        if (apiserver) await stopProcess(apiserver);
        // The same port (the kubeconfigs name it): a moment's wait if something took it meanwhile.
        for (let attempt = 1; ; attempt++) {
          try {
            return await startApiserver(apiPort);
          } catch (error) {
            if (attempt >= 5 || !addressInUse(String(error))) throw error;
            await new Promise((resolve) => setTimeout(resolve, 1_000));
          }
        }
      },
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await stopAll(running, dir);
      },
    };
    return controlPlane;
  } catch (error) {
    await stopAll(running, dir);
    throw error;
  }
}

/**
 * Starts a binary on `count` fresh ports, again on others (up to three times) when it reports that
 * a port was taken between the check and its bind; the failed attempt's process is dropped.
 */
async function onFreePorts<T>(
  what: string,
  running: Running[],
  start: (ports: number[]) => Promise<T>,
  count: number,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    const before = running.length;
    try {
      return await start(ports);
    } catch (error) {
      if (attempt >= 3 || !addressInUse(String(error))) throw error;
      for (const entry of running.splice(before)) await stopProcess(entry);
      process.stderr.write(`${what}: port ${ports.join(', ')} taken before it bound; trying other ports\n`);
    }
  }
}

/** Controller-manager, then apiserver, then etcd; then the directory. */
async function stopAll(running: Running[], dir: string): Promise<void> {
  const order = ['kube-controller-manager', 'kube-apiserver', 'etcd'];
  for (const name of order) await Promise.all(running.filter((entry) => entry.name === name).map(stopProcess));
  rmSync(dir, { recursive: true, force: true });
}
