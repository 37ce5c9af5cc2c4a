// Cold start per function: the esbuild bundle (size from its metafile, and whether the AWS SDK is
// inside), and the time for a fresh Node process to load it and answer one request, next to a
// bare `node -e 0`.
import { usesStore } from '../../lib/admission/plugin.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
