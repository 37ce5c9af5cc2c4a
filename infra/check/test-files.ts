// Admission expectations kept in CI, like `kyverno test` and `gator verify`: a test file names
// manifests and what the admission chain must answer for each object (admitted or refused, and
// each plugin's decision). `npm run check -- --tests DIR` runs every test file under DIR, each in
// a fresh chain (its own in-memory state), and exits 1 on any mismatch with a line per difference.
//
//   apiVersion: serverless-admission.io/v1alpha1
//   kind: AdmissionTest
//   metadata:
//     name: pull-policy-and-external-ips
//   config: admission.yaml              # optional, relative to this file (else ADMISSION_CONFIG)
//   manifests: [manifests/]             # files or directories, relative to this file
//   namespace: default                  # optional: for objects that name none
//   user: {username: alice, groups: [system:authenticated]}   # optional: the requesting user
//   namespaceLabels: {team-a: {env: prod}}                    # optional: namespaces that exist
//   expect:
//   - kind: Pod
//     namespace: team-a                 # omitted for cluster-scoped objects
//     name: web
//     allowed: true                     # optional
//     plugins:                          # optional: plugin -> allowed|patched|warned|denied|error|not-called
//       always-pull-images: patched
//       deny-service-external-ips: not-called
//     message: external IPs             # optional: a substring of the refusal message
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import type { UserInfo } from '../../lib/admission/types.js';
import { isPlainObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { rejectUnknownFields } from '../../lib/config/fields.js';
import { readManifests } from './manifests.js';
import type { ObjectResult, PluginDecision } from './runner.js';
import { AdmissionChain, DEFAULT_USER, namespacesFirst } from './runner.js';

export const TEST_API_VERSION = 'serverless-admission.io/v1alpha1';
export const TEST_KIND = 'AdmissionTest';
const DECISIONS = ['allowed', 'patched', 'warned', 'denied', 'error', 'not-called'] as const;
export type ExpectedDecision = PluginDecision | 'not-called';

export interface Expectation {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly allowed?: boolean;
  readonly plugins: Readonly<Record<string, ExpectedDecision>>;
  readonly message?: string;
}

export interface AdmissionTest {
  readonly file: string;
  readonly name: string;
  readonly config?: string;
  readonly manifests: readonly string[];
  readonly namespace: string;
  readonly user: UserInfo;
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  readonly expect: readonly Expectation[];
}

const FIELDS = [
  'apiVersion',
  'kind',
  'metadata',
  'config',
  'manifests',
  'namespace',
  'user',
  'namespaceLabels',
  'expect',
];
const EXPECT_FIELDS = ['kind', 'namespace', 'name', 'allowed', 'plugins', 'message'];

function stringOf(file: string, path: string, value: unknown, required = true): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value === '') throw new ConfigError(file, path, 'must be a non-empty string');
  return value;
}

function stringMap(file: string, path: string, value: unknown): Record<string, string> {
  if (!isPlainObject(value)) throw new ConfigError(file, path, 'must be a map of strings');
  for (const [k, v] of Object.entries(value))
    if (typeof v !== 'string') throw new ConfigError(file, `${path}.${k}`, 'must be a string');
  return value as Record<string, string>;
}

