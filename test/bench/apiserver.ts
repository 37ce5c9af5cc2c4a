// The apiserver's clock: the same requests (server-side dry runs) sent through a real
// kube-apiserver v1.36.2 (KUBEBUILDER_ASSETS) for every plugin `emit --native` compiles
// (apiserver-plugins.ts), each way it can be: the built-in plugin (where kube-apiserver has one),
// the webhooks through `npm start` (mTLS and capability URLs), the native policies, and none of
// them (the floor where there is no built-in). Read from the apiserver's own /metrics (the
// admission step histogram and each path's own: the built-in plugin's, the webhooks', the policy
// plugins' and their CEL checks') and from the client. Rounds alternate the paths so that drift in
// the machine's speed falls on all of them; each round also times a trivial mTLS handler on a kept
// connection, the floor a perfect webhook would sit on.
import { spawn } from 'node:child_process';
import { Agent, request as httpsRequest } from 'node:https';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { DEFAULT_PKI_DIR, ensureLocalPki } from '../../infra/pki/pki.js';
import type { ControlPlane, ControlPlaneOptions } from '../e2e/support/control-plane.js';
import { assetsDir, startControlPlane } from '../e2e/support/control-plane.js';
import { create } from '../e2e/support/kube.js';
import { emitNative } from '../e2e/support/native.js';
import { floorPolicies } from './native-floor.js';
import { startWebhookCluster } from '../e2e/support/webhook-cluster.js';
import type { BenchPlugin } from './apiserver-plugins.js';
import {
  admissionConfiguration,
  answerProblem,
  BENCH_PLUGINS,
  floorProblem,
  webhookProblem,
} from './apiserver-plugins.js';
import type { Histogram, Labels, Ratio } from './prometheus.js';
import { counterOf, histogramOf, mean, minus, quantile, roundRatios, verdict } from './prometheus.js';
import { distribution, median, round } from './stats.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface ApiserverBenchOptions {
  readonly rounds: number;
  readonly requests: number;
  /** Only these plugins (registry names); all of BENCH_PLUGINS by default. */
  readonly plugins?: readonly string[];
}

type PathName = 'none' | 'built-in' | 'webhook mTLS' | 'webhook capability' | 'native' | 'native floor';

const STEP = 'apiserver_admission_step_admission_duration_seconds';
const CONTROLLER = 'apiserver_admission_controller_admission_duration_seconds';
const WEBHOOK = 'apiserver_admission_webhook_admission_duration_seconds';
/** Calls a webhook with failurePolicy Ignore failed and the apiserver admitted without it. */
const FAIL_OPEN = 'apiserver_admission_webhook_fail_open_count';
/**
 * The CEL checks of each policy (absent until observed). A v1.36 apiserver observes every
 * MutatingAdmissionPolicy it applies, but a ValidatingAdmissionPolicy's checks only when they deny,
 * warn, audit or fail to evaluate (validating/dispatcher.go): for an admitted request they read 0.
 */
const POLICY_CHECKS = [
  'apiserver_validating_admission_policy_check_duration_seconds',
  'apiserver_mutating_admission_policy_check_duration_seconds',
];
/** `npm start`'s own histogram: the request reaching the handler to the answer. */
const SERVER = 'serverless_admission_webhook_admission_duration_seconds';

interface Target {
  readonly path: PathName;
  readonly cluster: ControlPlane;
  /** The series of the path's own histogram. */
  readonly own?: { readonly metric: string; readonly match: (labels: Labels) => boolean };
  /** `npm start`'s /metrics, where the bench can read it (mTLS: the client certificate). */
  readonly serverMetrics?: () => Promise<string>;
  /** The native floor: whether its policies mutate (then every answer carries its label). */
  readonly floorMutates?: boolean;
}

/** One round's figures of one path, in milliseconds. */
type Figures = Record<string, number>;

const ms = (seconds: number) => seconds * 1000;

