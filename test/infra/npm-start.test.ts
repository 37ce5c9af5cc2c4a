// `npm start` as a user runs it, in a fresh directory: it makes its PKI, starts its embedded
// store, prints one line per webhook URL and then `ready`, serves through the deployed handlers
// with mTLS, stops on SIGTERM, and keeps what it counted across a restart.
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { activePlugins, configurePlugins } from '../../lib/config/plugins.js';
import { stopWithThisProcess } from '../../infra/local/guard.js';
import type { AdmissionReviewWire } from '../../lib/admission/types.js';
import { learningEndpointRules } from '../../lib/admission/learning.js';
import { review } from '../support/review.js';
import type { ClientIdentity } from '../support/https-client.js';
import { post } from '../support/https-client.js';

const ROOT = resolve(import.meta.dirname, '../..');
// tsx's loader, resolved from the project: the server runs in a directory outside it.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const workdir = mkdtempSync(join(tmpdir(), 'npm-start-'));
/** The url-secret trial's own fresh directory. */
const trialdir = mkdtempSync(join(tmpdir(), 'npm-start-url-secret-'));
const running = new Set<ChildProcess>();

interface Started {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly url: string;
}

/**
 * Runs infra/local/start.ts (what `npm start` runs) in `workdir` until it prints `ready`. Node
 * with tsx's loader, not the tsx CLI: one process, so that a signal reaches the server itself.
 */
async function start(cwd = workdir, env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'infra/local/start.ts')], {
    cwd,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', DYNAMODB_ENDPOINT: '', ADMISSION_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  // Should this worker die before afterAll, the server (and with it its store) stops too.
  stopWithThisProcess(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const ready = await new Promise<string>((resolveReady, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (line.includes('ready')) resolveReady(line);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)));
  });
  const url = /on (https:\/\/127\.0\.0\.1:\d+)/.exec(ready)![1];
  return { child, lines, url };
}

function stop(started: Started): Promise<number | null> {
  return new Promise((resolveStop) => {
    started.child.once('exit', (code) => {
      running.delete(started.child);
      resolveStop(code);
    });
    started.child.kill('SIGTERM');
  });
}

afterAll(async () => {
  // A failed test leaves its server running: kill it and wait for it (its DynamoDB Local goes
  // with it), then remove the directory.
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((gone) => {
          if (child.exitCode !== null || child.signalCode !== null) return gone();
          child.once('exit', () => gone());
          child.kill('SIGKILL');
        }),
    ),
  );
  rmSync(workdir, { recursive: true, force: true });
  rmSync(trialdir, { recursive: true, force: true });
});

function apiserver(): ClientIdentity {
  const pki = (f: string) => readFileSync(join(workdir, '.local/pki', f), 'utf8');
  return { caPem: pki('ca.crt'), certPem: pki('client.crt'), keyPem: pki('client.key') };
}

const NS = 'team-a';
const pod = (name: string) =>
  review({
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, uid: `uid-${name}` },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
  });
const quota = review({
  kind: { kind: 'ResourceQuota' },
  resource: { resource: 'resourcequotas' },
  object: {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'pods-quota', namespace: NS },
    spec: { hard: { pods: '2' } },
  },
});

async function admit(
  url: string,
  body: object,
  endpoint: 'validate' | 'learn' = 'validate',
): Promise<AdmissionReviewWire['response']> {
  const answer = await post(`${url}/resource-quota/${endpoint}?timeout=10s`, JSON.stringify(body), apiserver());
  expect(answer.status, answer.body).toBe(200);
  return (JSON.parse(answer.body) as AdmissionReviewWire).response;
}

