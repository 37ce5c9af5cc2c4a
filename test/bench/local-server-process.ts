// `npm start` as a child process for the benches that measure the path a request takes: the same
// entry (infra/local/start.ts through tsx's loader, which is what `tsx` runs), its own port, the
// store at `endpoint`, the request log on as `npm start` has it, into a file as a user's redirect
// would (Node writes to a pipe synchronously: a slow reader would time the bench, not the server).
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface LocalServerProcess {
  readonly url: string;
  readonly pid: number;
  /** The client's identity, as `npm start` wrote it into its PKI directory. */
  readonly identity: { readonly caPem: string; readonly certPem: string; readonly keyPem: string };
  /** User and system CPU seconds the server process has used so far (Linux /proc). */
  cpuSeconds(): number;
  /**
   * The event loop's delay since the last call (ms), with probeEventLoop; the first call starts
   * the count. Bounded: 50 polls of 20 ms for the server to answer the signal.
   */
  eventLoopDelay(): Promise<{ p50: number; p99: number; max: number }>;
  stop(): Promise<void>;
}

const TICKS_PER_SECOND = 100;

/** utime + stime of a process from /proc/<pid>/stat, in seconds. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

export async function startLocalServerProcess(options: {
  /** DYNAMODB_ENDPOINT: the store (or a proxy in front of it). */
  readonly endpoint: string;
  /** Where the request log and the server's notes go. */
  readonly logDir: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Extra Node flags (--cpu-prof), given after tsx's loader. */
  readonly nodeArgs?: readonly string[];
  /** Loads event-loop-probe.ts into the server: `eventLoopDelay()` reads it. */
  readonly probeEventLoop?: boolean;
}): Promise<LocalServerProcess> {
  mkdirSync(options.logDir, { recursive: true });
  const outFile = join(options.logDir, 'server.out');
  const errFile = join(options.logDir, 'server.err');
  const probeFile = join(options.logDir, 'event-loop.json');
  const out = openSync(outFile, 'w');
  const err = openSync(errFile, 'w');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      ...(options.probeEventLoop ? ['--import', './test/bench/event-loop-probe.ts'] : []),
      ...(options.nodeArgs ?? []),
      'infra/local/start.ts',
      '--port',
      '0',
    ],
    {
      stdio: ['ignore', out, err],
      env: {
        ...process.env,
        LOG_LEVEL: '',
        ...options.env,
        DYNAMODB_ENDPOINT: options.endpoint,
        EVENT_LOOP_PROBE_FILE: probeFile,
      },
    },
  );
  closeSync(out);
  closeSync(err);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`npm start exited (${code ?? signal}): ${readFileSync(errFile, 'utf8').slice(-2000)}`)),
    ),
  );
  exited.catch(() => undefined);
  const ready = (async () => {
    // Bounded: 600 polls of 100 ms, however slow a busy machine starts tsx.
    for (let i = 0; i < 600; i++) {
      const line = readFileSync(outFile, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('ready: '));
      const url = line?.match(/ on (https:\/\/\S+) /)?.[1];
      if (url) return url;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('npm start did not print its ready line within 60 s');
  })();
  let url: string;
  try {
    url = await Promise.race([ready, exited]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const pki = '.local/pki';
  const read = (file: string) => readFileSync(join(pki, file), 'utf8');
  return {
    url,
    pid: child.pid ?? 0,
    identity: { caPem: read('ca.crt'), certPem: read('client.crt'), keyPem: read('client.key') },
    cpuSeconds: () => processCpuSeconds(child.pid ?? 0),
    eventLoopDelay: async () => {
      // Without the probe, SIGUSR2's default action would end the server.
      if (!options.probeEventLoop) throw new Error('the server was started without probeEventLoop');
      rmSync(probeFile, { force: true });
      child.kill('SIGUSR2');
      for (let i = 0; i < 50 && !existsSync(probeFile); i++) await new Promise((r) => setTimeout(r, 20));
      // The file may be seen before its bytes are: read until it parses.
      for (let i = 0; i < 50; i++) {
        try {
          return JSON.parse(readFileSync(probeFile, 'utf8')) as { p50: number; p99: number; max: number };
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      throw new Error('the server wrote no event-loop figures');
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
