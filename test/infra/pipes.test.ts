// Output meant for a file or a pipe is the only thing on stdout, however the docs invoke the
// command: each data-writing command runs here as the README and docs/ invoke it (`npm run -s`),
// and as a user types it (`npm run`, whose banner the project's .npmrc keeps off stdout), with stdout redirected to a file
// that is then parsed as what it claims to be. Progress and notes go to stderr.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { testStore } from '../support/dynamodb.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'pipes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm <args>` in the repository, stdout into a file as `> file` would, stderr captured. */
function npmToFile(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; file: string; stderr: string } {
  const file = join(dir, `stdout-${args.filter((a) => /^[\w-]+$/.test(a)).join('-')}-${Date.now()}`);
  const fd = openSync(file, 'w');
  try {
    const run = spawnSync('npm', args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { status: run.status, file, stderr: run.stderr };
  } finally {
    closeSync(fd);
  }
}

const CHECK = [
  '-f',
  'test/fixtures/admission-tests/manifests/',
  '--config',
  'test/fixtures/admission-tests/admission.yaml',
];

describe('data on stdout, nothing else, as the docs invoke each command', () => {
  it('check -o json: the report parses as JSON (exit 1: the fixtures hold a refusal)', () => {
    const { status, file, stderr } = npmToFile(['run', '-s', 'check', '--', ...CHECK, '-o', 'json']);
    expect(status, stderr).toBe(1);
    const report = JSON.parse(readFileSync(file, 'utf8'));
    expect(report.summary.objects).toBe(report.objects.length);
    expect(report.summary.refused).toBeGreaterThan(0);
  });

  it('check -o yaml: the report parses as one YAML document', () => {
    const { status, file, stderr } = npmToFile(['run', '-s', 'check', '--', ...CHECK, '-o', 'yaml']);
    expect(status, stderr).toBe(1);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('objects:')).toBe(true);
    const report = parse(text);
    expect(report.summary.objects).toBe(report.objects.length);
    expect(report.summary.refused).toBeGreaterThan(0);
  });

  // As a user types them: without -s, npm's banner must not land in the file either (.npmrc).
  it.each([[['-s']], [[]]])('check -o json, audit and emit with npm run %j: stdout parses', (silent) => {
    const check = npmToFile(['run', ...silent, 'check', '--', ...CHECK, '-o', 'json']);
    expect(check.status, check.stderr).toBe(1);
    expect(JSON.parse(readFileSync(check.file, 'utf8')).summary.refused).toBeGreaterThan(0);
    const audit = npmToFile([
      'run',
      ...silent,
      'audit',
      '--',
      '--from',
      'test/fixtures/kubectl/namespaces.json',
      '--from',
      'test/fixtures/kubectl/deployments-services.json',
    ]);
    expect(audit.status, audit.stderr).toBe(0);
    const reports = parseAllDocuments(readFileSync(audit.file, 'utf8'));
    expect(reports.length).toBeGreaterThan(0);
    for (const d of reports) expect([d.errors, d.toJS()?.apiVersion]).toEqual([[], 'wgpolicyk8s.io/v1alpha2']);
    const emit = npmToFile(['run', ...silent, 'emit', '--', '--base-url', 'https://admission.example.com']);
    expect(emit.status, emit.stderr).toBe(0);
    const webhooks = parseAllDocuments(readFileSync(emit.file, 'utf8'));
    expect(webhooks.length).toBeGreaterThan(0);
    for (const d of webhooks)
      expect([d.errors, d.toJS()?.kind]).toEqual([[], expect.stringMatching(/WebhookConfiguration$/)]);
    expect(emit.stderr).not.toContain('> serverless-admission@');
  });

  it("npm's own errors: a mistyped script fails, and --loglevel=notice names it", () => {
    expect(npmToFile(['run', 'emitt']).status).not.toBe(0);
    const { status, stderr } = npmToFile(['run', 'emitt', '--loglevel=notice']);
    expect(status).not.toBe(0);
    expect(stderr).toContain('Missing script: "emitt"');
  });

  it('audit: PolicyReports as multi-document YAML that kubectl apply reads; the summary on stderr', () => {
    const { status, file, stderr } = npmToFile([
      'run',
      '-s',
      'audit',
      '--',
      '--from',
      'test/fixtures/kubectl/namespaces.json',
      '--from',
      'test/fixtures/kubectl/deployments-services.json',
    ]);
    expect(status, stderr).toBe(0);
    const documents = parseAllDocuments(readFileSync(file, 'utf8'));
    expect(documents.length).toBeGreaterThan(0);
    for (const document of documents) {
      expect(document.errors).toEqual([]);
      expect(document.toJS()).toMatchObject({ apiVersion: 'wgpolicyk8s.io/v1alpha2' });
      expect(['PolicyReport', 'ClusterPolicyReport']).toContain(document.toJS().kind);
    }
    expect(stderr).toContain('audit: configuration');
  });

  it('emit: webhook configurations as multi-document YAML; notes on stderr', () => {
    const { status, file, stderr } = npmToFile([
      'run',
      '-s',
      'emit',
      '--',
      '--base-url',
      'https://admission.example.com',
    ]);
    expect(status, stderr).toBe(0);
    const kinds = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
      expect(d.errors).toEqual([]);
      return d.toJS()?.kind;
    });
    expect(kinds.length).toBeGreaterThan(0);
    for (const kind of kinds)
      expect(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']).toContain(kind);
  });

  it('check-config: which plugins the file selects, then one line per plugin', () => {
    const { status, file, stderr } = npmToFile(['run', '-s', 'check-config', '--', 'config/admission.yaml']);
    expect(status, stderr).toBe(0);
    const [first, ...rest] = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(first).toMatch(/^config\/admission\.yaml names no plugin: serving the default-on set \(\d+ plugins\)/);
    expect(rest.length).toBeGreaterThan(0);
    for (const line of rest) expect(line).toMatch(/^(ok|--) {2}\S/);
  });

  it('pki: one line per certificate and the truststore; what it did on stderr', () => {
    const pki = join(dir, 'pki');
    const { status, file, stderr } = npmToFile(['run', '-s', 'pki', '--', '--dir', pki]);
    expect(status, stderr).toBe(0);
    expect(stderr).toContain(`created a local PKI in ${pki}`);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(['ca', 'server', 'client', 'truststore']);
    expect(readdirSync(pki)).toContain('truststore.pem');
  });

  it('sync: writes nothing to stdout; what it loaded on stderr', async () => {
    const store = await testStore('pipes-sync');
    onTestFinished(() => store.close());
    const listing = join(dir, 'namespaces.json');
    writeFileSync(listing, readFileSync(join(ROOT, 'test/fixtures/kubectl/namespaces.json')));
    const { status, file, stderr } = npmToFile(['run', '-s', 'sync', '--', '--from', listing], {
      DYNAMODB_ENDPOINT: store.endpoint,
      STATE_TABLE: store.tableName,
    });
    expect(status, stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('');
    expect(stderr).toContain(`table ${store.tableName}`);
  });
});

