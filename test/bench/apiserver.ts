// The apiserver's clock: the same pod creates (server-side dry runs) sent through a real
// kube-apiserver v1.36.2 (KUBEBUILDER_ASSETS) with a plugin built in, as webhooks through
// `npm start` (mTLS and capability URLs), as the native policies `emit --native` compiles, and with
// none of them (the floor). Read from the apiserver's own /metrics (the admission step histogram,
// and each path's own: the built-in plugin's, the webhooks', the policy plugins') and from the
// client. Rounds alternate the paths so that drift in the machine's speed falls on all of them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import type { ControlPlane } from '../e2e/support/control-plane.js';
import { assetsDir, startControlPlane } from '../e2e/support/control-plane.js';
import type { WebhookCluster } from '../e2e/support/webhook-cluster.js';
import { startWebhookCluster } from '../e2e/support/webhook-cluster.js';
import { create, pod } from '../e2e/support/kube.js';
import { distribution, median, round, spread } from './stats.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS_PER_ROUND = 100;

/** The plugins measured: each has a built-in, a webhook and a native compilation. */
const PLUGINS = [
  {
    name: 'always-pull-images',
    upstream: 'AlwaysPullImages',
    webhooks: [
      'always-pull-images.mutate.serverless-admission.io',
      'always-pull-images.validate.serverless-admission.io',
    ],
    native: ['MutatingAdmissionPolicy', 'ValidatingAdmissionPolicy'],
  },
] as const;

type PathName = 'none' | 'built-in' | 'webhook mTLS' | 'webhook capability' | 'native';

interface Histogram {
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  readonly sum: number;
  readonly count: number;
}

/** Adds every series of `metric` whose labels match `match` into one histogram. */
export function histogramOf(text: string, metric: string, match: (labels: string) => boolean): Histogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    const series = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!series?.[1].startsWith(metric) || !match(series[2])) continue;
    const value = Number(series[3]);
    if (series[1] === `${metric}_bucket`) {
      const le = /(?:^|,)le="([^"]+)"/.exec(series[2])?.[1];
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (series[1] === `${metric}_sum`) sum += value;
    else if (series[1] === `${metric}_count`) count += value;
  }
  return {
    buckets: [...buckets].map(([le, c]) => ({ le, count: c })).sort((a, b) => a.le - b.le),
    sum,
    count,
  };
}

