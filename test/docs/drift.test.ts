// The documentation that derives from code is what `npm run docs` writes: the plugin table, each
// plugin page's header, example and parity figures, the every-webhook and seeding tables, the
// performance figures and chart. A committed page that differs fails here, naming the file; the
// fix is `npm run docs`.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateDocs, markdownPages, PERFORMANCE_SVG, ROOT } from '../../infra/docs/generate.js';
import { fillRegions, regionNames } from '../../infra/docs/markdown.js';
import { plugins } from '../../functions/index.js';
import { PARITY } from '../../infra/docs/parity.js';
import { WEBHOOK_REASONS } from '../../infra/docs/webhook-reasons.js';

const generated = generateDocs(ROOT);
const committed = (path: string) => {
  const file = join(ROOT, path);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
};

describe('the committed documentation is what npm run docs writes', () => {
  it.each([...generated.keys()])('%s', (path) => {
    expect(committed(path), `${path} differs from what npm run docs writes: run npm run docs`).toBe(
      generated.get(path),
    );
  });

  it('covers the plugin table, every plugin page, the webhook and seeding tables, and the performance page', () => {
    const regions = (page: string) => regionNames(committed(page) ?? '');
    expect(regions('README.md')).toContain('plugin-table');
    expect(regions('docs/plugins/README.md')).toContain('plugin-table');
    for (const { metadata } of plugins)
      expect(regions(`docs/plugins/${metadata.name}.md`)).toEqual(['plugin-header', 'plugin-example', 'plugin-parity']);
    expect(regions('docs/webhooks.md')).toContain('webhook-table');
    expect(regions('docs/seed-state.md')).toEqual(expect.arrayContaining(['seeding-table', 'seeding-command']));
    expect(regions('docs/performance.md')).toEqual(expect.arrayContaining(['performance-run', 'performance-summary']));
    expect(generated.has(PERFORMANCE_SVG)).toBe(true);
  });

  it('every plugin has parity figures and its judging webhooks a reason; none is left over', () => {
    const names = plugins.map((p) => p.metadata.name).sort();
    expect(Object.keys(PARITY).sort()).toEqual(names);
    expect(Object.keys(WEBHOOK_REASONS).sort()).toEqual(names);
  });

  it('a region edited by hand is put back, and the text around it is kept byte for byte', () => {
    const page = 'docs/webhooks.md';
    const text = committed(page) ?? '';
    const tampered = text.replace(/\| `always-pull-images\.validate` \|[^\n]*\n/, '');
    expect(tampered).not.toBe(text);
    const around = (s: string) =>
      s.replace(/<!-- BEGIN GENERATED: webhook-table -->[\s\S]*?<!-- END GENERATED -->/, '');
    const restored = fillRegions(
      tampered,
      page,
      () =>
        /<!-- BEGIN GENERATED: webhook-table -->\n([\s\S]*?)\n<!-- END GENERATED -->/.exec(
          generated.get(page) ?? '',
        )?.[1] ?? '',
    );
    expect(restored).toBe(generated.get(page));
    expect(around(restored)).toBe(around(text));
  });

  it('covers every page there is', () => {
    for (const page of markdownPages()) expect(generated.has(page)).toBe(true);
  });
});
