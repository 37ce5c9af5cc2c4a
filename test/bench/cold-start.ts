// Cold start per function: the esbuild bundle (size from its metafile, and whether the AWS SDK is
// inside), and the time for a fresh Node process to load it and answer one request, next to a
// bare `node -e 0`.
import { usesStore } from '../../lib/admission/plugin.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Plugin } from 'esbuild';
import { build } from 'esbuild';
import { plugins } from '../../functions/index.js';
import { gatewayEvent } from '../support/gateway-event.js';
import { sampleReviewFor } from './samples.js';
import { distribution, round } from './stats.js';

const OUT = '.local/bench/bundles';

function wallMs(args: string[], env: NodeJS.ProcessEnv): { wall: number; output: string } {
  const start = performance.now();
  const output = execFileSync(process.execPath, args, { env, cwd: OUT, encoding: 'utf8' });
  return { wall: performance.now() - start, output };
}

export async function benchColdStart(runs = 7): Promise<Record<string, unknown>[]> {
  mkdirSync(OUT, { recursive: true });
  const env = { PATH: process.env.PATH, LOG_LEVEL: 'silent', ADMISSION_CONFIG: resolve('config/admission.yaml'), AWS_REGION: 'local' };
  const bare = distribution(Array.from({ length: runs }, () => wallMs(['-e', '0'], env).wall));
  const rows: Record<string, unknown>[] = [];
  for (const plugin of plugins) {
    const name = plugin.metadata.name;
    const outfile = join(OUT, `${name}.cjs`);
    const result = await build({
      entryPoints: [`functions/${name}/handler.ts`],
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile,
      metafile: true,
      logLevel: 'silent',
    });
    const output = Object.values(result.metafile.outputs)[0];
    const sdkBytes = Object.entries(output.inputs)
      .filter(([path]) => path.includes('@aws-sdk/') || path.includes('@smithy/'))
      .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
    const phase = plugin.metadata.validating ? 'validate' : 'mutate';
    const event = gatewayEvent(`/${name}/${phase}`, sampleReviewFor(plugin).body);
    const eventFile = join(OUT, `${name}.event.json`);
    writeFileSync(eventFile, JSON.stringify(event));
    const driver = `const t0=performance.now();const {handler}=require('./${name}.cjs');const t1=performance.now();const e=require('./${name}.event.json');handler(e,{getRemainingTimeInMillis:()=>1e4}).then(r=>{const t2=performance.now();process.stdout.write(JSON.stringify({load:t1-t0,invoke:t2-t1,status:r.statusCode}))})`;
    if (usesStore(plugin.metadata)) {
      rows.push({ function: name, 'bundle KB': round(output.bytes / 1024, 1), 'SDK KB': round(sdkBytes / 1024, 1), 'load ms': '-', 'first answer ms': '-', 'process ms': '-', 'bare node ms': bare.p50, ratio: 'needs the store' });
      continue;
    }
    const samples = Array.from({ length: runs }, () => {
      const { wall, output: text } = wallMs(['-e', driver], env);
      return { wall, ...(JSON.parse(text) as { load: number; invoke: number; status: number }) };
    });
    const status = samples[0].status;
    rows.push({
      function: name,
      'bundle KB': round(output.bytes / 1024, 1),
      'SDK KB': round(sdkBytes / 1024, 1),
      'load ms': distribution(samples.map((s) => s.load)).p50,
      'first answer ms': distribution(samples.map((s) => s.invoke)).p50,
      'process ms': distribution(samples.map((s) => s.wall)).p50,
      'bare node ms': bare.p50,
      ratio: status === 200 ? round(distribution(samples.map((s) => s.wall)).p50 / bare.p50, 2) : `HTTP ${status}`,
    });
  }
  return rows;
}

/** The commit before lib/metrics: the "without metrics" bundle is built from its tree. */
const BEFORE_METRICS = '372a7b6';

/** Bundles lib/metrics/index.ts with test/bench/powertools-emf-module.ts in place of ./emf.js. */
const powertoolsEmf: Plugin = {
  name: 'powertools-emf',
  setup(b) {
    b.onResolve({ filter: /^\.\/emf\.js$/ }, (args) =>
      args.importer.endsWith(join('lib', 'metrics', 'index.ts')) ? { path: resolve('test/bench/powertools-emf-module.ts') } : undefined,
    );
  },
};