function minus(after: Histogram, before: Histogram): Histogram {
  return {
    buckets: after.buckets.map((b) => ({
      le: b.le,
      count: b.count - (before.buckets.find((x) => x.le === b.le)?.count ?? 0),
    })),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/** Prometheus' histogram_quantile: linear within the bucket the rank falls in. */
export function quantile(q: number, h: Histogram): number {
  if (h.count === 0) return Number.NaN;
  const rank = q * h.count;
  let below = 0;
  let lower = 0;
  for (const { le, count } of h.buckets) {
    if (count >= rank) {
      if (le === Number.POSITIVE_INFINITY) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(count - below, 1);
    }
    below = count;
    lower = le;
  }
  return lower;
}

interface Target {
  readonly path: PathName;
  readonly cluster: ControlPlane;
  /** The series of the path's own histogram: [metric, label filter]. */
  readonly own?: readonly [string, (labels: string) => boolean];
}

async function metricsText(cluster: ControlPlane): Promise<string> {
  return (await cluster.request('GET', '/metrics')).body;
}

const STEP = 'apiserver_admission_step_admission_duration_seconds';
/** The step histogram has no resource label: every CREATE in a round is one of its pod creates. */
const podCreate = (labels: string) => labels.includes('operation="CREATE"');

async function round1(target: Target, index: number): Promise<Record<string, number>> {
  const before = await metricsText(target.cluster);
  const latencies: number[] = [];
  for (let i = 0; i < REQUESTS_PER_ROUND; i++) {
    const started = process.hrtime.bigint();
    const answer = await target.cluster.request(
      'POST',
      '/api/v1/namespaces/bench/pods?dryRun=All',
      pod('bench', `p-${index}-${i}`, { containers: [{ name: 'c', image: 'registry.example/app:1' }] }),
    );
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (answer.status !== 201) throw new Error(`${target.path}: ${answer.status} ${answer.body}`);
  }
  const after = await metricsText(target.cluster);
  const step = minus(histogramOf(after, STEP, podCreate), histogramOf(before, STEP, podCreate));
  const client = distribution(latencies);
  const figures: Record<string, number> = {
    'client p50 ms': client.p50,
    'client p99 ms': client.p99,
    // Per request: its admit and validate steps together.
    'admission mean ms': (step.sum / REQUESTS_PER_ROUND) * 1000,
  };
  if (target.own) {
    const [metric, match] = target.own;
    const own = minus(histogramOf(after, metric, match), histogramOf(before, metric, match));
    // Per request: the path's histogram holds one observation per webhook or plugin call.
    figures['own mean ms'] = (own.sum / REQUESTS_PER_ROUND) * 1000;
    figures['own p99 ms (buckets)'] = quantile(0.99, own) * 1000;
  }
  return figures;
}

function emitNative(cwd: string, config: string): Promise<string> {
  return new Promise((resolveEmit, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', TSX, join(ROOT, 'infra/emit/cli.ts'), '--native', '--kubernetes-version', '1.36'],
      { cwd, env: { ...process.env, ADMISSION_CONFIG: config }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => (code === 0 ? resolveEmit(out) : reject(new Error(`emit --native: ${err}`))));
  });
}

export async function benchApiserver(): Promise<Record<string, unknown>[]> {
  assetsDir();
  const store = await startEmbeddedDynamoDb({});
  const work = mkdtempSync(join(tmpdir(), 'bench-apiserver-'));
  const rows: Record<string, unknown>[] = [];
  const started: { stop(): Promise<void> }[] = [];
  try {
    for (const plugin of PLUGINS) {
      const config = `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  - name: ${plugin.upstream}\n`;
      const configFile = join(work, `${plugin.name}.yaml`);
      writeFileSync(configFile, config);
      const webhookOptions = { admissionConfiguration: config, dynamodbEndpoint: store.endpoint };
      // One at a time: five control planes starting at once would crowd two cores.
      const none = await startControlPlane({ controllerManager: false });
      started.push(none);
      const builtin = await startControlPlane({ controllerManager: false, enableAdmissionPlugins: [plugin.upstream] });
      started.push(builtin);
      const mtls: WebhookCluster = await startWebhookCluster({
        ...webhookOptions,
        controlPlane: { controllerManager: false },
      });
      started.push(mtls);
      const capability: WebhookCluster = await startWebhookCluster({
        ...webhookOptions,
        auth: 'url-secret',
        controlPlane: { controllerManager: false },
      });
      started.push(capability);
      const native = await startControlPlane({ controllerManager: false });
      started.push(native);
      const applied = await native.kubectl(['apply', '-f', '-'], await emitNative(work, configFile));
      if (applied.code !== 0) throw new Error(`applying the native policies: ${applied.stderr}`);
      const targets: Target[] = [
        { path: 'none', cluster: none },
        {
          path: 'built-in',
          cluster: builtin,
          own: [
            'apiserver_admission_controller_admission_duration_seconds',
            (l) => l.includes(`name="${plugin.upstream}"`) && l.includes('operation="CREATE"'),
          ],
        },
        ...(
          [
            ['webhook mTLS', mtls.cluster],
            ['webhook capability', capability.cluster],
          ] as const
        ).map(([path, cluster]) => ({
          path,
          cluster,
          own: [
            'apiserver_admission_webhook_admission_duration_seconds',
            (l: string) => plugin.webhooks.some((w) => l.includes(`name="${w}"`)) && l.includes('operation="CREATE"'),
          ] as const,
        })),
        {
          path: 'native',
          cluster: native,
          own: [
            'apiserver_admission_controller_admission_duration_seconds',
            (l) => plugin.native.some((n) => l.includes(`name="${n}"`)) && l.includes('operation="CREATE"'),
          ],
        },
      ];
      // The `default` ServiceAccount the ServiceAccount plugin looks for (no controller-manager).
      for (const { cluster } of targets) {
        await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
        await create(cluster, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'default', namespace: 'bench' },
        });
      }
      // Warm-up: connections, informers and the policies' compilation.
      for (const target of targets) await round1(target, -1);
      const perPath = new Map<PathName, Record<string, number>[]>();
      for (let r = 0; r < ROUNDS; r++)
        for (const target of targets)
          perPath.set(target.path, [...(perPath.get(target.path) ?? []), await round1(target, r)]);
      const builtinRounds = perPath.get('built-in')!;
      for (const [path, rounds] of perPath) {
        const row: Record<string, unknown> = { plugin: plugin.name, path, rounds: rounds.length };
        for (const key of Object.keys(rounds[0])) row[key] = round(median(rounds.map((f) => f[key])), 3);
        // Ratios to the built-in, round by round, then their median and spread.
        // The apiserver's buckets start at 5 ms: below that only the sums (means) are exact.
        for (const key of ['client p50 ms', 'client p99 ms', 'admission mean ms', 'own mean ms']) {
          if (!(key in rounds[0]) || !(key in builtinRounds[0])) continue;
          const ratios = rounds.map((f, i) => f[key] / builtinRounds[i][key]);
          const s = spread(ratios);
          row[`${key} / built-in`] = round(s.median, 2);
          row[`${key} / built-in spread`] = `${round(s.min, 2)}–${round(s.max, 2)}`;
        }
        rows.push(row);
      }
      for (const s of started.splice(0).reverse()) await s.stop();
    }
  } finally {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    await store.stop();
    rmSync(work, { recursive: true, force: true });
  }
  // Every row with every column (the floor has no histogram of its own).
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? '—'])));
}
