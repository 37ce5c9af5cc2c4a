// The cluster reader's memory, measured: its handler (infra/cluster-reader/handler.ts), built as
// packaging builds it (esbuild, CommonJS, serverless.yml's plugins) with one stand-in, its token
// source's endpoint on loopback (reader-credentials.ts), loaded by a fresh Node as Lambda loads a
// CommonJS handler, with the environment the deployed function gets (the packaged configuration,
// CLUSTER_READER=token), against a real kube-apiserver and DynamoDB Local. The cluster is seeded at
// growing sizes (pods spread 25 to a namespace, each namespace with a ResourceQuota, a node per 30
// pods, every pod bound to one), and at each size a fresh table makes the reader list everything,
// as a first run (or one after 410 Gone) does. The child takes two invocations, as a warm
// instance takes two schedules: the first lists every kind and watches, the second resumes from
// the checkpoint. Each watches `watchSeconds` (default 3) instead of ~50 s: the handler watches
// what its context's remaining time leaves it, and the list, not the watch, grows with the
// cluster. From inside the child: its peak RSS (VmHWM), its CPU (user + system), the CPU of
// loading the handler, and when each kind's list was stored; from a proxy in front of DynamoDB
// Local, the store calls. Beside them, the floor: an empty handler loaded and
// invoked the same way. From the peak RSS, readerMemoryFor (infra/serverless/cluster-reader.ts:
// cost.ts's chooseMemory) picks the setting.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Plugin } from 'esbuild';
import { build } from 'esbuild';
import { plugins } from '../../functions/index.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { READER_TIMEOUT_SECONDS, readerMemoryFor, readerMemorySetting } from '../../infra/serverless/cluster-reader.js';
import { estimatedMs } from '../../infra/serverless/cost.js';
import { packagePluginSet, writePackagedConfiguration } from '../../infra/serverless/packaged-config.js';
import { WRITE_OPERATIONS } from '../../lib/state/dynamodb.js';
import type { DynamoDbOperation } from '../../lib/state/dynamodb.js';
import type { ControlPlane } from '../e2e/support/control-plane.js';
import { startControlPlane } from '../e2e/support/control-plane.js';
import { createTable } from '../support/dynamodb.js';
import { OUT } from './cold-start.js';
import { latencyProxy } from './latency-proxy.js';
import { median, round } from './stats.js';

const DIR = join(OUT, 'reader');
const HANDLER = 'cluster-reader.cjs';
const FLOOR = 'empty-handler.cjs';
/** The handler keeps this much of the remaining time for its checkpoint (its RESERVE_MS). */
const HANDLER_RESERVE_MS = 8_000;
const PODS_PER_NAMESPACE = 25;
const PODS_PER_NODE = 30;
/** Concurrent creates while seeding. */
const SEED_CONCURRENCY = 16;
const TOKEN_SOURCE = 'arn:aws:secretsmanager:local:000000000000:secret:bench-reader-token';

/** serverless.yml's esbuild plugins, so the bench builds what packaging builds. */
const packagingPlugins = createRequire(import.meta.url)('../../infra/serverless/esbuild-plugins.cjs') as Plugin[];
/** The handler's credentials with the token source on loopback (reader-credentials.ts). */
const loopbackTokenSource: Plugin = {
  name: 'loopback-token-source',
  setup(build) {
    build.onResolve({ filter: /deployed-credentials\.js$/ }, (args) =>
      args.importer.endsWith(join('infra', 'cluster-reader', 'handler.ts'))
        ? { path: resolve('test/bench/reader-credentials.ts') }
        : undefined,
    );
  },
};

async function bundleReader(): Promise<void> {
  await build({
    entryPoints: ['infra/cluster-reader/handler.ts'],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    mainFields: ['module', 'main'],
    define: { 'import.meta.url': '__filename' },
    plugins: [loopbackTokenSource, ...packagingPlugins],
    outfile: join(DIR, HANDLER),
    logLevel: 'silent',
  });
}

