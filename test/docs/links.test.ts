// Every relative link and #anchor in README.md and docs/ resolves: the file exists, and the anchor is
// one GitHub makes of a heading of that page (or an explicit <a id>). Links to other sites are not
// followed: the suite runs without a network.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownPages, ROOT } from '../../infra/docs/generate.js';
import { anchors, isRelative, links, slug } from '../../infra/docs/markdown.js';

const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

function brokenLinks(page: string, text = read(page)): string[] {
  const problems: string[] = [];
  for (const { target, line } of links(text)) {
    if (!isRelative(target)) continue;
    const at = `${page}:${line}: ${target}`;
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
    if (resolved.startsWith('..')) {
      problems.push(`${at}: outside the repository`);
      continue;
    }
    const file = join(ROOT, resolved);
    if (!existsSync(file)) {
      problems.push(`${at}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(file).isDirectory() || !resolved.endsWith('.md')) {
      problems.push(`${at}: an anchor into something that is not a page`);
      continue;
    }
    if (!anchors(read(resolved)).has(anchor)) problems.push(`${at}: no heading makes #${anchor}`);
  }
  return problems;
}

describe('GitHub heading anchors', () => {
  it.each([
    ['Try it locally', 'try-it-locally'],
    ['4. Read its metrics', '4-read-its-metrics'],
    ['Warn and Audit instead of Deny; exemptions', 'warn-and-audit-instead-of-deny-exemptions'],
    ['`npm run check`: the admission chain, offline', 'npm-run-check-the-admission-chain-offline'],
    [
      '3b. EKS, GKE, AKS (url-secret), without a domain of your own',
      '3b-eks-gke-aks-url-secret-without-a-domain-of-your-own',
    ],
    ['Rotate the PKI', 'rotate-the-pki'],
  ])('%s -> #%s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it('numbers repeated headings as GitHub does', () => {
    expect([...anchors('# A\n## Notes\n### Notes\n```sh\n# not a heading\n```\n## Notes\n')]).toEqual([
      'a',
      'notes',
      'notes-1',
      'notes-2',
    ]);
  });
});

describe('every relative link and anchor resolves', () => {
  it.each(markdownPages())('%s', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('reports a missing file, a missing anchor, and a link out of the repository', () => {
    const text =
      '[ok](try-locally.md#1-start-the-server) [gone](nowhere.md) [bad](try-locally.md#no-such-heading)\n' +
      '[out](../../elsewhere.md) `[code](nowhere-either.md)` [web](https://example.com/x.md)\n';
    expect(brokenLinks('docs/README.md', text)).toEqual([
      'docs/README.md:1: nowhere.md: no such file',
      'docs/README.md:1: try-locally.md#no-such-heading: no heading makes #no-such-heading',
      'docs/README.md:2: ../../elsewhere.md: outside the repository',
    ]);
  });
});
