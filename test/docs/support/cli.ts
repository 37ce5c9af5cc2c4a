// The project's commands as a reader meets them: each npm script's --help text (asked of the
// command itself), the options it lists, and a check that a documented command line names a real
// script, options that script takes, an existing serverless function or parameter, or a known
// kubectl, oc or aws command.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { plugins } from '../../../functions/index.js';
import { functionName } from '../../../infra/serverless/functions.js';
import { checkConfigCommand } from '../../../infra/check-config.js';
import { USAGE as CHECK_USAGE } from '../../../infra/check/cli.js';
import { USAGE as AUDIT_USAGE } from '../../../infra/check/audit-cli.js';
import { emitCommand } from '../../../infra/emit/cli.js';
import { pkiCommand } from '../../../infra/pki/cli.js';
import { docsCommand } from '../../../infra/docs/generate.js';
import type { Command } from './shell.js';
import { commands } from './shell.js';

export const ROOT = resolve(import.meta.dirname, '../../..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const run = promisify(execFile);

export const SCRIPTS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** Scripts that are not a command of ours with a --help: they run serverless, tsc, biome or vitest. */
export const SCRIPTS_WITHOUT_HELP = new Set(['package', 'deploy', 'typecheck', 'test', 'test:e2e', 'lint', 'format']);

async function printed(command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' } });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return stdout + stderr;
  }
}

async function captured(
  fn: (io: { stdout: (s: string) => void; stderr: (s: string) => void; env: NodeJS.ProcessEnv }) => unknown,
) {
  let text = '';
  const collect = (s: string) => {
    text += s;
  };
  await fn({ stdout: collect, stderr: collect, env: {} });
  return text;
}

const node = (file: string, args: string[]) => printed(process.execPath, ['--import', TSX, join(ROOT, file), ...args]);

/** How each script's usage text is obtained: in-process where the command is exported, else by running it. */
const HELP: Record<string, () => Promise<string>> = {
  start: () => node('infra/local/start.ts', ['--help']),
  emit: () => captured((io) => emitCommand(['--help'], io)),
  pki: () => captured((io) => pkiCommand(['--help'], io)),
  sync: async () => {
    const { syncCommand } = await import('../../../infra/sync/cli.js');
    return captured((io) => syncCommand(['--help'], io));
  },
  'check-config': () => captured((io) => checkConfigCommand(['--help'], io)),
  'merge-schema': () => node('infra/merge-schema/cli.ts', []),
  check: async () => CHECK_USAGE,
  audit: async () => AUDIT_USAGE,
  load: () => printed('bash', [join(ROOT, 'infra/load/run.sh'), '--help']),
  soak: () => printed('bash', [join(ROOT, 'infra/load/soak.sh'), '--help']),
  bench: () => node('test/bench/run.ts', ['--help']),
  docs: () => captured((io) => docsCommand(['--help'], io)),
  outputs: () => node('infra/aws/outputs.ts', ['--help']),
  flood: () => node('infra/load/flood.ts', ['--help']),
};

export interface CliHelp {
  readonly script: string;
  readonly text: string;
  /** Every option the text lists: `--base-url`, `-f`. */
  readonly options: ReadonlySet<string>;
}

/**
 * The options a usage text lists: those on its Usage lines (`[-- --port N]`) and on lines that
 * begin with an option (`  -f, --filename PATH`), not those quoted in its prose or examples.
 */