/**
 * The child: loads the handler (CommonJS), invokes it `runs` times with a context that leaves it
 * `watchMs` to watch, and writes its figures to a file. The handler's log lines (stderr) are kept
 * with their time since the load, to tell when each kind's list was stored; its EMF lines
 * (stdout) are kept to read its error count.
 */
const driver = (handlerFile: string, runs: number, watchMs: number, outFile: string) =>
  `const fs=require('fs');const cpu=()=>{const u=process.cpuUsage();return (u.user+u.system)/1000};` +
  `const hwm=()=>{const m=/VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status','utf8'));return m?Number(m[1])/1024:process.resourceUsage().maxRSS/1024};` +
  `const lines=[],emf=[];const t0=performance.now();const err=process.stderr.write.bind(process.stderr);` +
  `const keep=(sink)=>(chunk)=>{for(const l of String(chunk).split('\\n'))if(l)sink.push({ms:performance.now()-t0,line:l});return true};` +
  `process.stderr.write=keep(lines);process.stdout.write=keep(emf);` +
  `const {handler}=require(${JSON.stringify(handlerFile)});const loadCpuMs=cpu();const invocations=[];` +
  `(async()=>{for(let i=0;i<${runs};i++){const start=performance.now()-t0;const c0=cpu();` +
  `const result=await handler({},{awsRequestId:'bench-run-'+i,getRemainingTimeInMillis:()=>${HANDLER_RESERVE_MS + watchMs}});` +
  `invocations.push({startMs:start,ms:performance.now()-t0-start,cpuMs:cpu()-c0,result})}` +
  `fs.writeFileSync(${JSON.stringify(outFile)},JSON.stringify({loadCpuMs,cpuMs:cpu(),peakRssMb:hwm(),invocations,lines,emf}));process.exit(0)})()` +
  `.catch(e=>{err(String(e&&e.stack||e)+'\\n');process.exit(1)})`;

interface ChildFigures {
  readonly loadCpuMs: number;
  readonly cpuMs: number;
  readonly peakRssMb: number;
  readonly invocations: { startMs: number; ms: number; cpuMs: number; result: unknown }[];
  readonly lines: { ms: number; line: string }[];
  readonly emf: { ms: number; line: string }[];
}

/**
 * Runs the child to its end. Not execFileSync: the token source and the store's proxy answer from
 * this process's event loop.
 */
async function runChild(handlerFile: string, env: NodeJS.ProcessEnv, runs: number, watchMs: number, tag: string) {
  const outFile = resolve(DIR, `${tag}.figures.json`);
  rmSync(outFile, { force: true });
  const child = spawn(
    process.execPath,
    ['--input-type=commonjs', '-e', driver(resolve(handlerFile), runs, watchMs, outFile)],
    { env, cwd: DIR, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('exit', (exitCode) => done(exitCode));
  });
  if (code !== 0) throw new Error(`reader bench: the ${tag} process exited with ${code}`);
  return JSON.parse(readFileSync(outFile, 'utf8')) as ChildFigures;
}