async function measureRound(plugin: BenchPlugin, target: Target, requests: number, tag: string): Promise<Figures> {
  const scrape = async () => (await target.cluster.request('GET', '/metrics')).body;
  const before = await scrape();
  const serverBefore = await target.serverMetrics?.();
  const latencies: number[] = [];
  const ours = (l: Labels) => l.name?.startsWith(`${plugin.name}.`) ?? false;
  // The histograms' series of the bench's operation: a create, or an update (PUT).
  const operation = plugin.request('operation').method === 'PUT' ? 'UPDATE' : 'CREATE';
  const sent = (labels: Labels) => labels.operation === operation;
  for (let i = 0; i < requests; i++) {
    const { method = 'POST', path, body, as } = plugin.request(`b-${tag}-${i}`);
    const started = process.hrtime.bigint();
    const answer = await target.cluster.request(method, path, body, as ? { 'impersonate-user': as } : undefined);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    const problem =
      target.path === 'native floor'
        ? floorProblem(plugin, target.floorMutates ?? false, answer)
        : answerProblem(plugin, target.path, answer);
    if (problem) throw new Error(`${problem} (round ${tag}, request ${i + 1})`);
  }
  const after = await scrape();
  const delta = (metric: string, match: (labels: Labels) => boolean): Histogram =>
    minus(histogramOf(after, metric, match), histogramOf(before, metric, match));
  const problem = webhookProblem(
    plugin.name,
    target.path,
    requests,
    delta(WEBHOOK, (l) => sent(l) && ours(l)).count,
    counterOf(after, FAIL_OPEN, ours) - counterOf(before, FAIL_OPEN, ours),
  );
  if (problem) throw new Error(`${problem} (round ${tag})`);
  const client = distribution(latencies);
  // The step histogram has no resource label: every CREATE (or UPDATE) of the round is one of its
  // requests.
  const step = delta(STEP, sent);
  const figures: Figures = {
    'client p50 ms': client.p50,
    'client p99 ms': client.p99,
    // Per request: its admit and validate steps together (the sum is exact; buckets start at 5 ms).
    'admission ms per request': ms(step.sum / requests),
  };
  if (target.own) {
    const own = delta(target.own.metric, (l) => sent(l) && target.own!.match(l));
    figures['own ms per request'] = ms(own.sum / requests);
    figures['own p50 ms'] = ms(quantile(0.5, own));
    figures['own p99 ms'] = ms(quantile(0.99, own));
    figures['own calls per request'] = own.count / requests;
  }
  if (target.path === 'native' || target.path === 'native floor') {
    const ours = (l: Labels) => l.policy?.startsWith(`serverless-admission-${plugin.name}`) ?? false;
    const checks = POLICY_CHECKS.map((m) => delta(m, ours));
    figures['CEL checks ms per request'] = ms(checks.reduce((s, h) => s + h.sum, 0) / requests);
  }
  if (target.serverMetrics && serverBefore !== undefined) {
    const ours = (l: Labels) => l.plugin === plugin.name;
    const served = minus(
      histogramOf(await target.serverMetrics(), SERVER, ours),
      histogramOf(serverBefore, SERVER, ours),
    );
    figures['server ms per call'] = ms(mean(served));
  }
  return figures;
}

/** A kept mTLS connection to `url` with the local PKI's client certificate. */
function mtlsClient(pkiDir: string) {
  const pki = ensureLocalPki(pkiDir);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: pki.ca.certPem,
    cert: pki.client.certPem,
    key: pki.client.keyPem,
  });
  const call = (url: string, method: string, body?: string) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      const req = httpsRequest(url, { method, agent, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', fail);
      req.end(body);
    });
  return { call, close: () => agent.destroy() };
}

