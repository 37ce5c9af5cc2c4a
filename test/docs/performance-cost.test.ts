import { describe, expect, it } from 'vitest';
import type { BenchResults } from '../../infra/docs/performance.js';
import { BenchResultsError, costRegion, performanceRegions } from '../../infra/docs/performance.js';

const row = (name: string, figures: Record<string, unknown> = {}) => ({
  function: name,
  stateful: false,
  requests: 200,
  rounds: 3,
  'peak RSS MB': 49,
  'floor peak RSS MB': 43,
  'CPU ms/request': 0.3,
  'floor CPU ms/request': 0.01,
  'cold CPU ms': 42,
  'floor cold CPU ms': 28,
  statuses: '200:600',
  ...figures,
});

describe('the performance page: cost per function', () => {
  it('estimates each function at its deployed setting and prices a month at 10 and 100 requests a second', () => {
    const region = costRegion({ date: '2026-12-02T00:00:00Z', rows: [row('always-admit')] }, () => 512);
    // 0.3 ms × 1769 / 512 = 1.04 ms, billed 2 ms; a 30-day month at 10/s = 25,920,000 requests:
    // 25,920,000 × 0.5 GB × 0.002 s = 25,920 GB-s × $0.0000133334 = $0.35; requests $5.18; API
    // Gateway $90.72; $96.25. At 100/s, ten times each.
    expect(region).toContain(
      '| `always-admit` | 49 (43) | 0.3 (0.01) | 42 (28) | 512 | 1.04 | 145 | $96.25 ($5.53) | $962.50 ($55.30) |',
    );
    expect(region).toContain('a burst of 200 reviews');
    expect(region).toContain('medians of 3 rounds');
    expect(region).toContain(
      'billed 2 ms (Lambda rounds up to the millisecond) at 512 MB = 0.5 GB, so 25,920,000 × 0.5 GB × 0.002 s = 25,920 GB-s × $0.0000133334 = $0.35',
    );
    expect(region).toContain('API Gateway 25.92 million × $3.50 = $90.72; in all $96.25');
    // The prices' date lives in cost.ts, not on the page (one date per page: the run's).
    expect(region).toContain('read on the day `infra/serverless/cost.ts` names');
    expect(region).not.toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  it('gives the store floor beside the stateful functions when the run measured it', () => {
    const rows = [row('namespace-lifecycle', { stateful: true })];
    expect(costRegion({ date: 'd', storeCallCpuMs: 0.61, rows }, () => 1664)).toContain(
      "one raw store call, a GetItem sent with Node's http on a kept connection to DynamoDB Local and nothing else, took 0.61 ms of CPU",
    );
    expect(costRegion({ date: 'd', rows }, () => 1664)).not.toContain('raw store call');
  });

  it('marks a function whose burst was not answered 200 throughout', () => {
    const region = costRegion(
      { date: 'd', rows: [row('always-admit'), row('image-policy-webhook', { statuses: '500:600' })] },
      () => 128,
    );
    expect(region).toContain('| `image-policy-webhook` † |');
    expect(region).toContain('| `always-admit` |');
    expect(region).toContain('`image-policy-webhook`: 500:600');
  });

  it('names the field a run left out', () => {
    const { 'cold CPU ms': _, ...partial } = row('always-admit');
    expect(() => costRegion({ date: 'd', rows: [partial] }, () => 128)).toThrow(
      new BenchResultsError('bench/results.json: cost always-admit has no number "cold CPU ms"'),
    );
  });

  it('says the section is not measured yet when the results have none', async () => {
    const { readFileSync } = await import('node:fs');
    const committed = JSON.parse(readFileSync('bench/results.json', 'utf8')) as BenchResults;
    const { cost: _, ...withoutCost } = committed;
    expect(performanceRegions(withoutCost as BenchResults)['performance-cost']).toBe(
      'Not measured yet: `npm run bench -- --only cost --merge bench/results.json`.',
    );
  });
});
