// A checkout as a reader has it, for running the documentation's commands: a directory with the
// project's files (infra/, config/ and serverless.yml copied, since commands write under config/ and a command's
// own file must not be a symlink for it to know it is the main module; the rest linked), its own
// HOME, and `npm start` running in it on DynamoDB Local. One per test file, shared by every block.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { stopWithThisProcess } from '../../../infra/local/guard.js';
import { ROOT } from './cli.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
// serverless.yml: the serverless CLI does not take a linked one for its service file.
const COPIED = new Set(['infra', 'config', 'serverless.yml']);
/** A reader's own files, git-ignored: a sandbox starts without them. */
const OWN = new Set(['local', 'cluster', 'rotate', 'dist', 'coverage', 'report.json']);
/** What a reader's shell would not have set: the suite's own environment. */
const NOT_A_READERS = /^(ADMISSION_CONFIG|DYNAMODB_ENDPOINT|STATE_TABLE|VITEST.*|TEST|NODE_ENV|.*UNKNOWN_NAMESPACE)$/;

/** The port every page shows; the sandbox's server listens elsewhere, and commands are pointed there. */
export const DOCUMENTED_ADDRESS = '127.0.0.1:8443';

export interface RunResult {
  readonly code: number;
  /** stdout and stderr as a terminal shows them, the port shown as the documented one. */
  readonly output: string;
}

export interface Sandbox {
  readonly dir: string;
  /** What `npm start` printed on stdout, the port shown as the documented one. */
  readonly serverStdout: () => string;
  /** `running`, or how the server ended and the end of its stderr: for a failing block's message. */
  readonly serverState: () => string;
  run(script: string): Promise<RunResult>;
  close(): Promise<void>;
}

function readersEnvironment(dir: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !NOT_A_READERS.test(key)));
  return {
    ...env,
    HOME: join(dir, 'home'),
    // npm's own lines (the `> script` banner, update notices, `npm error` after a failing script)
    // are not part of any output a page shows.
    npm_config_loglevel: 'silent',
    npm_config_update_notifier: 'false',
  };
}

export async function startSandbox(dynamodbEndpoint: string): Promise<Sandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'docs-examples-'));
  const children = new Set<ChildProcess>();
  let address = DOCUMENTED_ADDRESS;
  const stdout: string[] = [];
  let serverEnded: string | undefined;
  let serverStderr = '';
  const shown = (text: string) => text.split(address).join(DOCUMENTED_ADDRESS);
  const close = async () => {
    await Promise.all(
      [...children].map(
        (child) =>
          new Promise<void>((gone) => {
            if (child.exitCode !== null || child.signalCode !== null) return gone();
            child.once('exit', () => gone());
            child.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const entry of readdirSync(ROOT)) {
      if (entry.startsWith('.') || OWN.has(entry)) continue;
      if (COPIED.has(entry)) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
      else symlinkSync(join(ROOT, entry), join(dir, entry));
    }
    mkdirSync(join(dir, 'home'));
    const server = spawn(process.execPath, ['--import', TSX, join(dir, 'infra/local/start.ts')], {
      cwd: dir,
      env: {
        ...readersEnvironment(dir),
        PORT: '0',
        DYNAMODB_ENDPOINT: dynamodbEndpoint,
        STATE_TABLE: `docs-examples-${process.pid}`,
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(server);
    stopWithThisProcess(server);
    server.stderr?.on('data', (chunk: Buffer) => {
      serverStderr = (serverStderr + chunk.toString()).slice(-4000);
    });
    server.once('exit', (code, signal) => {
      serverEnded = `exited (${signal ?? code})`;
    });
    address = await new Promise<string>((ready, failed) => {
      createInterface({ input: server.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        stdout.push(line);
        const url = /^ready: .* on https:\/\/(127\.0\.0\.1:\d+)/.exec(line);
        if (url) ready(url[1]);
      });
      server.once('exit', (code) => failed(new Error(`npm start exited with ${code}: ${serverStderr}`)));
    });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    dir,
    serverStdout: () => shown(stdout.join('\n')),
    serverState: () => (serverEnded ? `npm start ${serverEnded}; its stderr ended:\n${serverStderr}` : 'running'),
    run: (script) =>
      new Promise<RunResult>((done, failed) => {
        const child = spawn(
          'bash',
          ['-c', `exec 2>&1\nset -eo pipefail\n${script.split(DOCUMENTED_ADDRESS).join(address)}`],
          {
            cwd: dir,
            env: readersEnvironment(dir),
            stdio: ['ignore', 'pipe', 'ignore'],
          },
        );
        children.add(child);
        let output = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
        });
        child.once('error', failed);
        child.once('close', (code) => {
          children.delete(child);
          done({ code: code ?? 1, output: shown(output) });
        });
      }),
    close,
  };
}
