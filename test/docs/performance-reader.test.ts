import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { BenchResults, ReaderResults } from '../../infra/docs/performance.js';
import { BenchResultsError, performanceRegions, readerRegion } from '../../infra/docs/performance.js';

const row = (pods: number, peak: number, figures: Record<string, unknown> = {}) => ({
  pods,
  namespaces: Math.ceil(pods / 25),
  nodes: Math.ceil(pods / 30),
  rounds: 3,
  'peak RSS MB': peak,
  'floor peak RSS MB': 45,
  'load CPU ms': 100,
  'floor load CPU ms': 26,
  'first run CPU ms': 4000,
  'second run CPU ms': 60,
  'floor CPU ms': 26,
  'first list s': 10.5,
  'store writes': 7000,
  'store reads': 150,
  errors: 0,
  ...figures,
});

const reader = (rows: Record<string, unknown>[]): ReaderResults => ({
  date: '2026-12-02T00:00:00Z',
  watchSeconds: 3,
  rssMbPer1000Pods: 41.2,
  rows,
});

describe('the performance page: the cluster reader', () => {
  const region = readerRegion(reader([row(3000, 206), row(100, 85), row(1000, 122)]), 320);

  it('gives each size in order, the memory its peak needs, and its first run at the setting', () => {
    const lines = region.split('\n').filter((l) => /^\| [\d,]+ \|/.test(l));
    expect(lines.map((l) => l.split(' | ')[0])).toEqual(['| 100', '| 1,000', '| 3,000']);
    // 206 / 0.75 = 274.7 → 320; 4,000 ms of CPU × 1,769 / 320 MB = 22.1 s.
    expect(region).toContain('| 3,000 | 120 | 100 | 206 (45) | 100 (26) | 4,000 | 10.5 | 7,000 | 320 | 22.1 |');
    // 85 / 0.75 = 113 → the minimum, 128; 122 / 0.75 = 162.7 → 192.
    expect(lines[0]).toContain('| 85 (45) |');
    expect(lines[0]).toContain('| 128 |');
    expect(lines[1]).toContain('| 192 |');
    expect(region).toContain('Medians of 3 rounds');
    expect(region).toContain('Each invocation watched 3 s instead of 50');
  });

  it('says how far the setting reaches and what a larger cluster needs', () => {
    // 320 × 0.75 = 240 MB; (240 − 206) / 41.2 per 1,000 = 825 pods past 3,000 → 3,800 (to the 100).
    expect(region).toContain('The peak RSS grows by about 41.2 MB per 1,000 pods.');
    expect(region).toContain('holds the peak of a cluster up to about 3,800 pods with a quarter to spare');
    // 206 + 7 × 41.2 = 494.4 MB; / 0.75 = 659.2 → 704.
    expect(region).toContain('10,000 pods, about 494 MB at peak, need 704 MB');
  });

  it('prices a month of one run a minute at the setting', () => {
    // 43,200 runs × 50 s × 0.3125 GB = 675,000 GB-s × $0.0000133334 = $9.00; 64 MB: $1.80.
    expect(region).toContain(
      '43,200 runs a month × 50 s × 0.3125 GB × $0.0000133334 = $9.00 a month at 320 MB, and $1.80 more for each further 64 MB',
    );
  });

  it('marks sizes whose runs reported errors', () => {
    expect(readerRegion(reader([row(100, 85), row(1000, 122, { errors: 2 })]), 320)).toContain(
      'Runs reported errors at 1000 pods',
    );
    expect(region).not.toContain('reported errors');
  });

  it('names the field a run left out', () => {
    const { 'first list s': _, ...partial } = row(100, 85);
    expect(() => readerRegion(reader([partial]), 320)).toThrow(
      new BenchResultsError('bench/results.json: reader 100 pods has no number "first list s"'),
    );
  });

  it('says the section is not measured yet when the results have none', () => {
    const committed = JSON.parse(readFileSync('bench/results.json', 'utf8')) as BenchResults;
    const { reader: _, ...withoutReader } = committed;
    expect(performanceRegions(withoutReader as BenchResults)['performance-reader']).toBe(
      'Not measured yet: `npm run bench -- --only reader --merge bench/results.json` (needs KUBEBUILDER_ASSETS).',
    );
  });
});