/** The floor of a webhook call: test/bench/floor-server.ts (parse, answer allowed) on loopback. */
async function startMtlsFloor(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/floor-server.ts'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).once('line', done);
    child.once('exit', (code) => fail(new Error(`floor server exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, stop: () => void child.stdin!.end() };
}

const FLOOR_REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: '00000000-0000-0000-0000-000000000000', operation: 'CREATE', object: { kind: 'Pod' } },
});

async function floorRound(client: ReturnType<typeof mtlsClient>, url: string, requests: number): Promise<Figures> {
  const latencies: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = process.hrtime.bigint();
    await client.call(url, 'POST', FLOOR_REVIEW);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const d = distribution(latencies);
  return { 'mTLS round trip p50 ms': d.p50, 'mTLS round trip p99 ms': d.p99, 'mTLS round trip mean ms': d.mean };
}

export interface TargetRow {
  readonly plugin: string;
  readonly target: string;
  readonly ratio: number;
  readonly spread: string;
  readonly limit: number;
  readonly verdict: string;
  /** For a target not met everywhere: the floor it sits on, measured. */
  readonly floor?: string;
}

export interface ApiserverResults {
  readonly rows: Record<string, unknown>[];
  readonly targets: TargetRow[];
  readonly mtlsFloor: Figures;
  readonly rounds: number;
  readonly requests: number;
}

const spreadText = (r: Ratio) => `${r.min}–${r.max}`;

async function benchPlugin(
  plugin: BenchPlugin,
  options: ApiserverBenchOptions,
  store: { endpoint: string },
  floor: { url: string },
  floorClient: ReturnType<typeof mtlsClient>,
): Promise<{ rows: Record<string, unknown>[]; targets: TargetRow[]; floorRounds: Figures[] }> {
  const config = admissionConfiguration(plugin);
  const started: { stop(): Promise<void> }[] = [];
  const clients: ReturnType<typeof mtlsClient>[] = [];
  // Where kube-apiserver has the plugin (some on by default), only the built-in path runs it.
  const without: ControlPlaneOptions = {
    controllerManager: false,
    ...(plugin.builtIn && { disableAdmissionPlugins: [plugin.builtIn] }),
    ...(plugin.apiserverArgs && { extraApiserverArgs: plugin.apiserverArgs }),
  };
  try {
    const policies = await emitNative(config);
    const targets: Target[] = [];
    // One at a time: several control planes starting at once would crowd two cores.
    const none = await startControlPlane(without);
    started.push(none);
    targets.push({ path: 'none', cluster: none });
    if (plugin.builtIn) {
      const builtIn = await startControlPlane({
        controllerManager: false,
        enableAdmissionPlugins: [plugin.builtIn],
        ...(plugin.apiserverArgs && { extraApiserverArgs: plugin.apiserverArgs }),
        ...(plugin.entry.includes('configuration') && { admissionConfiguration: config }),
      });
      started.push(builtIn);
      const name = plugin.builtIn;
      targets.push({ path: 'built-in', cluster: builtIn, own: { metric: CONTROLLER, match: (l) => l.name === name } });
    }
    if (!plugin.nativeOnly)
      for (const [path, auth] of [
        ['webhook mTLS', 'mtls'],
        ['webhook capability', 'url-secret'],
      ] as const) {
        const webhooks = await startWebhookCluster({
          admissionConfiguration: config,
          auth,
          dynamodbEndpoint: store.endpoint,
          controlPlane: without,
        });
        started.push(webhooks);
        const client = auth === 'mtls' ? mtlsClient(join(webhooks.workdir, DEFAULT_PKI_DIR)) : undefined;
        if (client) clients.push(client);
        targets.push({
          path,
          cluster: webhooks.cluster,
          own: { metric: WEBHOOK, match: (l) => l.name?.startsWith(`${plugin.name}.`) ?? false },
          ...(client && {
            serverMetrics: async () => (await client.call(`${webhooks.serverUrl}/metrics`, 'GET')).body,
          }),
        });
      }
    const policyPlugins = {
      metric: CONTROLLER,
      match: (l: Labels) => l.name === 'ValidatingAdmissionPolicy' || l.name === 'MutatingAdmissionPolicy',
    };
    const native = await startControlPlane(without);
    started.push(native);
    targets.push({ path: 'native', cluster: native, own: policyPlugins });
    const nativeFloor = await startControlPlane(without);
    started.push(nativeFloor);
    const floorMutates = /^kind: MutatingAdmissionPolicy$/m.test(policies);
    targets.push({ path: 'native floor', cluster: nativeFloor, own: policyPlugins, floorMutates });
    // The `default` ServiceAccount the ServiceAccount plugin looks for (no controller-manager),
    // before the native policies are in force. The webhooks already are: AlwaysDeny's refuses the
    // ServiceAccount (its requests, ConfigMaps, need none).
    for (const { cluster, path } of targets) {
      const namespace = await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
      if (namespace.status !== 201)
        throw new Error(`${plugin.name} ${path}: namespace bench: ${namespace.status} ${namespace.message}`);
      await create(cluster, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'default', namespace: 'bench' },
      });
      await plugin.setup?.(cluster);
    }
    for (const [cluster, yaml, what] of [
      [native, policies, 'the native policies'],
      [nativeFloor, floorPolicies(policies), 'the native floor'],
    ] as const) {
      const applied = await cluster.kubectl(['apply', '-f', '-'], yaml);
      if (applied.code !== 0) throw new Error(`${plugin.name}: applying ${what}: ${applied.stderr}`);
    }
    // The apiserver loads stored policies from an informer a moment after they are applied.
    await new Promise((r) => setTimeout(r, 2000));
    // Warm-up: connections, informers, the policies' compilation.
    for (const target of targets) await measureRound(plugin, target, Math.min(20, options.requests), 'w');
    const perPath = new Map<PathName, Figures[]>();
    const floorRounds: Figures[] = [];
    for (let r = 0; r < options.rounds; r++) {
      floorRounds.push(await floorRound(floorClient, floor.url, options.requests));
      for (const target of targets)
        perPath.set(target.path, [
          ...(perPath.get(target.path) ?? []),
          await measureRound(plugin, target, options.requests, `${r}`),
        ]);
    }
    const baselineName: PathName = plugin.builtIn ? 'built-in' : 'none';
    const baseline = perPath.get(baselineName)!;
    const rows: Record<string, unknown>[] = [];
    for (const [path, rounds] of perPath) {
      const row: Record<string, unknown> = { plugin: plugin.name, path, baseline: baselineName, rounds: rounds.length };
      for (const key of Object.keys(rounds[0])) row[key] = round(median(rounds.map((f) => f[key])), 3);
      for (const key of ['client p50 ms', 'client p99 ms', 'admission ms per request']) {
        const ratio = roundRatios(
          rounds.map((f) => f[key]),
          baseline.map((f) => f[key]),
        );
        if (!ratio) continue;
        row[`${key} / baseline`] = ratio.median;
        row[`${key} / baseline spread`] = spreadText(ratio);
      }
      rows.push(row);
    }
    return { rows, targets: targetsOf(plugin, perPath, baselineName, floorRounds), floorRounds };
  } finally {
    for (const client of clients) client.close();
    for (const s of started.reverse()) await s.stop().catch(() => {});
  }
}

function targetsOf(
  plugin: BenchPlugin,
  perPath: ReadonlyMap<PathName, Figures[]>,
  baselineName: PathName,
  floorRounds: readonly Figures[],
): TargetRow[] {
  const targets: TargetRow[] = [];
  const nativeRounds = perPath.get('native');
  const baseline = perPath.get(baselineName)!;
  const admission = (f: Figures) => f['admission ms per request'];
  if (nativeRounds) {
    const ratio = roundRatios(nativeRounds.map(admission), baseline.map(admission));
    if (ratio) {
      const met = verdict(ratio, 2);
      const least = perPath.get('native floor')!;
      const floorRatio = roundRatios(least.map(admission), baseline.map(admission))!;
      const oursRatio = roundRatios(nativeRounds.map(admission), least.map(admission))!;
      const baselineText = baselineName === 'built-in' ? 'the built-in' : 'no plugin';
      targets.push({
        plugin: plugin.name,
        target: `native admission ≤ 2× ${baselineText}`,
        ratio: ratio.median,
        spread: spreadText(ratio),
        limit: 2,
        verdict: met,
        ...(met !== 'met' && {
          floor: `the same policies doing the least (validating \`true\`, adding one label): ${round(median(least.map(admission)), 3)} ms of admission per request, ${floorRatio.median}× (${spreadText(floorRatio)}) ${baselineText}'s ${round(median(baseline.map(admission)), 3)} ms; ours ${oursRatio.median}× (${spreadText(oursRatio)}) that floor`,
        }),
      });
    }
  }
  const mtlsServer = perPath.get('webhook mTLS')?.map((f) => f['server ms per call']);
  for (const path of ['webhook mTLS', 'webhook capability'] as const) {
    const rounds = perPath.get(path);
    if (!rounds || !mtlsServer) continue;
    // A perfect webhook: the server's own handling plus one mTLS round trip on a kept connection.
    // The capability path's server is not scraped (its /metrics needs a capability of its own):
    // the mTLS server's handling of the same requests stands in.
    const perfect = floorRounds.map((f, i) => mtlsServer[i] + f['mTLS round trip p99 ms']);
    const ratio = roundRatios(
      rounds.map((f) => f['own p99 ms']),
      perfect,
    );
    if (!ratio) continue;
    const met = verdict(ratio, 3);
    targets.push({
      plugin: plugin.name,
      target: `${path}: webhook histogram p99 ≤ 3× (server + mTLS round trip)`,
      ratio: ratio.median,
      spread: spreadText(ratio),
      limit: 3,
      verdict: met,
      ...(met !== 'met' && {
        floor: `server ${round(median(mtlsServer), 3)} ms per call + round trip p99 ${round(median(floorRounds.map((f) => f['mTLS round trip p99 ms'])), 3)} ms; the apiserver's first bucket is 5 ms, so any p99 under 5 ms reads as up to 4.95 ms; mean per call ${round(median(rounds.map((f) => f['own ms per request'] / f['own calls per request'])), 3)} ms`,
      }),
    });
  }
  return targets;
}

