import { describe, expect, it } from 'vitest';
import { apiserverRegion, BenchResultsError } from '../../infra/docs/performance.js';

const row = (path: string, p50: number, ratio: number, admission: number) => ({
  plugin: 'namespace-reservation',
  path,
  baseline: 'none',
  'client p50 ms': p50,
  'client p50 ms / baseline': ratio,
  'client p50 ms / baseline spread': `${ratio}–${ratio}`,
  'admission ms per request': 0.2 * admission,
  'admission ms per request / baseline': admission,
  'admission ms per request / baseline spread': `${admission}–${admission}`,
});

describe('the performance page: through kube-apiserver', () => {
  it('gives one row per plugin against its baseline (no plugin where there is no built-in), with targets', () => {
    const region = apiserverRegion({
      date: '2026-12-01T00:00:00Z',
      requests: 20,
      rows: [row('none', 10, 1, 1), row('webhook mTLS', 14, 1.4, 16), row('native', 11, 1.1, 4.8)],
      targets: [
        {
          plugin: 'namespace-reservation',
          target: 'native admission ≤ 2× no plugin',
          ratio: 4.8,
          spread: '4–5.7',
          verdict: 'unmet',
          floor: "the apiserver's policy dispatch",
        },
      ],
    });
    expect(region).toContain('rounds of 20 requests per path');
    expect(region).toContain(
      '| `namespace-reservation` | none | 10 | 14 ms, 1.4× (1.4–1.4) | 16× (16–16) | — | — | 11 ms, 1.1× (1.1–1.1) | 4.8× (4.8–4.8) |',
    );
    expect(region).toContain(
      "| `namespace-reservation` | native admission ≤ 2× no plugin | 4.8× (4–5.7) | unmet | the apiserver's policy dispatch |",
    );
  });
  it("reads the first run's shape (ratios to the built-in, means)", () => {
    const region = apiserverRegion({
      date: '2026-12-01T00:00:00Z',
      rows: ['built-in', 'native'].map((path) => ({
        plugin: 'always-pull-images',
        path,
        'client p50 ms': 9,
        'client p50 ms / built-in': 1.3,
        'client p50 ms / built-in spread': '1.2–1.3',
        'admission mean ms': 2.3,
        'admission mean ms / built-in': 8.8,
        'admission mean ms / built-in spread': '7.6–9.4',
      })),
    });
    expect(region).toContain(
      '| `always-pull-images` | built-in | 9 | — | — | — | — | 9 ms, 1.3× (1.2–1.3) | 8.8× (7.6–9.4) |',
    );
  });
  it('names the field a run left out', () => {
    const { 'admission ms per request': _, ...partial } = row('native', 11, 1.1, 4.8);
    expect(() => apiserverRegion({ date: 'd', rows: [row('none', 10, 1, 1), partial] })).toThrow(
      new BenchResultsError(
        'bench/results.json: apiserver namespace-reservation native has no number "admission ms per request"',
      ),
    );
  });
});