/**
 * One stateless function's cold start with and without metrics, as Lambda runs it (EMF mode): its
 * bundle before lib/metrics existed, with lib/metrics' EMF, and with EMF through Powertools.
 * Fresh processes in alternating rounds, so drift hits all three alike.
 */
export async function benchColdStartMetrics(name = 'always-pull-images', runs = 21): Promise<Record<string, unknown>[]> {
  mkdirSync(OUT, { recursive: true });
  const base = resolve('.local/bench/before-metrics');
  if (!existsSync(join(base, 'functions'))) {
    rmSync(base, { recursive: true, force: true });
    mkdirSync(base, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${BEFORE_METRICS} | tar -x -C ${JSON.stringify(base)}`]);
    symlinkSync(resolve('node_modules'), join(base, 'node_modules'));
  }
  const common = { bundle: true, minify: true, platform: 'node', target: 'node20', format: 'cjs', metafile: true, logLevel: 'silent' } as const;
  const variants = [
    { variant: 'without metrics', entry: join(base, `functions/${name}/handler.ts`), plugins: [] as Plugin[] },
    { variant: 'lib/metrics EMF', entry: `functions/${name}/handler.ts`, plugins: [] as Plugin[] },
    { variant: 'Powertools EMF', entry: `functions/${name}/handler.ts`, plugins: [powertoolsEmf] },
  ];
  // Logs on, as deployed: the first write to stdout sets the stream up, which every variant pays.
  const env = { PATH: process.env.PATH, LOG_LEVEL: 'info', ADMISSION_CONFIG: resolve('config/admission.yaml'), AWS_REGION: 'local', AWS_LAMBDA_FUNCTION_NAME: name };
  const { metadata } = plugins.find((p) => p.metadata.name === name)!;
  const phase = metadata.validating ? 'validate' : 'mutate';
  writeFileSync(join(OUT, 'metrics-event.json'), JSON.stringify(gatewayEvent(`/${name}/${phase}`, sampleReviewFor(plugins.find((p) => p.metadata.name === name)!).body)));
  const built = [];
  for (const [i, v] of variants.entries()) {
    const outfile = join(OUT, `metrics-variant-${i}.cjs`);
    const result = await build({ ...common, entryPoints: [v.entry], outfile, plugins: v.plugins });
    const bytes = Object.values(result.metafile.outputs)[0].bytes;
    // The last stdout line is the driver's; an EMF line may come before it.
    const driver = `const t0=performance.now();const {handler}=require('./metrics-variant-${i}.cjs');const t1=performance.now();const e=require('./metrics-event.json');handler(e,{awsRequestId:'r',getRemainingTimeInMillis:()=>1e4}).then(r=>{const t2=performance.now();const c=process.cpuUsage();process.stdout.write('\\n'+JSON.stringify({load:t1-t0,invoke:t2-t1,cpu:(c.user+c.system)/1000,status:r.statusCode}))})`;
    built.push({ ...v, bytes, driver, samples: [] as { wall: number; load: number; invoke: number; cpu: number; status: number; emf: boolean }[] });
  }
  for (let r = 0; r < runs; r++) {
    for (const v of built) {
      const { wall, output } = wallMs(['-e', v.driver], env);
      const lines = output.split('\n').filter(Boolean);
      v.samples.push({ wall, ...(JSON.parse(lines[lines.length - 1]) as { load: number; invoke: number; cpu: number; status: number }), emf: lines.some((l) => l.startsWith('{"_aws"')) });
    }
  }
  const baseline = distribution(built[0].samples.map((s) => s.wall)).p50;
  const baselineCpu = distribution(built[0].samples.map((s) => s.cpu)).p50;
  return built.map((v) => {
    const wall = distribution(v.samples.map((s) => s.wall)).p50;
    const cpu = distribution(v.samples.map((s) => s.cpu)).p50;
    return {
      function: name,
      variant: v.variant,
      'bundle KB': round(v.bytes / 1024, 1),
      'load ms': distribution(v.samples.map((s) => s.load)).p50,
      'first answer ms': distribution(v.samples.map((s) => s.invoke)).p50,
      'process ms': wall,
      'vs without ms': round(wall - baseline, 2),
      // CPU time of the whole process (node's start included): steadier than wall time on a busy machine.
      'process CPU ms': cpu,
      'CPU vs without ms': round(cpu - baselineCpu, 2),
      'EMF line written': v.samples.every((s) => s.emf) ? 'yes' : v.samples.some((s) => s.emf) ? 'some runs' : 'no',
      status: v.samples[0].status,
    };
  });
}
