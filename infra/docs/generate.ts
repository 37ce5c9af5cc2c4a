// `npm run docs`: regenerates every part of the documentation that derives from code (the plugin
// table, each plugin page's header, example and parity figures, the every-webhook table, the
// seeding table, the performance figures and chart) and leaves the hand-written text around them
// as it is. `--check` only compares, and exits 1 naming each file that differs; the test suite
// runs the same comparison (test/docs/drift.test.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { fillRegions, MarkdownError } from './markdown.js';
import type { BenchResults } from './performance.js';
import { performanceRegions, performanceSvg } from './performance.js';
import type { PluginFacts } from './plugin-facts.js';
import { pluginFacts } from './plugin-facts.js';
import {
  pluginExample,
  pluginHeader,
  pluginPage,
  pluginParity,
  pluginTable,
  seedingCommandBlock,
  seedingTable,
  webhookTable,
} from './render.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const PLUGINS_DIR = 'docs/plugins';
export const PERFORMANCE_SVG = 'docs/img/performance.svg';
export const BENCH_RESULTS = 'bench/results.json';

/** Every Markdown page the documentation is made of: README.md and docs/**, relative to the root. */
export function markdownPages(root: string = ROOT): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** The hand-written frame of a new plugin page: its sections, with the generated regions in place. */
export function pluginPageSkeleton(facts: PluginFacts): string {
  const region = (name: string) => `<!-- BEGIN GENERATED: ${name} -->\n<!-- END GENERATED -->`;
  return [
    `# ${facts.metadata.upstreamName}`,
    '',
    "<!-- write: what upstream's plugin is for, in two or three sentences -->",
    '',
    region('plugin-header'),
    '',
    '## Configure',
    '',
    region('plugin-example'),
    '',
    '## Why its webhooks fail open or closed',
    '',
    '## What it learns',
    '',
    '## Parity with upstream',
    '',
    region('plugin-parity'),
    '',
    '## Differences from upstream',
    '',
  ].join('\n');
}

class Sources {
  #facts?: PluginFacts[];
  #bench?: BenchResults;
  constructor(readonly root: string) {}
  get facts(): PluginFacts[] {
    this.#facts ??= pluginFacts(this.root);
    return this.#facts;
  }
  get bench(): BenchResults {
    this.#bench ??= JSON.parse(readFileSync(join(this.root, BENCH_RESULTS), 'utf8')) as BenchResults;
    return this.#bench;
  }
  read(path: string): string | undefined {
    const file = join(this.root, path);
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  }
}

/** The plugin a page under docs/plugins documents, if any. */
function pagePlugin(sources: Sources, page: string): PluginFacts | undefined {
  if (dirname(page) !== PLUGINS_DIR) return undefined;
  return sources.facts.find((f) => pluginPage(f.metadata.name) === page.slice(PLUGINS_DIR.length + 1));
}

function regionBody(sources: Sources, page: string, name: string): string {
  const linkTo = (dir: string) => {
    const rel = relative(dirname(page), dir);
    return rel === '' ? '' : `${rel}/`;
  };
  if (name === 'plugin-table') return pluginTable(sources.facts, linkTo(PLUGINS_DIR));
  if (name === 'webhook-table') return webhookTable(sources.facts);
  if (name === 'seeding-table' || name === 'seeding-command') {
    if (page !== 'docs/seed-state.md') throw new MarkdownError(`${page}: ${name} belongs on docs/seed-state.md`);
    return name === 'seeding-table' ? seedingTable(sources.facts) : seedingCommandBlock(sources.facts);
  }
  if (name.startsWith('performance-')) {
    const body = performanceRegions(sources.bench)[name];
    if (body === undefined) throw new MarkdownError(`${page}: unknown region ${name}`);
    return body;
  }
  if (name.startsWith('plugin-')) {
    const facts = pagePlugin(sources, page);
    if (!facts) throw new MarkdownError(`${page}: region ${name} is only for a plugin's page in ${PLUGINS_DIR}`);
    if (name === 'plugin-header') return pluginHeader(facts);
    if (name === 'plugin-example') return pluginExample(facts, facts.example ? sources.read(facts.example) : undefined);
    if (name === 'plugin-parity') return pluginParity(facts);
  }
  throw new MarkdownError(`${page}: unknown region ${name}`);
}

/**
 * Every generated file as it should be, by path relative to the root: each page with its regions
 * filled, a page for each plugin that has none yet, and the performance chart. Nothing is written.
 */
export function generateDocs(root: string = ROOT): Map<string, string> {
  const sources = new Sources(root);
  const out = new Map<string, string>();
  const pages = markdownPages(root);
  for (const facts of sources.facts) {
    const page = `${PLUGINS_DIR}/${pluginPage(facts.metadata.name)}`;
    if (!pages.includes(page)) {
      pages.push(page);
      out.set(page, pluginPageSkeleton(facts));
    }
  }
  for (const page of pages) {
    const text = out.get(page) ?? sources.read(page) ?? '';
    out.set(
      page,
      fillRegions(text, page, (name) => regionBody(sources, page, name)),
    );
  }
  out.set(PERFORMANCE_SVG, performanceSvg(sources.bench));
  return out;
}

/** The generated files whose committed content differs (or that are missing). */
export function driftedFiles(root: string = ROOT): string[] {
  return [...generateDocs(root)].filter(([path, text]) => readOrUndefined(join(root, path)) !== text).map(([p]) => p);
}

function readOrUndefined(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

const USAGE = `Usage: npm run docs [-- --check]

Regenerates the documentation that derives from code: the plugin table (README.md,
docs/plugins/README.md), each plugin page's header, example and parity figures (docs/plugins/),
the every-webhook table (docs/webhooks.md), the seeding table (docs/seed-state.md), and the
performance figures and chart (docs/performance.md, ${PERFORMANCE_SVG}) from ${BENCH_RESULTS}.
Text outside the <!-- BEGIN GENERATED: name --> ... <!-- END GENERATED --> markers is kept as it is.
A plugin without a page gets one, with its hand-written sections to fill in.

Options:
  --check     write nothing; exit 1 naming every file that differs from what it would write
  -h, --help  this text
`;

export function docsCommand(argv: string[], io: { stdout: (s: string) => void; stderr: (s: string) => void }): number {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: { check: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    }).values;
  } catch (error) {
    io.stderr(`docs: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const generated = generateDocs(ROOT);
  const changed = [...generated].filter(([path, text]) => readOrUndefined(join(ROOT, path)) !== text);
  if (values.check) {
    for (const [path] of changed) io.stderr(`differs: ${path}\n`);
    io.stderr(changed.length === 0 ? 'docs: up to date\n' : 'docs: run npm run docs\n');
    return changed.length === 0 ? 0 : 1;
  }
  for (const [path, text] of changed) {
    mkdirSync(dirname(join(ROOT, path)), { recursive: true });
    writeFileSync(join(ROOT, path), text);
    io.stderr(`wrote ${path}\n`);
  }
  if (changed.length === 0) io.stderr('docs: up to date\n');
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    process.exitCode = docsCommand(process.argv.slice(2), {
      stdout: (s) => process.stdout.write(s),
      stderr: (s) => process.stderr.write(s),
    });
  } catch (error) {
    process.stderr.write(`docs: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
