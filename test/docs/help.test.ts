// What the commands say about themselves agrees with the project: every npm script a --help names
// exists, every file it names exists, every option its examples use is one the command takes, and
// a plugin it calls served (or not served) is so in the registry.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { KNOWN_PLUGIN_NAMES } from '../../lib/config/known-plugins.js';
import type { CliHelp } from './support/cli.js';
import { cliHelps, commandProblems, ROOT, SCRIPTS, SCRIPTS_WITHOUT_HELP } from './support/cli.js';
import { commands } from './support/shell.js';

const SERVED = new Set(plugins.map((p) => p.metadata.upstreamName));

/** Repository paths a text names: `config/admission.yaml`, `test/fixtures/admission-tests/`. */
function repositoryPaths(text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])((?:bench|config|docs|functions|infra|lib|test)\/[\w./-]*)/g)]
    .map((m) => m[1].replace(/[.,;:]+$/, ''))
    .filter((p) => !/[A-Z]{3,}|\*|<|\{/.test(p));
}

/** What a text says is not served, and what it says is served or inactive (check-config's lines). */
function pluginClaims(text: string): { notServed: string[]; served: string[] } {
  const notServed = [...text.matchAll(/([\w./]+): not served by this project/g)].map((m) => m[1]);
  const served = [
    ...[...text.matchAll(/^\s*ok {2}([\w./]+) \(/gm)].map((m) => m[1]),
    ...[...text.matchAll(/^\s*-- {2}([\w./]+) \([a-z-]+\) is inactive/gm)].map((m) => m[1]),
  ];
  return { notServed, served };
}

let helps: Map<string, CliHelp>;
beforeAll(async () => {
  helps = await cliHelps();
});

describe('every command has a --help', () => {
  it('every npm script of ours answers --help with its usage', () => {
    const ours = Object.keys(SCRIPTS).filter((s) => !SCRIPTS_WITHOUT_HELP.has(s));
    expect([...helps.keys()].sort()).toEqual(ours.sort());
    for (const [script, { text }] of helps)
      expect(text, script).toMatch(new RegExp(`Usage: npm (run (-s )?${script}\\b|start)`));
  });
});

describe('--help texts agree with the project', () => {
  it('name only npm scripts that exist', () => {
    const named = [...helps.values()].flatMap(({ script, text }) =>
      [...text.matchAll(/npm run (?:-s )?([a-z][\w-]*)/g)].map((m) => [script, m[1]] as const),
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter(([, s]) => !(s in SCRIPTS))).toEqual([]);
  });

  it('name only files and directories that exist', () => {
    const named = [...helps.values()].flatMap(({ script, text }) => repositoryPaths(text).map((p) => [script, p]));
    expect(named.map(([, p]) => p)).toContain('test/fixtures/admission-tests/');
    // A module may be named without its extension (`lib/http/log`).
    const exists = (p: string) => existsSync(join(ROOT, p)) || existsSync(join(ROOT, `${p}.ts`));
    expect(named.filter(([, p]) => !exists(p))).toEqual([]);
  });

  it('use, in their examples, only options the command takes', () => {
    const problems = [...helps.values()].flatMap(({ text }) =>
      text
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => /^npm run (-s )?[a-z][\w-]* -- -/.test(line) && !/[[\]|]/.test(line))
        .flatMap((line) => commands(line).flatMap((c) => commandProblems(c, helps))),
    );
    expect(problems).toEqual([]);
  });

  it('call served only plugins the registry serves, and not served only known plugins it does not', () => {
    const claims = [...helps.values()].map(({ text }) => pluginClaims(text));
    const served = claims.flatMap((c) => c.served);
    const notServed = claims.flatMap((c) => c.notServed);
    expect(served.length).toBeGreaterThan(0);
    expect(notServed.length).toBeGreaterThan(0);
    expect(served.filter((name) => !SERVED.has(name))).toEqual([]);
    expect(notServed.filter((name) => SERVED.has(name) || !KNOWN_PLUGIN_NAMES.has(name))).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('find the paths, scripts and plugin claims a text makes', () => {
    const text = [
      'Examples:',
      '  npm run check -- --tests test/admission-tests/',
      '--  LimitRanger: not served by this project, entry ignored',
      'ok  PodNodeSelector (configured)',
      '(default config/admission.yaml, or DIR/url-secret and .local/pki/client.crt)',
    ].join('\n');
    expect(repositoryPaths(text)).toEqual(['test/admission-tests/', 'config/admission.yaml']);
    expect(existsSync(join(ROOT, 'test/admission-tests/'))).toBe(false);
    expect(pluginClaims(text)).toEqual({ notServed: ['LimitRanger'], served: ['PodNodeSelector'] });
    expect(SERVED.has('LimitRanger')).toBe(true);
  });
});
