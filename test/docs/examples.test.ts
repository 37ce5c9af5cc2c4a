// Every command block a page tells a reader to run, in README.md and docs/: parsed into commands
// the project has (npm scripts with options their --help lists, serverless functions and params
// serverless.yml has, known kubectl, oc and aws commands), and, where it needs no AWS account and
// no cluster, run as a reader would run it from a checkout, against one `npm start` on DynamoDB
// Local; the ```text block after it must be what it printed.
//
// How a page marks a block (docs/design/documentation.md):
//   ```sh            run by this test, in page order; the ```text block right after it is its output
//   ```sh exit=N     the same, and it must exit with N
//   ```sh setup      npm ci, npm start, npm test: the output after npm start is the shared server's
//   ```sh aws        needs an AWS account: parsed only
//   ```sh cluster    needs a cluster: parsed only
//   ```sh network    needs the network (a package download): parsed only
// Output blocks compare line by line; `<port>`-like placeholders match any text on a line, and a
// line of `...` any number of lines. The server listens on its own port: the test points commands
// at it and shows its port as 8443, the port every page uses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Fence } from '../../infra/docs/markdown.js';
import { fences } from '../../infra/docs/markdown.js';
import { markdownPages } from '../../infra/docs/generate.js';
import type { CliHelp } from './support/cli.js';
import { cliHelps, commandProblems, ROOT } from './support/cli.js';
import type { Sandbox } from './support/sandbox.js';
import { startSandbox } from './support/sandbox.js';
import { commands, outputMatches } from './support/shell.js';

const FLAGS = new Set(['aws', 'cluster', 'network', 'setup']);

interface Block {
  readonly page: string;
  readonly fence: Fence;
  readonly output?: Fence;
}

const blocks: Block[] = markdownPages().flatMap((page) => {
  const found = fences(readFileSync(join(ROOT, page), 'utf8'));
  return found.flatMap((fence, i) => {
    if (fence.lang !== 'sh') return [];
    const next = found[i + 1];
    return [{ page, fence, ...(next?.lang === 'text' && next.followsBlock && { output: next }) }];
  });
});

const where = (block: Block) => `${block.page}:${block.fence.line}`;
const kind = (fence: Fence) => fence.flags.find((f) => FLAGS.has(f));
const expectedExit = (fence: Fence) => Number(fence.flags.find((f) => f.startsWith('exit='))?.slice(5) ?? 0);
const runnable = blocks.filter((b) => kind(b.fence) === undefined);

describe('how pages mark commands', () => {
  it('every command block is ```sh, with a known mark', () => {
    const problems = markdownPages().flatMap((page) =>
      fences(readFileSync(join(ROOT, page), 'utf8')).flatMap((fence) => {
        const at = `${page}:${fence.line}`;
        if (['bash', 'shell', 'console', 'zsh'].includes(fence.lang)) return [`${at}: mark commands as sh`];
        if (fence.lang !== 'sh') return [];
        const unknown = fence.flags.filter((f) => !FLAGS.has(f) && !/^exit=\d+$/.test(f));
        return unknown.map((f) => `${at}: unknown mark ${f}`);
      }),
    );
    expect(problems).toEqual([]);
  });

  it('only a block the suite runs, or npm start and npm test, is followed by its output', () => {
    const unchecked = blocks
      .filter((b) => b.output && kind(b.fence) !== undefined && kind(b.fence) !== 'setup')
      .map(where);
    expect(unchecked).toEqual([]);
  });

  it('has runnable blocks to run (the README and the local trial among them)', () => {
    expect(runnable.map((b) => b.page)).toEqual(expect.arrayContaining(['README.md', 'docs/try-locally.md']));
  });
});

describe('every command a page shows is one the project has, with options its --help lists', () => {
  let helps: Map<string, CliHelp>;
  beforeAll(async () => {
    helps = await cliHelps();
  });
  it.each(blocks.map((b) => [where(b), b] as const))('%s', (_, block) => {
    const parsed = commands(block.fence.body);
    expect(parsed.length, 'a command block with no command').toBeGreaterThan(0);
    const problems = parsed.flatMap((c) => commandProblems(c, helps));
    if (kind(block.fence) === 'setup') {
      const allowed = parsed.every((c) => c.words[0] === 'npm' && ['ci', 'start', 'test'].includes(c.words[1]));
      if (!allowed) problems.push('a setup block holds only npm ci, npm start and npm test');
    }
    expect(problems).toEqual([]);
  });
});

describe('the commands a reader runs locally print what the pages show', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(inject('dynamodbEndpoint'));
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  const setup = blocks.filter((b) => kind(b.fence) === 'setup' && b.output);
  it.each(setup.map((b) => [where(b), b] as const))('%s: npm start prints what follows it', (_, block) => {
    const last = commands(block.fence.body).at(-1)?.words.join(' ');
    // The suite cannot run npm test inside itself: that output block is the one not compared.
    if (last === 'npm test') return;
    expect(last).toBe('npm start');
    const printed = sandbox.serverStdout();
    expect(outputMatches(block.output?.body ?? '', printed), `npm start printed:\n${printed}`).toBe(true);
  });

  it.each(runnable.map((b) => [where(b), b] as const))('%s', async (_, block) => {
    const { code, output } = await sandbox.run(block.fence.body);
    expect(code, `${output}\n(the shared server: ${sandbox.serverState()})`).toBe(expectedExit(block.fence));
    if (block.output)
      expect(
        outputMatches(block.output.body, output),
        `it printed:\n${output}\nthe page shows:\n${block.output.body}`,
      ).toBe(true);
  });
});
