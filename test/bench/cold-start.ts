// Cold start per function, built as serverless.yml builds it (esbuild, ESM, minified, nothing
// external, started from the packaged configuration): the bundle's size (from its metafile) and
// what of it is the AWS SDK and the YAML parser (none, since packaging parses), and a fresh Node process that loads it and answers one request,
// paired run by run with a bare `node -e 0` so drift on a shared machine hits both alike.
// Stateful functions answer against DynamoDB Local, so their first answer includes the first
// store call (connection setup included), twice: as packaged (the small signed-HTTP client of
// lib/state/dynamodb-http.ts), and with the AWS SDK's client bundled in its place (sdk-client.ts).
// Their floor adds a bare node process that sends one store call with Node's http and nothing
// else: the target is the function within bare node plus that round trip.
// Two more floors say what of a start no handler code could save: the same driver loading an empty
// CommonJS handler, and loading a handler of the bundle's own bytes that runs none of them (what
// reading and compiling that much code costs). One more start per row runs under `--cpu-prof`
// (written to .local/bench/profiles/): its heaviest functions by self time and the built-in
// modules it loaded go into the row, so a start above its target names what it pays for.
import { usesStore } from '../../lib/admission/plugin.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type { Plugin } from 'esbuild';
import { build } from 'esbuild';
import { plugins } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { createTable } from '../support/dynamodb.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { packagePluginSet, writePackagedConfiguration } from '../../infra/serverless/packaged-config.js';
import { gatewayEvent } from '../support/gateway-event.js';
import { entriesText, readProfile, summarizeProfile } from './cpu-profile.js';
import { sampleReviewFor } from './samples.js';
import { median, round, spread } from './stats.js';

export const OUT = '.local/bench/bundles';
const PROFILES = '.local/bench/profiles';
/** serverless.yml's esbuild plugins, so the bench builds what packaging builds. */
const packagingPlugins = createRequire(import.meta.url)('../../infra/serverless/esbuild-plugins.cjs') as Plugin[];
/** Builds the bench's SDK variant: lib/state/index.ts gets test/bench/sdk-client.ts as its client. */
const sdkClient: Plugin = {
  name: 'sdk-client',
  setup(build) {
    build.onResolve({ filter: /^\.\/client\.js$/ }, (args) =>
      args.importer.endsWith(join('lib', 'state', 'index.ts'))
        ? { path: resolve('test/bench/sdk-client.ts') }
        : undefined,
    );
  },
};

interface Run {
  readonly wall: number;
  readonly cpu: number;
  readonly load?: number;
  readonly answer?: number;
  readonly status?: number;
}

/** One fresh process: wall time from outside, CPU time (user + system) from inside. */
function run(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): Run {
  const start = performance.now();
  const output = execFileSync(process.execPath, args, { env, cwd: options.cwd ?? OUT, encoding: 'utf8' });
  const wall = performance.now() - start;
  // The function's own log line (LOG_LEVEL=info, as deployed) comes first; the figures last.
  const last = output.trim().split('\n').pop() ?? '';
  return { wall, ...(JSON.parse(last) as Omit<Run, 'wall'>) };
}

const BARE = `const u=process.cpuUsage();process.stdout.write(JSON.stringify({cpu:(u.user+u.system)/1000}))`;
/**
 * Bare node importing an empty ES module: Node's ESM loader (resolve, load, fs/promises) is paid
 * by any .mjs handler, and in Lambda by the runtime itself, which is ESM, before ours loads.
 */
const EMPTY_ESM = 'empty.mjs';
const BARE_ESM = `import('./${EMPTY_ESM}').then(()=>{const u=process.cpuUsage();process.stdout.write(JSON.stringify({cpu:(u.user+u.system)/1000}))})`;
/** The empty handler's floor: the driver loading a CommonJS handler that does nothing. */
const EMPTY_HANDLER = 'empty-handler.cjs';
const EMPTY_HANDLER_SOURCE = "exports.handler = async () => ({ statusCode: 200, body: '{}' });\n";
/**
 * The size floor: a handler carrying the bundle's bytes in a function it never calls. Node reads
 * and compiles them (V8 pre-parses the function) and runs none: what a bundle of that size costs
 * before any of its code runs.
 */