describe('npm start in a fresh directory', () => {
  it('serves every plugin with mTLS, stops on SIGTERM, and keeps its counts across a restart', async () => {
    const first = await start();
    // A fresh directory has no AdmissionConfiguration: every plugin that can answer without one.
    const served = activePlugins(
      configurePlugins(
        plugins,
        parseAdmissionConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n', 'none'),
      ),
    ).map((p) => p.plugin);
    expect(served.map((p) => p.metadata.name)).not.toContain('image-policy-webhook');
    const expected = served.flatMap((p) =>
      [
        p.metadata.mutating && `${first.url}/${p.metadata.name}/mutate`,
        p.metadata.validating && `${first.url}/${p.metadata.name}/validate`,
        learningEndpointRules(p.metadata).length > 0 && `${first.url}/${p.metadata.name}/learn`,
      ].filter(Boolean),
    );
    expect(first.lines.slice(0, -1)).toEqual(expected);
    expect(first.lines.at(-1)).toMatch(new RegExp(`^ready: ${served.length} plugins on `));
    for (const file of ['ca.crt', 'server.crt', 'server.key', 'client.crt', 'client.key'])
      expect(existsSync(join(workdir, '.local/pki', file))).toBe(true);
    await expect(
      post(`${first.url}/resource-quota/validate`, JSON.stringify(quota), { caPem: apiserver().caPem }),
    ).rejects.toThrow();

    // The quota is learned as the apiserver sends it: to the plugin's learning webhook.
    expect((await admit(first.url, quota, 'learn'))!.allowed).toBe(true);
    expect((await admit(first.url, pod('p1')))!.allowed).toBe(true);
    expect((await admit(first.url, pod('p2')))!.allowed).toBe(true);
    expect(await stop(first)).toBe(0);

    const second = await start();
    const third = await admit(second.url, pod('p3'));
    expect(third).toMatchObject({
      allowed: false,
      status: {
        code: 403,
        message: 'pods "p3" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=2, limited: pods=2',
      },
    });
    expect(await stop(second)).toBe(0);
  }, 600_000);
});

describe('the url-secret trial, as docs/managed-url-secret.md runs it', () => {
  it('npm start and emit (with --out or without) use one deployment key: every emitted URL is answered', async () => {
    const server = await start(trialdir, { CALLER_AUTH: 'url-secret' });
    try {
      // The server lists its URLs without their capabilities.
      expect(server.lines).toContain(`${server.url}/<capability>/always-pull-images/validate`);
      const out = join(trialdir, 'cluster');
      const emitted = spawnSync(
        process.execPath,
        [
          '--import',
          TSX,
          join(ROOT, 'infra/emit/cli.ts'),
          '--auth',
          'url-secret',
          '--base-url',
          server.url,
          '--out',
          out,
        ],
        { cwd: trialdir, encoding: 'utf8', env: { ...process.env, ADMISSION_CONFIG: '' } },
      );
      expect(emitted.status, emitted.stderr).toBe(0);
      // --out writes the webhooks, never a key of its own: the one key is the server's.
      expect(existsSync(join(out, 'url-secret'))).toBe(false);
      expect(existsSync(join(trialdir, '.local/url-secret'))).toBe(true);
      const urls = [...readFileSync(join(out, 'webhooks.yaml'), 'utf8').matchAll(/url: (\S+)/g)].map((m) => m[1]);
      const validate = urls.find((u) => u.endsWith('/always-pull-images/validate'))!;
      const learn = urls.find((u) => u.endsWith('/resource-quota/learn'))!;
      const ca = { caPem: readFileSync(join(trialdir, '.local/pki/ca.crt'), 'utf8') };
      const answer = await post(`${validate}?timeout=10s`, JSON.stringify(pod('trial')), ca);
      expect(answer.status, answer.body).toBe(200);
      expect((await post(`${learn}?timeout=10s`, JSON.stringify(quota), ca)).status).toBe(200);
      // A judging URL's capability does not open the plugin's learning endpoint (nor says it has none).
      const forged = validate.replace('/always-pull-images/validate', '/always-pull-images/learn');
      expect((await post(forged, JSON.stringify(pod('trial')), ca)).status).toBe(403);
      const crossed = learn.replace('/resource-quota/learn', '/resource-quota/validate');
      expect((await post(crossed, JSON.stringify(pod('trial')), ca)).status).toBe(403);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });
});
