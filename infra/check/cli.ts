// `npm run check -- -f manifests.yaml`: every object of the manifests created, offline, through
// the admission chain the cluster would run with our webhooks installed (runner.ts). Exit 0 when
// every object is admitted, 1 when one is refused (or, with --tests, an expectation is not met),
// 2 on a usage error or unreadable input.
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { ConfigError } from '../../lib/config/errors.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../lib/config/admission-configuration.js';
import { CLUSTERS_DIR, clusterEnv, fleetCluster } from '../../lib/config/fleet.js';
import { labelKeyProblem, labelValueProblem } from '../../lib/admission/label-selector.js';
import type { Manifest } from './manifests.js';
import { InputError, readManifests } from './manifests.js';
import type { ObjectResult } from './runner.js';
import { AdmissionChain, DEFAULT_USER, ManifestError, namespacesFirst } from './runner.js';
import { parseAdmissionTest, runAdmissionTest, testFiles } from './test-files.js';

export const USAGE = `Usage: npm run check -- -f FILE|DIR [-f ...] [options]
       npm run check -- --tests DIR

Creates every object of the manifests, offline, through the admission chain a cluster runs with
these webhooks installed: the webhook configurations \`npm run emit\` registers under the same
AdmissionConfiguration, matched as the kube-apiserver matches them (rules, namespaceSelector,
objectSelector, matchConditions in CEL), mutating webhooks in order with their IfNeeded
reinvocation, then validating ones on the final object; each call answered by the plugin's own
Lambda handler. Namespaces in the manifests are created first. State (learned namespaces, quota
charges, rate-limit tokens) lives in memory for the run: no AWS, no network, nothing written.

Options:
  -f, --filename PATH         a manifest file (YAML or JSON, List documents expanded) or a
                              directory of them (*.yaml, *.yml, *.json); repeatable
      --config FILE           the AdmissionConfiguration (default: ADMISSION_CONFIG, else
                              ${DEFAULT_ADMISSION_CONFIG})
      --cluster NAME          a fleet's cluster: its AdmissionConfiguration, ${CLUSTERS_DIR}/NAME.yaml
                              (also for --tests files that name no config; docs/fleet.md)
      --namespace-labels NS=KEY=VALUE[,KEY=VALUE...]
                              a namespace that exists before the run, with its labels (learned,
                              as \`npm run sync\` would load it); repeatable. Other namespaces the
                              manifests name are taken to exist, unlearned, with only the
                              kubernetes.io/metadata.name label
  -n, --namespace NS          for objects that name none (default: default)
      --user NAME             the requesting user (default: ${DEFAULT_USER.username})
      --group GROUP           the user's groups; repeatable (default: ${DEFAULT_USER.groups?.join(', ')};
                              with --user: system:authenticated)
  -o, --output text|json|yaml the report on stdout (default: text)
      --tests DIR             run the AdmissionTest files under DIR instead (docs/rollout.md)
  -h, --help

Examples:
  npm run check -- -f deploy/
  npm run check -- -f pods.yaml --config config/admission.yaml -o json
  npm run check -- -f pods.yaml --cluster blue
  npm run check -- -f app.yaml --namespace-labels team-a=env=prod,tier=web --user alice --group dev
  npm run check -- --tests test/fixtures/admission-tests/

Exit status: 0 every object admitted (every test passed), 1 an object refused (a test failed),
2 usage error or unreadable input.
`;

export interface CheckIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `1 object`, `2 objects`. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** Progress on stderr, one line per PROGRESS_EVERY objects, for inputs longer than that. */
const PROGRESS_EVERY = 100;

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        config: { type: 'string' },
        cluster: { type: 'string' },
        'namespace-labels': { type: 'string', multiple: true },
        namespace: { type: 'string', short: 'n' },
        user: { type: 'string' },
        group: { type: 'string', multiple: true },
        output: { type: 'string', short: 'o', default: 'text' },
        tests: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `team-a=env=prod,tier=web` → team-a: {env: prod, tier: web}. */
export function parseNamespaceLabels(values: readonly string[]): Map<string, Record<string, string>> {
  const namespaces = new Map<string, Record<string, string>>();
  for (const value of values) {
    const at = value.indexOf('=');
    const ns = at < 0 ? value : value.slice(0, at);
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns) || ns.length > 63)
      throw new UsageError(
        `--namespace-labels ${JSON.stringify(value)}: ${JSON.stringify(ns)} is not a namespace name`,
      );
    const labels: Record<string, string> = { ...namespaces.get(ns) };
    for (const pair of at < 0
      ? []
      : value
          .slice(at + 1)
          .split(',')
          .filter(Boolean)) {
      const eq = pair.indexOf('=');
      if (eq < 0)
        throw new UsageError(`--namespace-labels ${JSON.stringify(value)}: ${JSON.stringify(pair)} is not KEY=VALUE`);
      const [key, label] = [pair.slice(0, eq), pair.slice(eq + 1)];
      const problem = labelKeyProblem(key) ?? labelValueProblem(label);
      if (problem)
        throw new UsageError(`--namespace-labels ${JSON.stringify(value)}: ${JSON.stringify(pair)}: ${problem}`);
      labels[key] = label;
    }
    namespaces.set(ns, labels);
  }
  return namespaces;
}

const refText = (r: ObjectResult) =>
  `${r.ref.kind} ${r.ref.namespace === '' ? r.ref.name : `${r.ref.namespace}/${r.ref.name}`}`;