/** Reads one test file strictly: unknown fields fail with the closest known name. */
export function parseAdmissionTest(text: string, file: string): AdmissionTest {
  const doc = parse(text) as unknown;
  if (!isPlainObject(doc)) throw new ConfigError(file, '', `not a ${TEST_KIND}`);
  rejectUnknownFields(file, '', doc, FIELDS);
  if (doc.apiVersion !== TEST_API_VERSION || doc.kind !== TEST_KIND)
    throw new ConfigError(file, 'kind', `must be apiVersion ${TEST_API_VERSION}, kind ${TEST_KIND}`);
  const name = stringOf(file, 'metadata.name', isPlainObject(doc.metadata) ? doc.metadata.name : undefined) as string;
  const base = dirname(file);
  if (!Array.isArray(doc.manifests) || doc.manifests.length === 0)
    throw new ConfigError(file, 'manifests', 'must list at least one file or directory');
  const manifests = doc.manifests.map((m, i) => resolve(base, stringOf(file, `manifests[${i}]`, m) as string));
  const config = stringOf(file, 'config', doc.config, false);
  let user = DEFAULT_USER;
  if (doc.user !== undefined) {
    if (!isPlainObject(doc.user)) throw new ConfigError(file, 'user', 'must be {username, groups}');
    rejectUnknownFields(file, 'user', doc.user, ['username', 'groups']);
    const groups = doc.user.groups ?? [];
    if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string'))
      throw new ConfigError(file, 'user.groups', 'must be a list of strings');
    user = { username: stringOf(file, 'user.username', doc.user.username), groups: groups as string[] };
  }
  const namespaceLabels = new Map<string, Record<string, string>>();
  if (doc.namespaceLabels !== undefined) {
    if (!isPlainObject(doc.namespaceLabels)) throw new ConfigError(file, 'namespaceLabels', 'must be a map');
    for (const [ns, labels] of Object.entries(doc.namespaceLabels))
      namespaceLabels.set(ns, stringMap(file, `namespaceLabels.${ns}`, labels ?? {}));
  }
  if (!Array.isArray(doc.expect) || doc.expect.length === 0)
    throw new ConfigError(file, 'expect', 'must list at least one object');
  const expect = doc.expect.map((e, i): Expectation => {
    const path = `expect[${i}]`;
    if (!isPlainObject(e)) throw new ConfigError(file, path, 'must be an object');
    rejectUnknownFields(file, path, e, EXPECT_FIELDS);
    if (e.allowed !== undefined && typeof e.allowed !== 'boolean')
      throw new ConfigError(file, `${path}.allowed`, 'must be true or false');
    const plugins = e.plugins === undefined ? {} : stringMap(file, `${path}.plugins`, e.plugins);
    for (const [plugin, decision] of Object.entries(plugins))
      if (!(DECISIONS as readonly string[]).includes(decision))
        throw new ConfigError(file, `${path}.plugins.${plugin}`, `must be one of ${DECISIONS.join(', ')}`);
    return {
      kind: stringOf(file, `${path}.kind`, e.kind) as string,
      namespace: stringOf(file, `${path}.namespace`, e.namespace, false) ?? '',
      name: stringOf(file, `${path}.name`, e.name) as string,
      ...(e.allowed !== undefined && { allowed: e.allowed }),
      plugins: plugins as Record<string, ExpectedDecision>,
      ...(e.message !== undefined && { message: stringOf(file, `${path}.message`, e.message) }),
    };
  });
  return {
    file,
    name,
    ...(config !== undefined && { config: resolve(base, config) }),
    manifests,
    namespace: stringOf(file, 'namespace', doc.namespace, false) ?? 'default',
    user,
    namespaceLabels,
    expect,
  };
}

/** Every test file under `dir` (recursively): YAML files whose kind is AdmissionTest. */
export function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (/\.ya?ml$/i.test(name) && /^kind:\s*AdmissionTest\s*$/m.test(readFileSync(path, 'utf8'))) out.push(path);
  }
  return out;
}

const refOf = (kind: string, namespace: string, name: string) =>
  `${kind} ${namespace === '' ? name : `${namespace}/${name}`}`;

/** The differences between what was expected and what the chain answered: [] when it passed. */
export function compare(expectations: readonly Expectation[], results: readonly ObjectResult[]): string[] {
  const lines: string[] = [];
  for (const e of expectations) {
    const ref = refOf(e.kind, e.namespace, e.name);
    const result = results.find(
      (r) => r.ref.kind === e.kind && r.ref.name === e.name && r.ref.namespace === e.namespace,
    );
    if (!result) {
      lines.push(`${ref}: not among the manifests`);
      continue;
    }
    const diffs: string[] = [];
    if (e.allowed !== undefined && e.allowed !== result.allowed)
      diffs.push(`allowed: expected ${e.allowed}, got ${result.allowed}`);
    for (const [plugin, expected] of Object.entries(e.plugins)) {
      const got = result.plugins.find((p) => p.plugin === plugin)?.decision ?? 'not-called';
      if (got !== expected) diffs.push(`${plugin}: expected ${expected}, got ${got}`);
    }
    const message = result.status?.message ?? '';
    if (e.message !== undefined && !message.includes(e.message))
      diffs.push(`message: expected to contain ${JSON.stringify(e.message)}, got ${JSON.stringify(message)}`);
    if (diffs.length > 0) lines.push(`${ref}:`, ...diffs.map((d) => `  ${d}`));
  }
  return lines;
}

export interface TestOutcome {
  readonly test: AdmissionTest;
  readonly differences: readonly string[];
}

/** Runs one test in a fresh chain: its manifests, namespaces first, then its expectations. */
export async function runAdmissionTest(test: AdmissionTest, env: NodeJS.ProcessEnv): Promise<TestOutcome> {
  const chain = new AdmissionChain({
    ...(test.config !== undefined && { configFile: test.config }),
    env,
    user: test.user,
    namespaces: test.namespaceLabels,
  });
  const results: ObjectResult[] = [];
  for (const { object, source } of namespacesFirst(readManifests(test.manifests)))
    results.push(await chain.admit(object, relative(dirname(test.file), source) || source, 'all', test.namespace));
  return { test, differences: compare(test.expect, results) };
}