export async function benchApiserver(options: ApiserverBenchOptions): Promise<ApiserverResults> {
  assetsDir();
  const plugins = options.plugins
    ? options.plugins.map((name) => {
        const plugin = BENCH_PLUGINS.find((p) => p.name === name);
        if (!plugin)
          throw new Error(
            `--plugins: no bench for ${name}: choose from ${BENCH_PLUGINS.map((p) => p.name).join(', ')}`,
          );
        return plugin;
      })
    : BENCH_PLUGINS;
  const store = await startEmbeddedDynamoDb({});
  const floor = await startMtlsFloor();
  const floorClient = mtlsClient(join(ROOT, DEFAULT_PKI_DIR));
  const rows: Record<string, unknown>[] = [];
  const targets: TargetRow[] = [];
  const floorRounds: Figures[] = [];
  try {
    for (const plugin of plugins) {
      process.stderr.write(`apiserver: ${plugin.name}...\n`);
      const measured = await benchPlugin(plugin, options, store, floor, floorClient);
      rows.push(...measured.rows);
      targets.push(...measured.targets);
      floorRounds.push(...measured.floorRounds);
    }
  } finally {
    floorClient.close();
    floor.stop();
    await store.stop();
  }
  const mtlsFloor = Object.fromEntries(
    Object.keys(floorRounds[0] ?? {}).map((key) => [key, round(median(floorRounds.map((f) => f[key])), 3)]),
  );
  // Every row with every column (a path without a histogram of its own has none).
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return {
    rows: rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? '—']))),
    targets,
    mtlsFloor,
    rounds: options.rounds,
    requests: options.requests,
  };
}
