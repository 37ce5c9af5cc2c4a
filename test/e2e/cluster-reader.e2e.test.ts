// The plugins know the cluster as it is: `npm start` reads a real kube-apiserver with a token of
// the ServiceAccount `emit --reader-rbac` prints (get, list and watch on exactly what the active
// plugins read, nothing more), and the webhooks `emit --out` writes with that reader are applied.
// Namespaces that existed before the install are judged right on the first request without
// `npm run sync`; a Namespace CREATE of an existing name by a user who may only create namespaces
// changes no later decision (no learning webhook is emitted); a change in the cluster takes effect
// within 2 s; the watch resumes after the apiserver restarts; dry runs record nothing.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { emitCommand } from '../../infra/emit/cli.js';
import { stopWithThisProcess } from '../../infra/local/guard.js';
import { ensureLocalPki } from '../../infra/pki/pki.js';
import type { ControlPlane } from './support/control-plane.js';
import { freePort, startControlPlane } from './support/control-plane.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules/tsx/dist/esm/index.mjs');
const NODE_SELECTOR = 'scheduler.alpha.kubernetes.io/node-selector';
const READER_NAMESPACE = 'serverless-admission';
const READER_ACCOUNT = 'reader';

const ADMISSION_CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodNodeSelector
    configuration:
      podNodeSelectorPluginConfig: {}
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults:
        enforce: restricted
        enforce-version: latest
      exemptions:
        usernames: []
        runtimeClasses: []
        namespaces: [kube-system, kube-public, kube-node-lease]
`;

let workdir: string;
let cluster: ControlPlane | undefined;
let server: ChildProcess | undefined;
let serverUrl = '';
let serverLines: string[] = [];
let webhooksYaml = '';
let rbacYaml = '';
let pki: ReturnType<typeof ensureLocalPki>;

function kubectl(args: readonly string[], input?: string) {
  if (!cluster) throw new Error('no control plane');
  return cluster.kubectl(args, input);
}

async function mustKubectl(args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** A pod the restricted level admits. */
const compliantPod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'app',
        image: 'nginx',
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      },
    ],
  },
});

/** A server-side dry run of a pod create: what the admission chain (our webhooks included) makes of it. */
async function dryRunPod(namespace: string, pod: object) {
  if (!cluster) throw new Error('no control plane');
  const answer = await cluster.request('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All`, pod);
  return {
    status: answer.status,
    body: answer.json<{ spec?: { nodeSelector?: Record<string, string> }; message?: string }>(),
  };
}

async function nodeSelectorIn(namespace: string): Promise<Record<string, string> | undefined> {
  const answer = await dryRunPod(namespace, compliantPod('probe'));
  if (answer.status !== 201) throw new Error(`dry run in ${namespace}: ${answer.status} ${answer.body.message}`);
  return answer.body.spec?.nodeSelector;
}

/** Polls until `namespace`'s pods get `pool`, for at most `boundMs`; true when they did. */
async function poolWithin(namespace: string, pool: string, boundMs: number): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  do {
    // While the change lands, the mutating and validating webhooks may each see one side of it
    // (PodNodeSelector then refuses the conflict): only an admitted pod with `pool` counts.
    const answer = await dryRunPod(namespace, compliantPod('probe'));
    if (answer.status === 201 && answer.body.spec?.nodeSelector?.pool === pool) return true;
    await new Promise((r) => setTimeout(r, 50));
  } while (Date.now() < deadline);
  return false;
}

