// `npm run bench`: every figure side by side with its floor, printed and written to
// .local/bench/results.json (untracked, stable keys). `-- --out bench/results.json` regenerates
// the committed run docs/performance.md quotes, deliberately, and that page and its chart with it.
// Figures, never assertions.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_RESULTS, docsCommand, ROOT } from '../../infra/docs/generate.js';
import { CLUSTERS_DIR, fleetCluster } from '../../lib/config/fleet.js';
import { benchApiserver } from './apiserver.js';
import { benchApiserverQuotaBurst } from './apiserver-quota-burst.js';
import { benchColdStart } from './cold-start.js';
import { benchCost } from './cost.js';
import { benchLogger } from './logger.js';
import { benchHandlers } from './handlers.js';
import { benchQuotaBurst } from './quota-burst.js';
import { benchReader } from './reader.js';
import { benchFlood } from './flood.js';
import { table } from './stats.js';
import { benchThroughput } from './throughput.js';

const SECTIONS = [
  'handlers',
  'cold-start',
  'cost',
  'throughput',
  'cel',
  'map',
  'store',
  'quota-burst',
  'flood',
  'logger',
  'apiserver',
  'reader',
] as const;
type Section = (typeof SECTIONS)[number];

// The apiserver section's defaults. Most of a plugin's time is starting its control planes (up to
// five, and npm start twice): on a busy two-core machine, one round of 5 requests took 35-120 s per
// plugin (about 23 minutes for the 21), and 5 rounds of 100 added about 40 s to a plugin with
// every path, some 35 minutes in all. 3 rounds of 60 keep a full run near 26 minutes, the spread
// of the rounds still shown.
const APISERVER_ROUNDS = 3;
const APISERVER_REQUESTS = 60;

const USAGE = `Usage: npm run bench [-- --only ${SECTIONS.join(',')}] [-- --out FILE | --merge FILE] [-- --cluster NAME]
                       [-- --cpu-prof]

Measures, next to a floor in the same run:
  handlers    each plugin's full Lambda handler in-process vs JSON.parse+stringify of the review,
              with metrics off, EMF (lib/metrics), EMF through Powertools, Prometheus, and with the
              request log on (metrics off, and EMF folded into its line)
  cold-start  each function's esbuild bundle (ESM as packaged, CommonJS for the stateless ones, the
              SDK's client for the stateful ones) and each zip of npm run package, unzipped and
              run with serverless.yml's environment: size, fresh-process load+answer vs bare node,
              beside two floors (the same driver loading an empty handler, and a handler of the
              bundle's size that runs none of it) and one start's --cpu-prof summarised (heaviest
              functions, built-in modules loaded; the profiles in .local/bench/profiles/)
  cost        each function's bundle loaded as Lambda loads a CommonJS handler, in a fresh process,
              answering a burst of reviews (stateful ones against DynamoDB Local), beside an empty
              handler loaded the same way: peak RSS, CPU to the first answer and per warm request,
              and the memory setting those choose (infra/serverless/cost.ts)
              --requests N per burst (default 200), --rounds N (default 3)
  throughput  npm start (request log on, and off) at 16 autocannon mTLS connections vs a bare https
              server with the same TLS; req/s and each server's CPU per request, and the gap to the
              floor split into the request log, the handler (timed alone) and the rest of the path
              --cpu-prof also runs npm start under --cpu-prof (.local/bench/throughput-profile/)
              and keeps its top self and total times per request under throughput.profile
  cel         ValidatingAdmissionPolicy evaluation, and a request with 1 vs 1,000 policies loaded
  map         MutatingAdmissionPolicy: a label-adding ApplyConfiguration on a pod, full handler, vs
              the parse floor; a request with 1 vs 1,000 policies loaded
  store       DynamoDB calls per admitted request for each writing plugin
  quota-burst 64 concurrent pod creates vs pods: 32, every store call 10 ms later, vs the same
              calls uncoordinated: in process, and through npm start over mTLS (in-memory and
              persistent store behind a 10 ms proxy), with the server's event-loop delay
  flood       npm start flooded for 10 s (url-secret: capabilities no key made, each on a new TLS
              connection; mTLS: handshakes without a certificate) while 20 real reviews a second
              go through: their p99 and failures, beside the same client without a flood
  apiserver   for every plugin emit --native compiles, the same dry-run creates through a real
              kube-apiserver (KUBEBUILDER_ASSETS): no plugin, the built-in, the webhooks through
              npm start (mTLS, capability URLs) and the native policies; the client's latency and
              the apiserver's own admission histograms as ratios to the built-in's (or to no
              plugin), the targets' verdicts, and a trivial mTLS handler's round trip as the floor
              --rounds N (default 3), --requests N per path and round (default 60),
              --plugins a,b (default all; the quota burst runs only without it) shorten a trial run
  reader      the cluster reader's handler as packaged, loaded as Lambda loads a CommonJS handler
              with the deployed function's environment, reading a real kube-apiserver
              (KUBEBUILDER_ASSETS) seeded with 100, 1,000 and 3,000 pods into DynamoDB Local from
              scratch, two invocations of a short watch each, beside an empty handler: peak RSS, CPU,
              the first list's time and store calls, and the memory setting the peak chooses
              --rounds N per size (default 3), --pods a,b,c (default 100,1000,3000)
  logger      one request log record: lib/http/log vs Powertools Logger, per record and bundle bytes
Writes .local/bench/results.json unless --out names another file; --out bench/results.json, the
committed run, also regenerates docs/performance.md and its chart (as npm run docs does).
--merge FILE writes only the sections measured now into FILE, keeping the others
(npm run bench -- --only apiserver --merge bench/results.json).
--cluster NAME: the handlers section configures each plugin from a fleet's cluster,
${CLUSTERS_DIR}/NAME.yaml, instead of config/admission.yaml; the results name the cluster.
BENCH_ROUNDS (quota-burst, default 5) and BENCH_RUNS (cold-start, default 7) shorten a trial run.
`;

