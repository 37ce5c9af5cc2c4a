// mTLS per cluster, end to end through the real `npm start` (infra/local/start.ts as a process) in
// an operator's directory holding two clusters: `emit --cluster NAME --auth mtls --out DIR` gives
// that cluster's apiserver a client certificate of its own (issued by the local CA under
// .local/clusters/NAME/), which the server accepts at that cluster's URLs and refuses with 403 at
// the other's; `pki --cluster NAME --rotate` renews one cluster's certificate alone.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { emitCommand } from '../../infra/emit/cli.js';
import { stopWithThisProcess } from '../../infra/local/guard.js';
import { pkiCommand } from '../../infra/pki/cli.js';
import { post } from '../support/https-client.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { review } from '../support/review.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const CONFIGURATION =
  'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: AlwaysPullImages\n';
const SUBJECTS: Record<string, string> = { blue: 'blue-apiserver', green: 'green-apiserver' };

/** A client's identity, all of it present (the kubeconfig's user, and the CA it trusts). */
interface ClientIdentity {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

const home = process.cwd();
let dir: string;
let store: TestStore;
let server: ChildProcess | undefined;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-mtls-'));
  mkdirSync(join(dir, 'config/clusters'), { recursive: true });
  for (const [cluster, subject] of Object.entries(SUBJECTS)) {
    writeFileSync(join(dir, `config/clusters/${cluster}.yaml`), CONFIGURATION);
    writeFileSync(join(dir, `config/clusters/${cluster}.settings.yaml`), `allowedSubjects: [${subject}]\n`);
  }
  store = await testStore('fleet-mtls');
  // What `npm start` runs, in the operator's directory; the run's DynamoDB Local as its store.
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/local/start.ts')], {
    cwd: dir,
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'silent',
      ADMISSION_CONFIG: '',
      CALLER_AUTH: 'mtls',
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      STATE_TABLE: store.tableName,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  stopWithThisProcess(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ready = await new Promise<string>((resolveReady, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('ready')) resolveReady(line);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)));
  });
  expect(ready).toContain('for 2 clusters (blue, green)');
  url = /on (https:\/\/127\.0\.0\.1:\d+)/.exec(ready)![1];
  // emit and pki read config/clusters/ and .local/ where they run (forks pool: this file's own process).
  process.chdir(dir);
});

afterAll(async () => {
  process.chdir(home);
  if (server && server.exitCode === null && server.signalCode === null) {
    const gone = new Promise((resolveGone) => server!.once('exit', resolveGone));
    server.kill('SIGTERM');
    await gone;
  }
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function run(command: 'emit' | 'pki', argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: (t: string) => {
      stdout += t;
    },
    stderr: (t: string) => {
      stderr += t;
    },
    env: {},
  };
  const code = command === 'emit' ? await emitCommand(argv, io) : pkiCommand(argv, io);
  return { code, stdout, stderr };
}

/** What `emit --cluster NAME --auth mtls --out DIR` hands the cluster's apiserver: its kubeconfig's identity. */
async function emitFor(cluster: string, ...extra: string[]): Promise<ClientIdentity> {
  const out = join(dir, `out-${cluster}`);
  const emitted = await run('emit', [
    '--cluster',
    cluster,
    '--auth',
    'mtls',
    '--base-url',
    url,
    '--ca-bundle',
    '.local/pki/ca.crt',
    '--out',
    out,
    ...extra,
  ]);
  expect(emitted.code, emitted.stderr).toBe(0);
  expect(emitted.stdout).toContain(`${url}/${cluster}/always-pull-images/validate`);
  const kubeconfig = parse(readFileSync(join(out, 'kubeconfig.yaml'), 'utf8')) as {
    users: { user: Record<string, string> }[];
  };
  const pem = (field: string) => Buffer.from(kubeconfig.users[0].user[field], 'base64').toString('utf8');
  return {
    caPem: readFileSync('.local/pki/ca.crt', 'utf8'),
    certPem: pem('client-certificate-data'),
    keyPem: pem('client-key-data'),
  };
}

const pod = review({
  object: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a' },
    spec: { containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'Always' }] },
  },
});
const call = (cluster: string, identity: ClientIdentity) =>
  post(`${url}/${cluster}/always-pull-images/validate?timeout=10s`, JSON.stringify(pod), identity);

