// The pages say what is true now, not how it came to be: no round of work, session, issue number,
// load average or timestamp in the prose. The one date is the performance page's, of the bench run
// it quotes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownPages, ROOT } from '../../infra/docs/generate.js';
import { withoutCode } from '../../infra/docs/markdown.js';

const HISTORY: readonly [string, RegExp][] = [
  ['a round of work', /\brounds? of work\b|\bwork rounds?\b/i],
  ['a session', /\bsessions?\b/i],
  ['an issue number', /\bissues? #?\d+|(?<![\w/(])#\d+(?![\w-])/i],
  ['a load average', /\bload average/i],
  ['a time of day', /\b\d{1,2}:\d{2}(:\d{2})?\s*(UTC|Z)\b|T\d{2}:\d{2}/],
  ['a day that moves', /\b(today|yesterday|tonight)\b/i],
];
const DATE = /\b(19|20)\d{2}-\d{2}-\d{2}\b/g;

/** What tells history in a text, as `what: the words`. */
function historyIn(text: string): string[] {
  return HISTORY.flatMap(([what, pattern]) => {
    const found = pattern.exec(text);
    return found ? [`${what}: ${found[0]}`] : [];
  });
}

describe('no page tells the project’s history', () => {
  it.each(markdownPages())('%s', (page) => {
    // Code shows what a reader types or sees (a CEL timestamp literal is no history).
    const text = withoutCode(readFileSync(join(ROOT, page), 'utf8'));
    expect(historyIn(text)).toEqual([]);
    const dates = text.match(DATE) ?? [];
    expect(dates.length, `dates on ${page}: ${dates.join(', ')}`).toBe(page === 'docs/performance.md' ? 1 : 0);
  });

  it('finds each kind of history', () => {
    expect(
      historyIn(
        'Measured in the previous session (the full run of 2026-11-23 05:51 UTC, load average 1.5), ' +
          'as issue 19 asked in round of work 3; #28 says so, and today’s bench too.',
      ),
    ).toEqual([
      'a round of work: round of work',
      'a session: session',
      'an issue number: issue 19',
      'a load average: load average',
      'a time of day: 05:51 UTC',
      'a day that moves: today',
    ]);
    expect(
      historyIn('AWS_SESSION_TOKEN, CVE-2020-8554, [#80537](https://github.com/kubernetes/kubernetes/issues/80537)'),
    ).toEqual(['an issue number: #80537']);
  });
});
