// Issue 17 asked whether Powertools Logger, the maintained logger for Lambda, should write the
// request log. Measured here: the cost of one request's record, our logRecord (lib/http/log)
// against Powertools Logger's `info` with the same fields, both writing synchronously to
// /dev/null, in alternating rounds; and what each adds to a bundle (esbuild, minified, as
// serverless.yml builds). Figures, not assertions.
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { Console } from 'node:console';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Logger } from '@aws-lambda-powertools/logger';
import { build } from 'esbuild';
import { logRecord, setLogSink } from '../../lib/http/log.js';
import { round, timeEach } from './stats.js';

const OUT = '.local/bench/logger';

/** A refused pod's request record, as lib/http/request-log writes it. */
const record = {
  level: 'info',
  plugin: 'always-pull-images',
  path: '/always-pull-images/validate',
  statusCode: 200,
  requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  coldStart: false,
  timeout: '10s',
  uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
  operation: 'CREATE',
  resource: 'pods',
  namespace: 'team-a',
  name: 'web-7d4b9c',
  dryRun: false,
  answer: { allowed: false, patched: false, warned: false, audited: false, code: 403 },
  caller: 'kube-apiserver-admission-client',
  latencyMs: 0.412,
};

async function bundleBytes(name: string, source: string): Promise<number> {
  const result = await build({
    stdin: { contents: source, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    outfile: join(OUT, `${name}.mjs`),
    metafile: true,
    logLevel: 'silent',
  });
  return Object.values(result.metafile.outputs)[0].bytes;
}

export async function benchLogger(iterations = 5000, rounds = 5): Promise<Record<string, unknown>[]> {
  mkdirSync(OUT, { recursive: true });
  const devNull = openSync('/dev/null', 'w');
  const sink = new Writable({
    write(chunk, _encoding, done) {
      writeSync(devNull, chunk);
      done();
    },
  });
  const powertools = new Logger({ serviceName: 'serverless-admission', logLevel: 'INFO' });
  // Its Console writes to process.stdout; point it at the same /dev/null, synchronously.
  (powertools as unknown as { console: Console }).console = new Console({ stdout: sink, stderr: sink });
  const { level: _level, ...fields } = record;
  setLogSink((line) => void writeSync(devNull, `${line}\n`));
  const ours: number[] = [];
  const theirs: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      ours.push((await timeEach(() => logRecord(record), iterations)).p50);
      theirs.push((await timeEach(() => powertools.info('admission request', fields), iterations)).p50);
    }
  } finally {
    setLogSink(undefined);
    closeSync(devNull);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ourBytes = await bundleBytes(
    'ours',
    "import { logRecord } from './lib/http/log.ts'; logRecord({ level: 'info' });",
  );
  const theirBytes = await bundleBytes(
    'powertools',
    "import { Logger } from '@aws-lambda-powertools/logger'; new Logger().info('x');",
  );
  return [
    {
      logger: 'lib/http/log (ours)',
      'p50 µs per record': round(median(ours)),
      'round p50s µs': ours.map((x) => round(x, 2)).join(' '),
      'bundle KB': round(ourBytes / 1024, 1),
    },
    {
      logger: 'Powertools Logger 2.36.0',
      'p50 µs per record': round(median(theirs)),
      'round p50s µs': theirs.map((x) => round(x, 2)).join(' '),
      'bundle KB': round(theirBytes / 1024, 1),
    },
  ];
}
