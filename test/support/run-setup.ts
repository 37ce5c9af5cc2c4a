// vitest globalSetup, first of the run: what every test file shares and nothing outlives.
// - One temporary root for the run. TMPDIR points into it before any worker starts, so every
//   os.tmpdir() below it (test files, `npm start`, sls and esbuild in child processes) lands there,
//   and the teardown removes it whether the tests passed, failed or timed out. A root left by a
//   run that was killed outright is removed by the next run once its process is gone.
// - The test PKI, made once: a CA with its server and client certificates, and a stranger CA.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createPki } from '../../infra/pki/pki.js';

const ROOT_PREFIX = 'serverless-admission-test-';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeAbandonedRoots(parent: string): void {
  for (const name of readdirSync(parent)) {
    const owner = new RegExp(`^${ROOT_PREFIX}(\\d+)-`).exec(name);
    if (owner && !alive(Number(owner[1]))) rmSync(join(parent, name), { recursive: true, force: true });
  }
}

export default function setup(project: TestProject): () => void {
  const parent = tmpdir();
  removeAbandonedRoots(parent);
  const root = mkdtempSync(join(parent, `${ROOT_PREFIX}${process.pid}-`));
  writeFileSync(
    join(root, 'README'),
    `Temporary files of the test run in process ${process.pid}; removed when it ends.\n`,
  );
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  const removeRoot = () => rmSync(root, { recursive: true, force: true });
  // Ctrl-C or a kill of the runner: the root goes with it (the JVMs have their own guard).
  process.once('exit', removeRoot);

  project.provide('testPki', createPki());
  project.provide('strangerPki', createPki({ caCommonName: 'a stranger CA' }));

  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    removeRoot();
  };
}