function sizeFloor(bundlePath: string): string {
  const floor = bundlePath.replace(/\.c?js$/, '.size-floor.cjs');
  writeFileSync(floor, `function unused() {\n${readFileSync(bundlePath, 'utf8')}\n}\n${EMPTY_HANDLER_SOURCE}`);
  return floor;
}
const driver = (bundle: string, event: string) =>
  `const t0=performance.now();${bundle.endsWith('.cjs') ? 'Promise.resolve(require' : 'import'}('${bundle.startsWith('/') ? '' : './'}${bundle}')${bundle.endsWith('.cjs') ? ')' : ''}.then(({handler})=>{const t1=performance.now();const e=JSON.parse(require('fs').readFileSync('${event.startsWith('/') ? '' : './'}${event}','utf8'));return handler(e,{getRemainingTimeInMillis:()=>1e4}).then(r=>{const t2=performance.now();const u=process.cpuUsage();process.stdout.write(JSON.stringify({load:t1-t0,answer:t2-t1,status:r.statusCode,cpu:(u.user+u.system)/1000}))})})`;

/**
 * One raw GetItem to DynamoDB Local as a script's source: `http.request`'s options (add more after
 * them, an agent say) and the body, with a placeholder signature (DynamoDB Local checks none).
 */
export function rawGetItem(endpoint: string, table: string): { options: string; body: string } {
  const url = new URL(endpoint);
  const body = JSON.stringify({
    TableName: table,
    Key: { pk: { S: 'floor' }, sk: { S: 'floor' } },
    ConsistentRead: true,
  });
  const headers = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDB_20120810.GetItem',
    authorization:
      'AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
  };
  return {
    options: `host:'${url.hostname}',port:${url.port},method:'POST',path:'/',headers:${JSON.stringify(headers)}`,
    body: JSON.stringify(body),
  };
}

/**
 * The store floor: bare node sending one GetItem to DynamoDB Local with Node's http and nothing
 * else: a process's one store round trip.
 */
function storeFloor(endpoint: string, table: string): string {
  const { options, body } = rawGetItem(endpoint, table);
  return `const r=require('http').request({${options}},s=>{s.resume();s.on('end',()=>{const u=process.cpuUsage();process.stdout.write(JSON.stringify({status:s.statusCode,cpu:(u.user+u.system)/1000}))})});r.end(${body})`;
}