export function listedOptions(text: string): Set<string> {
  const options = new Set<string>();
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    const usage = /^(Usage:|\s{4,}npm run)/.test(line) || /^npm run \S+ \[/.test(trimmed);
    const optionLine = /^-{1,2}[a-zA-Z]/.test(trimmed);
    if (!usage && !optionLine) continue;
    const scope = optionLine && !usage ? trimmed.split(/\s{2,}/)[0] : trimmed;
    for (const m of scope.matchAll(/(?:^|[\s[,|])(--?[a-zA-Z][a-zA-Z0-9-]*)/g)) options.add(m[1]);
  }
  return options;
}

let helps: Promise<Map<string, CliHelp>> | undefined;

/** Every script's usage text, asked once per test file. */
export function cliHelps(): Promise<Map<string, CliHelp>> {
  helps ??= Promise.all(
    Object.entries(HELP).map(async ([script, get]) => {
      const text = await get();
      return [script, { script, text, options: listedOptions(text) }] as const;
    }),
  ).then((entries) => new Map(entries));
  return helps;
}

/** The names `npx sls deploy function -f NAME` takes: one per registered plugin. */
export const FUNCTION_NAMES = new Set(plugins.map((p) => functionName(p.metadata)));
/** The `--param="name=value"` names serverless.yml declares (its `params:`) or reads (`${param:name}`). */
export const SLS_PARAMS: ReadonlySet<string> = (() => {
  const text = readFileSync(join(ROOT, 'serverless.yml'), 'utf8');
  const declared = Object.values(
    (parse(text.replace(/\$\{[^}]*\}/g, 'x')) as { params?: object }).params ?? {},
  ).flatMap((stage) => Object.keys(stage ?? {}));
  return new Set([...declared, ...[...text.matchAll(/\$\{param:([A-Za-z0-9]+)/g)].map((m) => m[1])]);
})();

const KUBECTL = new Set([
  'apply',
  'get',
  'delete',
  'create',
  'label',
  'annotate',
  'describe',
  'logs',
  'rollout',
  'auth',
]);
const AWS = new Set([
  's3',
  's3api',
  'acm',
  'iam',
  'cloudformation',
  'cloudwatch',
  'logs',
  'lambda',
  'dynamodb',
  'sns',
  'sts',
  'secretsmanager',
  'eks',
]);
const SLS = new Set(['package', 'deploy', 'remove', 'info', 'logs', 'invoke', 'print']);
/** Programs every shell has, which a page may use around our commands. */
const UTILITIES = new Set([
  'cat',
  'cd',
  'chmod',
  'cp',
  'curl',
  'apt-get',
  'dpkg',
  'echo',
  'export',
  'grep',
  'head',
  'install',
  'ls',
  'mkdir',
  'node',
  'scp',
  'sed',
  'sort',
  'ssh',
  'sudo',
  'tail',
  'test',
]);

/** The options given to a command line after `--` (npm run X -- ...): `--x=1` counts as `--x`. */
function givenOptions(args: readonly string[]): string[] {
  return args.filter((a) => /^--?[a-zA-Z]/.test(a)).map((a) => a.split('=')[0]);
}

/** What is wrong with one documented command, if anything; `setup` also allows npm ci and npm test. */
export function commandProblems(command: Command, helpTexts: ReadonlyMap<string, CliHelp>): string[] {
  const [program, ...args] = command.words;
  const at = `line ${command.line}: ${command.words.join(' ')}`;
  if (program === 'sudo') return commandProblems({ ...command, words: args }, helpTexts);
  // eval "$(a command that prints a command)": the inner command is what the page runs.
  const substituted = program === 'eval' && args.length === 1 ? /^\$\((.*)\)$/s.exec(args[0])?.[1] : undefined;
  if (substituted !== undefined)
    return commands(substituted).flatMap((inner) => commandProblems({ ...inner, line: command.line }, helpTexts));
  if (program === 'npm') {
    const [sub, ...rest] = args;
    if (sub === 'ci' || sub === 'test' || sub === 'start') {
      if (sub === 'start') return startProblems(rest, helpTexts.get('start'), at);
      return rest.length === 0 ? [] : [`${at}: npm ${sub} takes no arguments here`];
    }
    if (sub !== 'run') return [`${at}: npm ${sub} is not a command the documentation uses`];
    const words = rest[0] === '-s' ? rest.slice(1) : rest;
    const [script, separator, ...scriptArgs] = words;
    if (!script || !(script in SCRIPTS)) return [`${at}: no npm script ${script}`];
    if (separator !== undefined && separator !== '--') return [`${at}: arguments to a script follow --`];
    if (SCRIPTS_WITHOUT_HELP.has(script)) return [];
    const help = helpTexts.get(script);
    if (!help) return [`${at}: no usage text known for npm run ${script}`];
    const unknown = givenOptions(scriptArgs).filter((o) => !help.options.has(o));
    return unknown.map((o) => `${at}: npm run ${script} has no option ${o}`);
  }
  if (program === 'npx') {
    const [tool, sub, ...rest] = args;
    if (tool !== 'sls' && tool !== 'serverless') return [`${at}: npx ${tool} is not a command the documentation uses`];
    if (!SLS.has(sub)) return [`${at}: sls ${sub} is not a serverless command`];
    const problems: string[] = [];
    for (const [i, arg] of rest.entries()) {
      const param = /^--param=(.*)$/.exec(arg)?.[1] ?? (arg === '--param' ? rest[i + 1] : undefined);
      if (param !== undefined && !SLS_PARAMS.has(param.split('=')[0]))
        problems.push(`${at}: serverless.yml has no param ${param.split('=')[0]}`);
      if ((arg === '-f' || arg === '--function') && !FUNCTION_NAMES.has(rest[i + 1] ?? ''))
        problems.push(`${at}: no function ${rest[i + 1]}`);
    }
    return problems;
  }
  if (program === 'kubectl' || program === 'oc')
    return KUBECTL.has(args[0]) ? [] : [`${at}: ${program} ${args[0]} is not a command the documentation uses`];
  if (program === 'aws')
    return AWS.has(args[0]) ? [] : [`${at}: aws ${args[0]} is not a service the documentation uses`];
  if (UTILITIES.has(program)) return [];
  return [`${at}: ${program} is not a command the documentation may use`];
}

function startProblems(rest: readonly string[], help: CliHelp | undefined, at: string): string[] {
  if (rest.length === 0) return [];
  if (rest[0] !== '--') return [`${at}: arguments to npm start follow --`];
  const unknown = givenOptions(rest.slice(1)).filter((o) => !help?.options.has(o));
  return unknown.map((o) => `${at}: npm start has no option ${o}`);
}