describe('emit --cluster NAME --auth mtls', () => {
  let blue: ClientIdentity;
  let green: ClientIdentity;
  beforeAll(async () => {
    blue = await emitFor('blue');
    green = await emitFor('green');
  });

  it("issues each cluster's own certificate, for a subject of its allowedSubjects, key 0600", () => {
    expect(new X509Certificate(blue.certPem).subject).toContain('CN=blue-apiserver');
    expect(new X509Certificate(green.certPem).subject).toContain('CN=green-apiserver');
    expect(readFileSync('.local/clusters/blue/client.crt', 'utf8')).toBe(blue.certPem);
    expect(statSync('.local/clusters/blue/client.key').mode & 0o777).toBe(0o600);
    expect(new X509Certificate(blue.certPem).checkIssued(new X509Certificate(blue.caPem))).toBe(true);
  });

  it("is accepted at its cluster's URLs and refused with 403 at the other's", async () => {
    const atBlue = await call('blue', blue);
    expect(atBlue.status, atBlue.body).toBe(200);
    expect(JSON.parse(atBlue.body).response.allowed).toBe(true);
    const blueAtGreen = await call('green', blue);
    expect(blueAtGreen.status, blueAtGreen.body).toBe(403);
    expect(blueAtGreen.body).toContain('is not allowed for cluster green');
    expect((await call('green', green)).status).toBe(200);
    expect((await call('blue', green)).status).toBe(403);
  });

  it("the single cluster's certificate (.local/pki/client.crt) is refused at both", async () => {
    const single = {
      caPem: blue.caPem,
      certPem: readFileSync('.local/pki/client.crt', 'utf8'),
      keyPem: readFileSync('.local/pki/client.key', 'utf8'),
    };
    expect((await call('blue', single)).status).toBe(403);
    expect((await call('green', single)).status).toBe(403);
  });

  it('refuses a --client-cert of another cluster, writing no kubeconfig', async () => {
    const out = join(dir, 'out-refused');
    const refused = await run('emit', [
      '--cluster',
      'blue',
      '--base-url',
      url,
      '--out',
      out,
      '--client-cert',
      '.local/clusters/green/client.crt',
      '--client-key',
      '.local/clusters/green/client.key',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is issued to CN=green-apiserver');
    expect(refused.stderr).toContain('the server would refuse it with 403');
    expect(existsSync(join(out, 'kubeconfig.yaml'))).toBe(false);
  });

  it("pki --cluster blue --rotate renews blue's certificate alone; the new one is accepted", async () => {
    const rotated = await run('pki', ['--cluster', 'blue', '--rotate']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const renewed = await emitFor('blue');
    expect(new X509Certificate(renewed.certPem).fingerprint256).not.toBe(
      new X509Certificate(blue.certPem).fingerprint256,
    );
    expect(readFileSync('.local/clusters/green/client.crt', 'utf8')).toBe(green.certPem);
    expect((await call('blue', renewed)).status).toBe(200);
    expect((await call('green', renewed)).status).toBe(403);
  });
});

describe('a cluster without allowedSubjects', () => {
  it('gets no certificate: emit names the settings file and the field', async () => {
    mkdirSync('config/clusters', { recursive: true });
    writeFileSync('config/clusters/red.yaml', CONFIGURATION);
    try {
      const refused = await run('emit', ['--cluster', 'red', '--base-url', url, '--out', join(dir, 'out-red')]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('cluster red: allowedSubjects: cluster red has no allowedSubjects');
      expect(refused.stderr).toContain('config/clusters/red.settings.yaml');
      expect(existsSync('.local/clusters/red/client.crt')).toBe(false);
    } finally {
      rmSync('config/clusters/red.yaml');
    }
  });
});
