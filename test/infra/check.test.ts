// `npm run check`, run in-process as the CLI runs it: reports, exit codes, namespace labels,
// progress, and the AdmissionTest files (--tests) with their diffs.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCommand } from '../../infra/check/cli.js';

const TESTS = new URL('../fixtures/admission-tests/', import.meta.url).pathname;
const CONFIG = join(TESTS, 'admission.yaml');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'check-cli-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await checkCommand(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: {},
  });
  return { code, stdout, stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const pod = (name: string, namespace: string, policy = 'IfNotPresent') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  containers: [{name: c, image: nginx, imagePullPolicy: ${policy}}]
`;

describe('npm run check -f', () => {
  it('prints each plugin decision and the patch as a diff, and exits 1 when an object is refused', async () => {
    const { code, stdout } = await run('-f', join(TESTS, 'manifests'), '--config', CONFIG);
    expect(code).toBe(1);
    expect(stdout).toContain('Pod team-a/web (');
    expect(stdout).toMatch(
      / {2}always-pull-images +patched\n {6}~ spec\.containers\[0\]\.imagePullPolicy: "IfNotPresent" -> "Always"/,
    );
    expect(stdout).toMatch(
      /Pod team-a\/web-2 \(.*\): REFUSED \(403\)\n {2}admission webhook "resource-quota\.validate\.serverless-admission\.io" denied the request: /,
    );
    expect(stdout).toMatch(/Warning: .*external IPs/);
    expect(stdout).toMatch(/6 objects: 5 admitted, 1 refused\n$/);
  });

  it('exits 0 when every object is admitted; -o json carries the same facts', async () => {
    const manifest = file('ok.yaml', pod('fine', 'apps', 'Always'));
    const { code, stdout } = await run('-f', manifest, '--config', CONFIG, '-o', 'json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as {
      objects: { name: string; allowed: boolean; plugins: { plugin: string; decision: string }[] }[];
    };
    expect(report.objects).toHaveLength(1);
    expect(report.objects[0]).toMatchObject({ kind: 'Pod', namespace: 'apps', name: 'fine', allowed: true });
    expect(report.objects[0].plugins).toContainEqual(
      expect.objectContaining({ plugin: 'always-pull-images', decision: 'allowed' }),
    );
  });

  it('--namespace-labels gives an existing namespace labels an exemption selects on', async () => {
    const config = file(
      'exempt-by-label.yaml',
      `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: AlwaysPullImages
  exemptions:
    namespaceSelector: {matchLabels: {legacy: "true"}}
`,
    );
    const manifest = file('old.yaml', pod('old', 'old'));
    const plain = await run('-f', manifest, '--config', config, '-o', 'json');
    const labelled = await run(
      '-f',
      manifest,
      '--config',
      config,
      '-o',
      'json',
      '--namespace-labels',
      'old=legacy=true',
    );
    const decisionOf = (out: string) =>
      (JSON.parse(out) as { objects: { plugins: { plugin: string; decision: string }[] }[] }).objects[0].plugins.find(
        (p) => p.plugin === 'always-pull-images',
      )?.decision;
    expect(decisionOf(plain.stdout)).toBe('patched');
    expect(decisionOf(labelled.stdout)).toBeUndefined();
  });

  it('reports progress on stderr for long inputs', async () => {
    const many = Array.from(
      { length: 120 },
      (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${i}, namespace: apps}\ndata: {k: v}\n`,
    ).join('---\n');
    const { code, stderr } = await run('-f', file('many.yaml', many), '--config', CONFIG);
    expect(code).toBe(0);
    expect(stderr).toContain('check: 100/120 objects');
  });

  it.each([
    ['no -f', [], /-f FILE\|DIR is required/],
    ['an unknown output', ['-f', 'x.yaml', '-o', 'xml'], /--output must be text, json or yaml/],
    ['a bad --namespace-labels', ['-f', 'x.yaml', '--namespace-labels', 'team-a=env'], /"env" is not KEY=VALUE/],
    ['a missing file', ['-f', '/no/such/file.yaml'], /\/no\/such\/file\.yaml: no such file or directory/],
    ['an unknown option', ['--fiel', 'x'], /Unknown option '--fiel'/],
  ])('exits 2 on %s', async (_what, argv, message) => {
    const { code, stderr } = await run(...(argv as string[]));
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('exits 2 naming the document that is not an object it can create', async () => {
    const manifest = file('bad.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n');
    const { code, stderr } = await run('-f', manifest, '--config', CONFIG);
    expect(code).toBe(2);
    expect(stderr).toContain('bad.yaml#1: Pod has neither metadata.name nor metadata.generateName');
  });

  it('--help shows examples', async () => {
    const { code, stdout } = await run('--help');
    expect(code).toBe(0);
    expect(stdout).toContain('npm run check -- -f deploy/');
    expect(stdout).toContain('npm run check -- --tests');
  });
});

describe('npm run check --tests', () => {
  it('passes the shipped example', async () => {
    const { code, stdout } = await run('--tests', TESTS);
    expect(stdout).toContain('PASS team-a-and-legacy');
    expect(code).toBe(0);
  });

  it('exits 1 with one line per difference when an expectation is not met', async () => {
    const copy = join(dir, 'failing');
    cpSync(TESTS, copy, { recursive: true });
    const test = join(copy, 'team-a.test.yaml');
    writeFileSync(
      test,
      readFileSync(test, 'utf8')
        .replace('always-pull-images: patched', 'always-pull-images: allowed')
        .replace('  name: web-2\n  allowed: false', '  name: web-2\n  allowed: true'),
    );
    const { code, stdout } = await run('--tests', copy);
    expect(code).toBe(1);
    expect(stdout).toContain('FAIL team-a-and-legacy');
    expect(stdout).toContain('  Pod team-a/web:\n    always-pull-images: expected allowed, got patched\n');
    expect(stdout).toContain('  Pod team-a/web-2:\n    allowed: expected true, got false\n');
    expect(stdout).toContain('1 test: 0 passed, 1 failed');
  });

  it('exits 2 on a misspelt field, naming the file, the field and the closest known one', async () => {
    const bad = join(dir, 'misspelt');
    mkdirSync(bad, { recursive: true });
    writeFileSync(
      join(bad, 't.yaml'),
      `apiVersion: serverless-admission.io/v1alpha1
kind: AdmissionTest
metadata: {name: t}
manifests: [x.yaml]
expect:
- {kind: Pod, name: p, plugns: {}}
`,
    );
    const { code, stderr } = await run('--tests', bad);
    expect(code).toBe(2);
    expect(stderr).toMatch(/t\.yaml: expect\[0\]\.plugns: unknown field "plugns"; did you mean "plugins"\?/);
  });
});