/** The text report: per object its verdict, each plugin's decision, patches as diffs, warnings. */
export function textReport(results: readonly ObjectResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    const verdict = r.allowed ? 'admitted' : `REFUSED (${r.status?.code})`;
    lines.push(`${refText(r)} (${r.ref.source}): ${verdict}`);
    if (!r.allowed && r.status) lines.push(`  ${r.status.message}`);
    if (r.plugins.length === 0) lines.push('  (no webhook judges it)');
    const width = Math.max(0, ...r.plugins.map((p) => p.plugin.length));
    for (const p of r.plugins) {
      lines.push(`  ${p.plugin.padEnd(width)}  ${p.decision}`);
      for (const message of p.messages) lines.push(`      ${message}`);
      for (const patch of p.patch) {
        if (patch.round === 2) lines.push('      (reinvoked)');
        for (const line of patch.diff) lines.push(`      ${line}`);
      }
    }
    for (const warning of r.warnings) lines.push(`  Warning: ${warning}`);
  }
  const refused = results.filter((r) => !r.allowed).length;
  lines.push(`${count(results.length, 'object')}: ${results.length - refused} admitted, ${refused} refused`);
  return `${lines.join('\n')}\n`;
}

/** The machine report: the same facts, without the webhooks' internals. */
export function machineReport(results: readonly ObjectResult[]) {
  return {
    objects: results.map((r) => ({
      ...r.ref,
      allowed: r.allowed,
      ...(r.status && { status: r.status }),
      warnings: r.warnings,
      plugins: r.plugins,
    })),
    summary: { objects: results.length, refused: results.filter((r) => !r.allowed).length },
  };
}

async function checkManifests(values: ReturnType<typeof parse>, io: CheckIo): Promise<number> {
  const output = values.output ?? 'text';
  if (!['text', 'json', 'yaml'].includes(output))
    throw new UsageError(`--output must be text, json or yaml, got ${JSON.stringify(output)}`);
  if (!values.filename?.length) throw new UsageError('-f FILE|DIR is required (or --tests DIR)');
  const namespaces = parseNamespaceLabels(values['namespace-labels'] ?? []);
  const manifests: Manifest[] = namespacesFirst(readManifests(values.filename));
  const chain = new AdmissionChain({
    ...(values.config !== undefined && { configFile: values.config }),
    env: io.env,
    user: {
      username: values.user ?? DEFAULT_USER.username,
      groups: values.group ?? (values.user !== undefined ? ['system:authenticated'] : DEFAULT_USER.groups),
    },
    namespaces,
  });
  io.stderr(
    `check: ${count(manifests.length, 'object')}, configuration ${chain.configurationFile}, ${count(chain.active.length, 'plugin')}\n`,
  );
  const results: ObjectResult[] = [];
  for (const [i, { object, source }] of manifests.entries()) {
    results.push(await chain.admit(object, source, 'all', values.namespace ?? 'default'));
    if (manifests.length > PROGRESS_EVERY && (i + 1) % PROGRESS_EVERY === 0)
      io.stderr(`check: ${i + 1}/${manifests.length} objects\n`);
  }
  if (output === 'text') io.stdout(textReport(results));
  else if (output === 'json') io.stdout(`${JSON.stringify(machineReport(results), null, 2)}\n`);
  else io.stdout(stringify(machineReport(results), { lineWidth: 0, aliasDuplicateObjects: false }));
  return results.every((r) => r.allowed) ? 0 : 1;
}

async function checkTests(dir: string, io: CheckIo): Promise<number> {
  let files: string[];
  try {
    files = testFiles(dir);
  } catch {
    throw new InputError(`--tests ${dir}: no such directory`);
  }
  if (files.length === 0) throw new InputError(`--tests ${dir}: no AdmissionTest files (kind: AdmissionTest) found`);
  const tests = files.map((file) => parseAdmissionTest(readFileSync(file, 'utf8'), file));
  let failed = 0;
  for (const test of tests) {
    const { differences } = await runAdmissionTest(test, io.env);
    const where = relative(process.cwd(), test.file) || test.file;
    if (differences.length === 0) io.stdout(`PASS ${test.name} (${where})\n`);
    else {
      failed++;
      io.stdout(`FAIL ${test.name} (${where})\n${differences.map((d) => `  ${d}\n`).join('')}`);
    }
  }
  io.stdout(`${count(tests.length, 'test')}: ${tests.length - failed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

/** --cluster NAME: a fleet's cluster, judged under its own AdmissionConfiguration (lib/config/fleet.ts). */
function forCluster(values: ReturnType<typeof parse>, io: CheckIo) {
  if (values.cluster === undefined) return { options: values, env: io.env };
  if (values.config !== undefined)
    throw new UsageError(`--config and --cluster both name a configuration: --cluster ${values.cluster} reads its own`);
  const cluster = fleetCluster(values.cluster);
  io.stderr(`check: cluster ${cluster.name}\n`);
  return { options: { ...values, config: cluster.configFile }, env: clusterEnv(cluster, io.env) };
}

/** The whole command, without process globals, so tests run it in-process. Returns the exit code. */
export async function checkCommand(argv: string[], io: CheckIo): Promise<number> {
  try {
    const values = parse(argv);
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    const { options, env } = forCluster(values, io);
    if (options.tests !== undefined) {
      if (options.filename?.length) throw new UsageError('--tests runs test files: drop -f');
      return await checkTests(options.tests, { ...io, env });
    }
    return await checkManifests(options, { ...io, env });
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`check: ${error.message}\nRun npm run check -- --help for usage.\n`);
      return 2;
    }
    if (error instanceof InputError || error instanceof ManifestError || error instanceof ConfigError) {
      io.stderr(`check: ${error instanceof ConfigError ? 'invalid configuration: ' : ''}${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  checkCommand(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`check: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