/** Requests to the apiserver as admin on kept connections (seeding thousands of objects). */
function adminClient(plane: ControlPlane) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: SEED_CONCURRENCY,
    ca: plane.ca.certPem,
    cert: plane.admin.certPem,
    key: plane.admin.keyPem,
  });
  const send = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolveAnswer, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpsRequest(
        `${plane.url}${path}`,
        { method, agent, headers: { accept: 'application/json', 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  /** Creates each object (path, body) with SEED_CONCURRENCY in flight; an existing one is fine. */
  const createAll = async (objects: readonly (readonly [string, unknown])[]) => {
    let next = 0;
    const worker = async () => {
      while (next < objects.length) {
        const [path, body] = objects[next++];
        const answer = await send('POST', path, body);
        if (answer.status !== 201 && answer.status !== 409)
          throw new Error(`seeding POST ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  };
  return { send, createAll, close: () => agent.destroy() };
}

const namespaceName = (i: number) => `team-${i}`;
const nodeName = (i: number) => `node-${i}`;

/** A pod as a team's Deployment makes it: two containers, requests and limits, a probe, a volume. */
function pod(i: number) {
  const namespace = namespaceName(Math.floor(i / PODS_PER_NAMESPACE));
  const app = `app-${i % 5}`;
  const resources = (cpu: string, memory: string) => ({
    requests: { cpu, memory },
    limits: { cpu: '1', memory: '512Mi' },
  });
  return [
    `/api/v1/namespaces/${namespace}/pods`,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${app}-7d9c5b8f4-${i.toString(36).padStart(5, '0')}`,
        namespace,
        labels: { app, 'app.kubernetes.io/part-of': namespace, 'pod-template-hash': '7d9c5b8f4', tier: 'web' },
        annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      },
      spec: {
        nodeName: nodeName(Math.floor(i / PODS_PER_NODE)),
        containers: [
          {
            name: 'app',
            image: `registry.example.com/${namespace}/${app}:1.4.2`,
            ports: [{ name: 'http', containerPort: 8080 }],
            env: [
              { name: 'LOG_LEVEL', value: 'info' },
              { name: 'PORT', value: '8080' },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            ],
            resources: resources('100m', '128Mi'),
            readinessProbe: { httpGet: { path: '/healthz', port: 8080 } },
            volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
          },
          { name: 'proxy', image: 'registry.example.com/mesh/proxy:2.0.1', resources: resources('50m', '64Mi') },
        ],
        volumes: [{ name: 'config', configMap: { name: `${app}-config` } }],
      },
    },
  ] as const;
}

/** Seeds the cluster from `from` pods to `to` (with their namespaces, quotas and nodes). */
async function seed(client: ReturnType<typeof adminClient>, from: number, to: number): Promise<void> {
  const namespaces = (n: number) => Math.ceil(n / PODS_PER_NAMESPACE);
  const nodes = (n: number) => Math.ceil(n / PODS_PER_NODE);
  const range = (a: number, b: number) => Array.from({ length: Math.max(0, b - a) }, (_, k) => a + k);
  await client.createAll([
    ...range(namespaces(from), namespaces(to)).map(
      (n) => ['/api/v1/namespaces', { metadata: { name: namespaceName(n), labels: { team: `t${n}` } } }] as const,
    ),
    ...range(nodes(from), nodes(to)).map(
      (n) =>
        [
          '/api/v1/nodes',
          { metadata: { name: nodeName(n), labels: { 'kubernetes.io/hostname': nodeName(n), pool: `p${n % 4}` } } },
        ] as const,
    ),
  ]);
  await client.createAll(
    range(namespaces(from), namespaces(to)).map(
      (n) =>
        [
          `/api/v1/namespaces/${namespaceName(n)}/resourcequotas`,
          {
            metadata: { name: 'compute' },
            spec: { hard: { pods: '100', 'requests.cpu': '50', 'requests.memory': '100Gi', 'limits.cpu': '100' } },
          },
        ] as const,
    ),
  );
  // Concurrent creates in different namespaces: the apiserver serialises a namespace's quota.
  const order = range(from, to).sort((a, b) => (a % PODS_PER_NAMESPACE) - (b % PODS_PER_NAMESPACE) || a - b);
  await client.createAll(order.map(pod));
}

/** A loopback stand-in for Secrets Manager's GetSecretValue: the reader's token. */
async function tokenSource(token: string) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ ARN: TOKEN_SOURCE, Name: 'bench-reader-token', SecretString: token }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The reader's ServiceAccount (get, list and watch on everything) and a token of it. */
async function readerToken(client: ReturnType<typeof adminClient>): Promise<string> {
  await client.createAll([
    ['/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bench-reader' } }],
    [
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      {
        metadata: { name: 'bench-reader' },
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }],
      },
    ],
    [
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        metadata: { name: 'bench-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'bench-reader', namespace: 'default' }],
      },
    ],
  ]);
  const answer = await client.send('POST', '/api/v1/namespaces/default/serviceaccounts/bench-reader/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  if (answer.status !== 201) throw new Error(`TokenRequest: ${answer.status} ${answer.text}`);
  return (JSON.parse(answer.text) as { status: { token: string } }).status.token;
}