async function optional(modulePath: string, exportName: string): Promise<(() => Promise<unknown>) | undefined> {
  if (!existsSync(new URL(modulePath.replace(/\.js$/, '.ts'), import.meta.url))) return undefined;
  const module = (await import(modulePath)) as Record<string, () => Promise<unknown>>;
  return module[exportName];
}

function positive(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${option} ${value}: a whole number of at least 1`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      out: { type: 'string' },
      merge: { type: 'string' },
      cluster: { type: 'string' },
      rounds: { type: 'string' },
      requests: { type: 'string' },
      plugins: { type: 'string' },
      'cpu-prof': { type: 'boolean' },
      pods: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(USAGE);
  const only = new Set((values.only ?? SECTIONS.join(',')).split(',') as Section[]);
  for (const s of only)
    if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}: choose from ${SECTIONS.join(', ')}`);
  // --cluster NAME: a fleet's cluster's AdmissionConfiguration, through the one resolver (an
  // unknown name fails here, naming its file and the clusters that exist).
  const cluster = values.cluster === undefined ? undefined : fleetCluster(values.cluster);
  process.env.LOG_LEVEL = 'silent';
  const results: Record<string, unknown> = {
    ...(cluster && { cluster: cluster.name }),
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
  };
  const report = (title: string, rows: Record<string, unknown>[]) =>
    process.stdout.write(`\n## ${title}\n${table(rows)}\n`);

  if (only.has('handlers')) {
    process.stderr.write('handlers: timing each plugin in-process...\n');
    results.handlers = await benchHandlers(undefined, undefined, cluster?.configFile);
    report('In-process handler vs parse floor (µs)', results.handlers as Record<string, unknown>[]);
  }
  if (only.has('cold-start')) {
    process.stderr.write('cold-start: bundling and starting fresh processes...\n');
    results.coldStart = await benchColdStart();
    report('Cold start per function', results.coldStart as Record<string, unknown>[]);
  }
  if (only.has('cost')) {
    process.stderr.write(
      'cost: a burst of reviews through each function in a fresh process, beside an empty handler...\n',
    );
    results.cost = {
      date: new Date().toISOString(),
      ...(await benchCost(positive(values.requests, '--requests', 200), positive(values.rounds, '--rounds', 3))),
    };
    report(
      'Cost per function (peak RSS, CPU per request; memory chosen from them)',
      (results.cost as { rows: Record<string, unknown>[] }).rows,
    );
    report('Store floor: one raw GetItem from Node on a kept connection', [
      { 'CPU ms/call': (results.cost as { storeCallCpuMs: number }).storeCallCpuMs },
    ]);
  }
  if (only.has('logger')) {
    process.stderr.write('logger: our request log line vs Powertools Logger...\n');
    results.logger = await benchLogger();
    report('Request log record: ours vs Powertools Logger', results.logger as Record<string, unknown>[]);
  }
  if (only.has('throughput')) {
    process.stderr.write('throughput: npm start vs the floor server under autocannon, alternating...\n');
    const throughput = await benchThroughput({ cpuProf: values['cpu-prof'] });
    results.throughput = throughput;
    report('Throughput rounds', throughput.rounds as unknown as Record<string, unknown>[]);
    report('Throughput summary', [throughput.summary]);
    if (throughput.profile) {
      const { file, self, code } = throughput.profile;
      report(`npm start's CPU profile (${file}): self time`, self as unknown as Record<string, unknown>[]);
      report("npm start's CPU profile: total time in JavaScript files", code as unknown as Record<string, unknown>[]);
    }
  }
  for (const [section, modulePath, exportName] of [
    ['cel', './cel.js', 'benchCel'],
    ['map', './mutating-admission-policy.js', 'benchMutatingAdmissionPolicy'],
    ['store', './store.js', 'benchStore'],
  ] as const) {
    if (!only.has(section)) continue;
    const run = await optional(modulePath, exportName);
    if (!run) {
      process.stderr.write(`${section}: no benchmark module yet, skipped\n`);
      continue;
    }
    process.stderr.write(`${section}: measuring...\n`);
    const figures = await run();
    results[section] = figures;
    report(
      section,
      Array.isArray(figures) ? (figures as Record<string, unknown>[]) : [figures as Record<string, unknown>],
    );
  }

  if (only.has('quota-burst')) {
    process.stderr.write(
      'quota-burst: rounds of 64 concurrent creates vs pods: 32 under 10 ms store latency, in process and through npm start...\n',
    );
    const burst = await benchQuotaBurst();
    results.quotaBurst = burst;
    const calls = (c: Record<string, number>) =>
      Object.entries(c)
        .map(([name, n]) => `${name}:${n}`)
        .join(' ');
    report(
      'Quota burst rounds in process (ms from the burst start)',
      burst.rounds.map(({ calls: c, queue, ...r }) => ({ ...r, calls: calls(c), ...queue })),
    );
    for (const [name, path] of Object.entries(burst.throughServer)) {
      report(
        `Quota burst rounds through npm start, ${name} store (ms from the burst start)`,
        path.rounds.map(({ calls: c, eventLoop, ...r }) => ({
          ...r,
          calls: calls(c),
          'event loop p99 ms': eventLoop.p99,
          'event loop max ms': eventLoop.max,
        })),
      );
      report(`Store calls per 100 ms of the last burst through npm start, ${name} store`, path.timeline as never[]);
    }
    report('Quota burst summary', [
      burst.summary,
      ...Object.values(burst.throughServer).map((p) => p.summary),
    ] as never[]);
  }

  if (only.has('flood')) {
    process.stderr.write('flood: npm start flooded while real reviews go through, in both caller modes...\n');
    results.flood = await benchFlood();
    report('Real reviews under a flood (AlwaysPullImages validate, 20 a second)', results.flood as never[]);
  }

  if (only.has('apiserver')) {
    if (!process.env.KUBEBUILDER_ASSETS && !values.only) {
      process.stderr.write('apiserver: KUBEBUILDER_ASSETS is not set, skipped (see docs/design/development.md)\n');
    } else {
      process.stderr.write('apiserver: each compiled plugin through a real kube-apiserver, every way it can run...\n');
      const measured = await benchApiserver({
        rounds: positive(values.rounds, '--rounds', APISERVER_ROUNDS),
        requests: positive(values.requests, '--requests', APISERVER_REQUESTS),
        ...(values.plugins && { plugins: values.plugins.split(',') }),
      });
      // The section carries its own date: --merge may add it to a file of an earlier run.
      results.apiserver = { date: new Date().toISOString(), ...measured };
      report(
        'Through kube-apiserver (ms; ratios to the baseline: the built-in, or no plugin)',
        measured.rows as never[],
      );
      report(
        'Targets (ratios, medians of rounds)',
        measured.targets.map((t) => ({ ...t, floor: t.floor ?? '—' })) as never[],
      );
      report('mTLS floor: a trivial handler on a kept connection', [measured.mtlsFloor]);
      // --plugins names a trial of those plugins: the quota burst is not one of them.
      if (!values.plugins) {
        process.stderr.write(
          'apiserver: 64 concurrent pod creates against pods: 32, webhook vs built-in ResourceQuota...\n',
        );
        const quotaBurst = await benchApiserverQuotaBurst(positive(values.rounds, '--rounds', APISERVER_ROUNDS));
        (results.apiserver as Record<string, unknown>).quotaBurst = quotaBurst;
        report('Quota burst through kube-apiserver (ms from the burst start, medians of rounds)', quotaBurst.rows);
        report('Quota burst through kube-apiserver: summary', [quotaBurst.summary]);
      }
    }
  }

  if (only.has('reader')) {
    if (!process.env.KUBEBUILDER_ASSETS && !values.only) {
      process.stderr.write('reader: KUBEBUILDER_ASSETS is not set, skipped (see docs/design/development.md)\n');
    } else {
      process.stderr.write('reader: the cluster reader against a real kube-apiserver at growing sizes...\n');
      const sizes = values.pods?.split(',').map((n) => positive(n, '--pods', 0));
      const measured = await benchReader(sizes, positive(values.rounds, '--rounds', 3));
      // The section carries its own date: --merge may add it to a file of an earlier run.
      results.reader = { date: new Date().toISOString(), ...measured };
      report('Cluster reader, read from scratch (memory chosen from the peak RSS)', measured.rows as never[]);
      report('Cluster reader: growth', [
        { 'peak RSS MB per 1,000 pods': measured.rssMbPer1000Pods, 'deployed MB': measured.deployedMb },
      ]);
    }
  }

  const out = values.merge ?? values.out ?? '.local/bench/results.json';
  mkdirSync(out.substring(0, out.lastIndexOf('/')) || '.', { recursive: true });
  // --merge FILE: the sections measured now replace theirs in FILE; the others stay as measured.
  const { date, node, cpus: cpuCount, cpuModel, cluster: benchedCluster, ...measured } = results;
  void benchedCluster;
  void date;
  void node;
  void cpuCount;
  void cpuModel;
  const written = values.merge ? { ...JSON.parse(readFileSync(out, 'utf8')), ...measured } : results;
  writeFileSync(out, `${JSON.stringify(written, null, 2)}\n`);
  process.stdout.write(`\nwritten to ${out}\n`);
  // The committed run is what the documentation quotes: its performance page and chart follow it.
  if (resolve(out) === resolve(ROOT, BENCH_RESULTS))
    docsCommand([], { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