/** The lines of a Markdown file's fenced code blocks. */
function codeLines(markdown: string): string[] {
  const lines: string[] = [];
  let inBlock = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inBlock = !inBlock;
    else if (inBlock) lines.push(line);
  }
  return lines;
}

/** An `npm run` without -s whose stdout goes to a file or a pipe. */
const UNSILENCED_REDIRECT = /\bnpm run (?!-s\b)[\w-]+[^#]*?(?:[^2&]>\s*[^&\s]|\|\s*\S)/;

describe('the docs redirect and pipe commands only with npm run -s', () => {
  it('the check can see one', () => {
    expect(
      codeLines('```sh\nnpm run audit -- --from a.json > reports.yaml\n```\n').filter((l) =>
        UNSILENCED_REDIRECT.test(l),
      ),
    ).toHaveLength(1);
    expect(UNSILENCED_REDIRECT.test('npm run -s audit -- --from a.json > reports.yaml')).toBe(false);
    expect(UNSILENCED_REDIRECT.test('npm run sync -- --from a.json 2>/dev/null')).toBe(false);
  });

  const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith('.md'),
  );
  it.each(docs)('%s', (doc) => {
    expect(codeLines(readFileSync(join(ROOT, doc), 'utf8')).filter((l) => UNSILENCED_REDIRECT.test(l))).toEqual([]);
  });
});