export interface ReaderRow {
  readonly pods: number;
  readonly namespaces: number;
  readonly nodes: number;
  readonly rounds: number;
  readonly 'peak RSS MB': number;
  readonly 'floor peak RSS MB': number;
  readonly 'load CPU ms': number;
  readonly 'floor load CPU ms': number;
  /** CPU of the first invocation: every kind listed and stored, then its watch. */
  readonly 'first run CPU ms': number;
  readonly 'second run CPU ms': number;
  readonly 'floor CPU ms': number;
  /** From the first invocation's start until the last kind's list was stored (wall, this machine). */
  readonly 'first list s': number;
  /** Store writes of both invocations (the lists, then checkpoints). */
  readonly 'store writes': number;
  readonly 'store reads': number;
  /** Errors both invocations reported (their EMF lines' ReaderErrors). */
  readonly errors: number;
  readonly 'chosen MB': number;
  readonly 'chosen by': string;
  /** The first run's CPU stretched to the chosen setting's CPU share (an estimate, not Lambda). */
  readonly 'est. first run CPU s at chosen': number;
}

export interface ReaderFigures {
  readonly watchSeconds: number;
  /** The function's timeout, s: the first run must fit in it. */
  readonly timeoutSeconds: number;
  /** serverless.yml's setting when measured. */
  readonly deployedMb: number;
  /** Peak RSS growth per 1,000 pods, MB: least squares over the sizes. */
  readonly rssMbPer1000Pods: number;
  readonly rows: ReaderRow[];
}

const listedLine = /^reader: (\S+): (\d+) listed at resourceVersion/;

function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
}