function metricsText(): Promise<string> {
  return new Promise((resolveText, reject) => {
    const req = httpsRequest(
      `${serverUrl}/metrics`,
      {
        ca: pki.ca.certPem,
        cert: pki.client.certPem,
        key: pki.client.keyPem,
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolveText(text));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), 'cluster-reader-'));
  pki = ensureLocalPki(join(workdir, '.local/pki'));
  const admissionConfig = join(workdir, 'admission.yaml');
  writeFileSync(admissionConfig, ADMISSION_CONFIG);
  const port = await freePort();
  const out = join(workdir, 'out');
  const io = (sink: string[]) => ({
    stdout: (text: string) => sink.push(text),
    stderr: () => undefined,
    env: { ...process.env, ADMISSION_CONFIG: admissionConfig, CLUSTER_KUBECONFIG: join(workdir, 'reader.kubeconfig') },
  });
  // emit, as with a reader configured: the webhooks and the apiserver's two mTLS files.
  const emitted: string[] = [];
  const code = await emitCommand(
    [
      '--base-url',
      `https://127.0.0.1:${port}`,
      '--ca-bundle',
      pki.files.ca,
      '--out',
      out,
      '--client-cert',
      pki.files.clientCert,
      '--client-key',
      pki.files.clientKey,
      '--kubeconfig-path',
      join(out, 'kubeconfig.yaml'),
    ],
    io(emitted),
  );
  if (code !== 0) throw new Error(`emit exited ${code}`);
  webhooksYaml = readFileSync(join(out, 'webhooks.yaml'), 'utf8');
  const rbac: string[] = [];
  const rbacCode = await emitCommand(
    ['--reader-rbac', '--reader-service-account', `${READER_NAMESPACE}/${READER_ACCOUNT}`],
    io(rbac),
  );
  if (rbacCode !== 0) throw new Error(`emit --reader-rbac exited ${rbacCode}`);
  rbacYaml = rbac.join('');

  cluster = await startControlPlane({
    admissionConfiguration: readFileSync(join(out, 'admission-configuration.yaml'), 'utf8'),
  });

  // The cluster before the install: a team's namespace with its node selector, one without
  // PodSecurity labels (the restricted default applies), and a marker namespace.
  await mustKubectl(['create', 'namespace', 'team-a']);
  await mustKubectl(['annotate', 'namespace', 'team-a', `${NODE_SELECTOR}=pool=team-a`]);
  await mustKubectl(['create', 'namespace', 'team-c']);
  await mustKubectl(['create', 'namespace', 'marker']);
  await mustKubectl(['annotate', 'namespace', 'marker', `${NODE_SELECTOR}=pool=m0`]);
  await mustKubectl(['create', 'namespace', READER_NAMESPACE]);
  await mustKubectl(['apply', '-f', '-'], rbacYaml);
  // mallory may create namespaces, and nothing else.
  await mustKubectl(['create', 'clusterrole', 'namespace-creator', '--verb=create', '--resource=namespaces']);
  await mustKubectl(['create', 'clusterrolebinding', 'mallory', '--clusterrole=namespace-creator', '--user=mallory']);

  // The reader's credentials: a token of the emitted ServiceAccount (TokenRequest), not admin's.
  const tokenAnswer = await cluster.request(
    'POST',
    `/api/v1/namespaces/${READER_NAMESPACE}/serviceaccounts/${READER_ACCOUNT}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  if (tokenAnswer.status !== 201) throw new Error(`TokenRequest: ${tokenAnswer.status} ${tokenAnswer.body}`);
  const readerKubeconfig = cluster.tokenKubeconfig(
    'reader',
    tokenAnswer.json<{ status: { token: string } }>().status.token,
  );

  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/local/start.ts')], {
    cwd: workdir,
    env: {
      ...process.env,
      PORT: String(port),
      LOG_LEVEL: 'silent',
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      STATE_TABLE: 'cluster-reader-e2e',
      ADMISSION_CONFIG: admissionConfig,
      CLUSTER_KUBECONFIG: readerKubeconfig,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  stopWithThisProcess(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  serverLines = [];
  const ready = await new Promise<string>((resolveReady, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      serverLines.push(line);
      if (line.startsWith('ready')) resolveReady(line);
    });
    child.once('exit', (exitCode) => reject(new Error(`npm start exited with ${exitCode}: ${stderr}`)));
  });
  serverUrl = /on (https:\/\/127\.0\.0\.1:\d+)/.exec(ready)![1];
  if (!stderr.includes('reader: in step with the cluster')) throw new Error(`the reader is not in step:\n${stderr}`);
  await mustKubectl(['apply', '-f', join(out, 'webhooks.yaml')]);
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const gone = new Promise((r) => server?.once('exit', r));
    server.kill('SIGTERM');
    await gone;
  }
  await cluster?.stop();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

describe('the cluster reader', () => {
  it('is configured, so emit writes no learning webhook and npm start serves no learn endpoint', () => {
    expect(webhooksYaml).toContain('pod-node-selector.mutate.serverless-admission.io');
    expect(webhooksYaml).not.toMatch(/\.learn\.serverless-admission\.io/);
    expect(serverLines.filter((line) => line.endsWith('/learn'))).toEqual([]);
  });

  it('emits RBAC of get, list and watch on exactly the kinds the plugins read', () => {
    expect(rbacYaml).toContain('kind: ServiceAccount');
    expect(rbacYaml).toMatch(/resources:\n\s+- namespaces\n\s+verbs:\n\s+- get\n\s+- list\n\s+- watch/);
  });

  it('judges namespaces that existed before the install right on the first request, with no sync', async () => {
    expect(await nodeSelectorIn('team-a')).toEqual({ pool: 'team-a' });
    const plain = await dryRunPod('team-c', {
      ...compliantPod('plain'),
      spec: { containers: [{ name: 'a', image: 'nginx' }] },
    });
    expect(plain.status).toBe(403);
    expect(plain.body.message).toContain('violates PodSecurity "restricted:latest"');
  });

  it('learns nothing from a refused Namespace CREATE of an existing name', async () => {
    const repoint = await kubectl(
      ['create', '--as=mallory', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-a', annotations: { [NODE_SELECTOR]: 'pool=mallory' } },
      }),
    );
    expect(repoint.stderr).toContain('AlreadyExists');
    const unlabel = await kubectl(
      ['create', '--as=mallory', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-c', labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } },
      }),
    );
    expect(unlabel.stderr).toContain('AlreadyExists');
    // A later change is seen, so the reader has handled everything before it.
    await mustKubectl(['annotate', '--overwrite', 'namespace', 'marker', `${NODE_SELECTOR}=pool=m1`]);
    expect(await poolWithin('marker', 'm1', 10_000)).toBe(true);
    expect(await nodeSelectorIn('team-a')).toEqual({ pool: 'team-a' });
    const plain = await dryRunPod('team-c', {
      ...compliantPod('plain'),
      spec: { containers: [{ name: 'a', image: 'nginx' }] },
    });
    expect(plain.status).toBe(403);
  });

  it('applies an annotation changed in the cluster within 2 s', async () => {
    await mustKubectl(['annotate', '--overwrite', 'namespace', 'team-a', `${NODE_SELECTOR}=pool=blue`]);
    expect(await poolWithin('team-a', 'blue', 2_000)).toBe(true);
  });

  it('records nothing of a dry run', async () => {
    await mustKubectl([
      'annotate',
      '--overwrite',
      '--dry-run=server',
      'namespace',
      'team-a',
      `${NODE_SELECTOR}=pool=dry`,
    ]);
    await mustKubectl(['annotate', '--overwrite', 'namespace', 'marker', `${NODE_SELECTOR}=pool=m2`]);
    expect(await poolWithin('marker', 'm2', 10_000)).toBe(true);
    expect(await nodeSelectorIn('team-a')).toEqual({ pool: 'blue' });
  });

  it('resumes its watch after the apiserver restarts', async () => {
    await cluster?.restartApiserver();
    await mustKubectl(['annotate', '--overwrite', 'namespace', 'team-a', `${NODE_SELECTOR}=pool=green`]);
    expect(await poolWithin('team-a', 'green', 60_000)).toBe(true);
    const metrics = await metricsText();
    expect(metrics).toMatch(/serverless_admission_reader_event_total\{resource="namespaces",type="MODIFIED"\} [1-9]/);
    expect(metrics).toMatch(/serverless_admission_reader_lag_seconds\{resource="namespaces"\} 0\n/);
  });
});