export async function bundle(
  plugin: AnyAdmissionPlugin,
  tag: string,
  extra: Plugin[],
  format: 'esm' | 'cjs' = 'cjs',
): Promise<{ file: string; bytes: number; sdkBytes: number; yamlBytes: number }> {
  const file = `${plugin.metadata.name}.${tag}.${format === 'esm' ? 'mjs' : 'cjs'}`;
  const result = await build({
    entryPoints: [`functions/${plugin.metadata.name}/handler.ts`],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node22',
    format,
    mainFields: ['module', 'main'],
    ...(format === 'cjs' && { define: { 'import.meta.url': '__filename' } }),
    ...(format === 'esm' && {
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
    }),
    plugins: [...extra, ...packagingPlugins],
    outfile: join(OUT, file),
    metafile: true,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0];
  const bytesOf = (match: (path: string) => boolean) =>
    Object.entries(output.inputs)
      .filter(([path]) => match(path))
      .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
  return {
    file,
    bytes: output.bytes,
    sdkBytes: bytesOf((p) => p.includes('@aws-sdk/') || p.includes('@smithy/')),
    yamlBytes: bytesOf((p) => p.includes('node_modules/yaml/')),
  };
}

/**
 * `runs` rounds of (bare node, bare node importing an empty ES module, the driver with an empty
 * handler, the driver with the size floor, [bare node with one store call,] the function),
 * alternating; medians and the ratios' spreads. `bundle` and `event` are paths the driver loads
 * (relative to OUT, or absolute); `cwd` is the function's directory.
 */
function pairs(bundle: string, event: string, env: NodeJS.ProcessEnv, runs: number, store?: string, cwd?: string) {
  const args = ['--input-type=commonjs', '-e', driver(bundle, event)];
  const emptyArgs = ['--input-type=commonjs', '-e', driver(EMPTY_HANDLER, event)];
  // An ES module's imports cannot sit in a function: the size floor is the CommonJS bundles'.
  const sizeArgs = bundle.endsWith('.cjs')
    ? ['--input-type=commonjs', '-e', driver(sizeFloor(resolve(OUT, bundle)), event)]
    : undefined;
  run(['-e', BARE], env);
  run(['-e', BARE_ESM], env);
  run(emptyArgs, env);
  if (sizeArgs) run(sizeArgs, env);
  if (store) run(['-e', store], env);
  run(args, env, { cwd }); // warm the file cache
  const samples = Array.from({ length: runs }, () => ({
    bare: run(['-e', BARE], env),
    esm: run(['-e', BARE_ESM], env),
    empty: run(emptyArgs, env),
    size: sizeArgs ? run(sizeArgs, env) : undefined,
    store: store ? run(['-e', store], env) : undefined,
    fn: run(args, env, { cwd }),
  }));
  // Stateful: the target is 2× bare node plus one store round trip (the store floor's time over
  // bare node's), that is bare node plus the store floor; at most 1 meets it.
  const target = (pick: (r: Run) => number) =>
    spread(samples.map((s) => pick(s.fn) / (pick(s.bare) + (s.store ? pick(s.store) : Number.NaN))));
  const storeFigures = store
    ? (() => {
        const wall = target((r) => r.wall);
        const cpu = target((r) => r.cpu);
        return {
          'store floor ms': round(median(samples.map((s) => s.store?.wall ?? 0)), 1),
          'store floor cpu ms': round(median(samples.map((s) => s.store?.cpu ?? 0)), 1),
          'vs target (wall)': round(wall.median, 2),
          'vs target wall spread': `${round(wall.min, 2)}–${round(wall.max, 2)}`,
          'vs target (cpu)': round(cpu.median, 2),
          'vs target cpu spread': `${round(cpu.min, 2)}–${round(cpu.max, 2)}`,
        };
      })()
    : {};
  const wallRatio = spread(samples.map((s) => s.fn.wall / s.bare.wall));
  const cpuRatio = spread(samples.map((s) => s.fn.cpu / s.bare.cpu));
  const esmCpuRatio = spread(samples.map((s) => s.fn.cpu / s.esm.cpu));
  const emptyCpuRatio = spread(samples.map((s) => s.empty.cpu / s.bare.cpu));
  const sizeCpuRatio = sizeArgs && spread(samples.map((s) => (s.size?.cpu ?? Number.NaN) / s.bare.cpu));
  return {
    status: samples[0].fn.status,
    'load ms': round(median(samples.map((s) => s.fn.load ?? 0)), 1),
    'first answer ms': round(median(samples.map((s) => s.fn.answer ?? 0)), 1),
    'process ms': round(median(samples.map((s) => s.fn.wall)), 1),
    'bare node ms': round(median(samples.map((s) => s.bare.wall)), 1),
    'wall ratio': round(wallRatio.median, 2),
    'wall spread': `${round(wallRatio.min, 2)}–${round(wallRatio.max, 2)}`,
    'cpu ratio': round(cpuRatio.median, 2),
    'cpu spread': `${round(cpuRatio.min, 2)}–${round(cpuRatio.max, 2)}`,
    'cpu ms': round(median(samples.map((s) => s.fn.cpu)), 1),
    'bare cpu ms': round(median(samples.map((s) => s.bare.cpu)), 1),
    'empty ESM cpu ms': round(median(samples.map((s) => s.esm.cpu)), 1),
    'cpu ratio vs empty ESM': round(esmCpuRatio.median, 2),
    'vs ESM spread': `${round(esmCpuRatio.min, 2)}–${round(esmCpuRatio.max, 2)}`,
    // The floors beneath the function's own code: the driver with an empty handler, and with one
    // of the bundle's size that runs none of it (both against bare node, CPU).
    'empty handler cpu ms': round(median(samples.map((s) => s.empty.cpu)), 1),
    'empty handler cpu ratio': round(emptyCpuRatio.median, 2),
    ...(sizeCpuRatio && {
      'size floor cpu ms': round(median(samples.map((s) => s.size?.cpu ?? Number.NaN)), 1),
      'size floor cpu ratio': round(sizeCpuRatio.median, 2),
      'size floor cpu spread': `${round(sizeCpuRatio.min, 2)}–${round(sizeCpuRatio.max, 2)}`,
    }),
    ...storeFigures,
  };
}

/**
 * One more start of the function under `--cpu-prof` (100 µs samples), written to PROFILES as
 * `<name>.cpuprofile`: its heaviest functions by self time and the built-in modules it loaded.
 */
function profiled(name: string, bundle: string, event: string, env: NodeJS.ProcessEnv, cwd?: string) {
  const dir = resolve(PROFILES);
  mkdirSync(dir, { recursive: true });
  const file = `${name}.cpuprofile`;
  run(
    [
      '--cpu-prof',
      '--cpu-prof-interval=100',
      `--cpu-prof-dir=${dir}`,
      `--cpu-prof-name=${file}`,
      '--input-type=commonjs',
      '-e',
      driver(bundle, event),
    ],
    env,
    { cwd },
  );
  const summary = summarizeProfile(readProfile(join(dir, file)), { top: 6 });
  return {
    profile: join(PROFILES, file),
    'profile cpu ms': summary['busy ms'],
    'profile top self': entriesText(summary.self),
    'profile built-ins': entriesText(summary.builtins),
  };
}

/** serverless's function key: `always-pull-images` → `alwaysPullImages`. */
const functionKey = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

interface PackagedFunction {
  readonly zip: string;
  readonly handlerFile: string;
  /** The environment serverless.yml gives the function (CloudFormation's, references resolved). */
  readonly environment: Record<string, string>;
}

/**
 * `npm run package`, as an operator runs it: the zips and the template's environment of every
 * function it packaged (the default configuration's active plugins), by plugin name.
 */
function packageFunctions(stateTable: string): Map<string, PackagedFunction> {
  execFileSync('npx', ['sls', 'package', '--stage', 'dev'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const template = JSON.parse(readFileSync('.serverless/cloudformation-template-update-stack.json', 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
  };
  const packaged = new Map<string, PackagedFunction>();
  for (const plugin of plugins) {
    const key = functionKey(plugin.metadata.name);
    const resource = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && String(r.Properties.Code?.S3Key ?? '').endsWith(`/${key}.zip`),
    );
    if (!resource) continue;
    const variables = (resource.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
    const environment = Object.fromEntries(
      Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : k === 'STATE_TABLE' ? stateTable : '']),
    );
    const handler = String(resource.Properties.Handler);
    packaged.set(plugin.metadata.name, {
      zip: resolve('.serverless', `${key}.zip`),
      handlerFile: `${handler.slice(0, handler.lastIndexOf('.'))}.cjs`,
      environment,
    });
  }
  return packaged;
}

/**
 * Cold starts of the packaged zips: each unzipped, started by a fresh Node with the environment
 * serverless.yml sets and the variables Lambda adds (a function name, so metrics are EMF as
 * deployed; region and placeholder credentials), answering its first review from an API Gateway
 * event. The function's own log line is on (LOG_LEVEL=info, as deployed).
 */
function packagedColdStarts(
  runs: number,
  db: { endpoint: string },
  table: string,
  eventFile: (plugin: AnyAdmissionPlugin) => string,
): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  const packaged = packageFunctions(table);
  const root = resolve(OUT, 'packaged');
  rmSync(root, { recursive: true, force: true });
  for (const plugin of plugins) {
    const name = plugin.metadata.name;
    const fn = packaged.get(name);
    if (!fn) continue;
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    execFileSync('unzip', ['-q', fn.zip, '-d', dir]);
    const stateful = usesStore(plugin.metadata);
    const env = {
      PATH: process.env.PATH,
      ...fn.environment,
      AWS_LAMBDA_FUNCTION_NAME: `serverless-admission-dev-${functionKey(name)}`,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      ...(stateful && { DYNAMODB_ENDPOINT: db.endpoint }),
    };
    const handlerPath = join(dir, fn.handlerFile);
    const eventPath = resolve(OUT, eventFile(plugin));
    const figures = pairs(
      handlerPath,
      eventPath,
      env,
      runs,
      stateful ? storeFloor(db.endpoint, table) : undefined,
      dir,
    );
    rows.push({
      function: name,
      variant: 'packaged zip',
      'bundle KB': round(statSync(handlerPath).size / 1024, 1),
      'SDK KB': '',
      'yaml KB': '',
      ...figures,
      ...profiled(`${name}.packaged-zip`, handlerPath, eventPath, env, dir),
    });
  }
  return rows;
}

export async function benchColdStart(runs = Number(process.env.BENCH_RUNS ?? 7)): Promise<Record<string, unknown>[]> {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, EMPTY_ESM), 'export {};\n');
  writeFileSync(join(OUT, EMPTY_HANDLER), EMPTY_HANDLER_SOURCE);
  // As packaged (infra/serverless/packaged-config.ts): the functions start from the parsed JSON.
  const config = resolve(
    writePackagedConfiguration(packagePluginSet(plugins).packaged, join(OUT, 'admission-configuration.json')),
  );
  const db = await startEmbeddedDynamoDb({});
  const table = 'bench-cold-start';
  await createTable(db.endpoint, table);
  const base = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'silent',
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: db.endpoint,
    STATE_TABLE: table,
  };
  const rows: Record<string, unknown>[] = [];
  try {
    for (const plugin of plugins) {
      const name = plugin.metadata.name;
      const stateful = usesStore(plugin.metadata);
      const phase = plugin.metadata.validating ? 'validate' : 'mutate';
      const eventFile = `${name}.event.json`;
      writeFileSync(
        join(OUT, eventFile),
        JSON.stringify(gatewayEvent(`/${name}/${phase}`, sampleReviewFor(plugin).body)),
      );
      // The bench's own build with packaging's options (CommonJS, as serverless.yml packages); a
      // stateless function's also as ESM (what of its start Node's ESM loader would cost), a
      // stateful one's with the SDK's client.
      const variants: [string, Plugin[], 'esm' | 'cjs'][] = stateful
        ? [
            ['bench build', [], 'cjs'],
            ['AWS SDK client', [sdkClient], 'cjs'],
          ]
        : [
            ['bench build', [], 'cjs'],
            ['bench build, ESM', [], 'esm'],
          ];
      for (const [variant, extra, format] of variants) {
        const built = await bundle(plugin, variant.replace(/\W+/g, '-').toLowerCase(), extra, format);
        const env = { ...base, ADMISSION_CONFIG: config };
        const figures = pairs(built.file, eventFile, env, runs, stateful ? storeFloor(db.endpoint, table) : undefined);
        rows.push({
          function: name,
          variant,
          'bundle KB': round(built.bytes / 1024, 1),
          'SDK KB': round(built.sdkBytes / 1024, 1),
          'yaml KB': round(built.yamlBytes / 1024, 1),
          ...figures,
          ...profiled(built.file.replace(/\.c?m?js$/, ''), built.file, eventFile, env),
        });
      }
    }
    rows.push(...packagedColdStarts(runs, db, table, (plugin) => `${plugin.metadata.name}.event.json`));
  } finally {
    await db.stop();
  }
  return rows;
}