/** `sizes`: pod counts, growing; `rounds` fresh reader processes per size; `watchSeconds` per invocation. */
export async function benchReader(
  sizes: readonly number[] = [100, 1_000, 3_000],
  rounds = 2,
  watchSeconds = 3,
): Promise<ReaderFigures> {
  const sorted = [...sizes].sort((a, b) => a - b);
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, FLOOR), "'use strict';exports.handler=async()=>({ran:false});\n");
  const config = resolve(
    writePackagedConfiguration(packagePluginSet(plugins).packaged, join(DIR, 'admission-configuration.json')),
  );
  await bundleReader();
  const db = await startEmbeddedDynamoDb({ quickStart: true });
  const cleanups: (() => Promise<void> | void)[] = [() => db.stop()];
  try {
    const proxy = await latencyProxy(db.endpoint, 0, true);
    cleanups.unshift(() => proxy.close());
    // ServiceAccount admission off: a pod in a namespace created a moment ago needs no default account.
    const plane = await startControlPlane({ disableAdmissionPlugins: ['ServiceAccount'] });
    cleanups.unshift(() => plane.stop());
    const client = adminClient(plane);
    cleanups.unshift(() => client.close());
    const source = await tokenSource(await readerToken(client));
    cleanups.unshift(() => source.close());
    // As deployed (serverless.yml): the provider's environment and the reader function's own.
    const env = (table: string) => ({
      PATH: process.env.PATH,
      ADMISSION_CONFIG: config,
      STATE_TABLE: table,
      LOG_LEVEL: 'info',
      LOG_SAMPLE_ALLOWED: '1',
      CALLER_AUTH: 'mtls',
      CLUSTER_READER: 'token',
      CLUSTER_ENDPOINT: plane.url,
      CLUSTER_CA: Buffer.from(plane.ca.certPem).toString('base64'),
      CLUSTER_TOKEN_SOURCE: TOKEN_SOURCE,
      AWS_LAMBDA_FUNCTION_NAME: 'serverless-admission-bench-clusterReader',
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      DYNAMODB_ENDPOINT: proxy.endpoint,
      BENCH_TOKEN_ENDPOINT: source.endpoint,
    });
    const rows: ReaderRow[] = [];
    let seeded = 0;
    let tables = 0;
    for (const pods of sorted) {
      process.stderr.write(`reader: seeding ${pods} pods...\n`);
      await seed(client, seeded, pods);
      seeded = pods;
      const fn: (ChildFigures & { writes: number; reads: number })[] = [];
      const floor: ChildFigures[] = [];
      for (let r = 0; r < rounds; r++) {
        const table = `bench-reader-${++tables}`;
        await createTable(db.endpoint, table);
        // Floor and function alternate, so drift on a shared machine hits both alike.
        floor.push(await runChild(join(DIR, FLOOR), env(table), 2, watchSeconds * 1000, `floor-${pods}-${r}`));
        proxy.take();
        const figures = await runChild(join(DIR, HANDLER), env(table), 2, watchSeconds * 1000, `reader-${pods}-${r}`);
        const calls = proxy.take();
        const writes = calls.filter((c) => WRITE_OPERATIONS.has(c.operation as DynamoDbOperation)).length;
        fn.push({ ...figures, writes, reads: calls.length - writes });
      }
      const firstList = (f: ChildFigures) => {
        const listed = f.lines.filter((l) => listedLine.test(l.line));
        const pods = listed.find((l) => listedLine.exec(l.line)?.[1] === 'pods');
        if (!pods) throw new Error(`reader: the first run listed no pods:\n${f.lines.map((l) => l.line).join('\n')}`);
        return (Math.max(...listed.map((l) => l.ms)) - f.invocations[0].startMs) / 1000;
      };
      const errors = (f: ChildFigures) =>
        f.emf.reduce((sum, l) => sum + Number((JSON.parse(l.line) as { ReaderErrors?: number }).ReaderErrors ?? 0), 0);
      const peakRssMb = median(fn.map((f) => f.peakRssMb));
      const firstRunCpuMs = median(fn.map((f) => f.invocations[0].cpuMs));
      const chosen = readerMemoryFor(peakRssMb);
      rows.push({
        pods,
        namespaces: Math.ceil(pods / PODS_PER_NAMESPACE),
        nodes: Math.ceil(pods / PODS_PER_NODE),
        rounds,
        'peak RSS MB': round(peakRssMb, 1),
        'floor peak RSS MB': round(median(floor.map((f) => f.peakRssMb)), 1),
        'load CPU ms': round(median(fn.map((f) => f.loadCpuMs)), 1),
        'floor load CPU ms': round(median(floor.map((f) => f.loadCpuMs)), 1),
        'first run CPU ms': round(firstRunCpuMs, 0),
        'second run CPU ms': round(median(fn.map((f) => f.invocations[1].cpuMs)), 0),
        'floor CPU ms': round(median(floor.map((f) => f.cpuMs)), 1),
        'first list s': round(median(fn.map(firstList)), 2),
        'store writes': round(median(fn.map((f) => f.writes)), 0),
        'store reads': round(median(fn.map((f) => f.reads)), 0),
        errors: Math.max(...fn.map(errors)),
        'chosen MB': chosen.memoryMb,
        'chosen by': chosen.bound,
        'est. first run CPU s at chosen': round(estimatedMs(firstRunCpuMs, chosen.memoryMb) / 1000, 1),
      });
    }
    return {
      watchSeconds,
      timeoutSeconds: READER_TIMEOUT_SECONDS,
      deployedMb: readerMemorySetting(),
      rssMbPer1000Pods: round(slope(rows.map((r) => ({ x: r.pods / 1000, y: r['peak RSS MB'] }))), 1),
      rows,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}
