import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  counterOf,
  histogramOf,
  mean,
  minus,
  parseLabels,
  quantile,
  ratioText,
  roundRatios,
  verdict,
} from './prometheus.js';

// Scraped from kube-apiserver v1.36.2 after 20 pod creates, trimmed to the admission histograms.
const METRICS = readFileSync(new URL('./fixtures/apiserver-v1.36.2-metrics.txt', import.meta.url), 'utf8');
const WEBHOOK = 'apiserver_admission_webhook_admission_duration_seconds';
const CONTROLLER = 'apiserver_admission_controller_admission_duration_seconds';

describe('parseLabels', () => {
  it('reads every label, unescaping quotes, backslashes and newlines', () => {
    expect(parseLabels('name="a\\"b",path="c:\\\\d",text="x\\ny",le="+Inf"')).toEqual({
      name: 'a"b',
      path: 'c:\\d',
      text: 'x\ny',
      le: '+Inf',
    });
  });
  it('reads a label value holding a comma or a brace', () => {
    expect(parseLabels('a="1,2",b="}"')).toEqual({ a: '1,2', b: '}' });
  });
});

describe('histogramOf on the apiserver v1.36.2 /metrics', () => {
  it('adds the series that match into one histogram, by bucket', () => {
    const webhooks = histogramOf(METRICS, WEBHOOK, (l) => l.name.startsWith('always-pull-images.'));
    expect(webhooks.count).toBe(40);
    expect(webhooks.sum).toBeCloseTo(0.100140743 + 0.034800148, 9);
    expect(webhooks.buckets.slice(0, 3)).toEqual([
      { le: 0.005, count: 39 },
      { le: 0.025, count: 39 },
      { le: 0.1, count: 40 },
    ]);
    expect(webhooks.buckets.at(-1)).toEqual({ le: Number.POSITIVE_INFINITY, count: 40 });
  });
  it('keeps a series apart by its labels (the mutating webhook alone; the plugin by name and type)', () => {
    const mutating = histogramOf(METRICS, WEBHOOK, (l) => l.type === 'admit');
    expect(mutating.count).toBe(20);
    const admit = histogramOf(METRICS, CONTROLLER, (l) => l.name === 'AlwaysPullImages' && l.type === 'admit');
    expect(admit.count).toBe(238);
    expect(admit.sum).toBeCloseTo(0.000327894, 9);
  });
  it('does not take a longer metric name for the one asked (_summary beside the histogram)', () => {
    const text = 'm_bucket{le="1"} 2\nm_bucket{le="+Inf"} 2\nm_count 2\nm_sum 1\nm_summary_count 9\nm_summary_sum 9\n';
    expect(histogramOf(text, 'm')).toEqual({
      buckets: [
        { le: 1, count: 2 },
        { le: Number.POSITIVE_INFINITY, count: 2 },
      ],
      sum: 1,
      count: 2,
    });
  });
  it('is empty for a histogram the apiserver has not observed yet (it prints none)', () => {
    const vap = histogramOf(METRICS, 'apiserver_validating_admission_policy_check_duration_seconds');
    expect(vap).toEqual({ buckets: [], sum: 0, count: 0 });
    expect(quantile(0.5, vap)).toBeNaN();
    expect(mean(vap)).toBeNaN();
  });
});

describe('quantile (histogram_quantile)', () => {
  const webhooks = histogramOf(METRICS, WEBHOOK);
  it('interpolates within the first bucket from 0', () => {
    expect(quantile(0.5, webhooks)).toBeCloseTo((0.005 * 20) / 39, 12);
  });
  it('falls in the bucket the rank reaches, skipping empty ones', () => {
    // rank 39.6: past 0.005 (39) and 0.025 (39), inside 0.1 (40).
    expect(quantile(0.99, webhooks)).toBeCloseTo(0.025 + 0.075 * 0.6, 12);
  });
  it('answers the highest finite bound for a rank in the +Inf bucket', () => {
    const h = {
      buckets: [
        { le: 1, count: 1 },
        { le: Number.POSITIVE_INFINITY, count: 4 },
      ],
      sum: 9,
      count: 4,
    };
    expect(quantile(0.99, h)).toBe(1);
  });
  it('measures a round: the difference of two scrapes', () => {
    const before = histogramOf(METRICS, WEBHOOK, (l) => l.type === 'admit');
    const after = {
      ...before,
      buckets: before.buckets.map((b) => ({ le: b.le, count: b.count + (b.le >= 0.025 ? 10 : 0) })),
      sum: before.sum + 0.2,
      count: before.count + 10,
    };
    const round = minus(after, before);
    expect(round.count).toBe(10);
    expect(round.sum).toBeCloseTo(0.2, 12);
    // Ten observations, all between 5 and 25 ms.
    expect(quantile(0.5, round)).toBeCloseTo(0.005 + 0.02 * 0.5, 12);
    expect(mean(round)).toBeCloseTo(0.02, 12);
  });
});

describe('roundRatios and verdict', () => {
  it('divides round by round, then takes the median and the range', () => {
    const ratio = roundRatios([2, 3, 9], [1, 2, 3]);
    expect(ratio).toEqual({ median: 2, min: 1.5, max: 3 });
    expect(ratioText(ratio!)).toBe('2 (1.5–3)');
  });
  it('has no ratio without rounds, or against a baseline that measured nothing', () => {
    expect(roundRatios([], [])).toBeUndefined();
    expect(roundRatios([1], [0])).toBeUndefined();
    expect(roundRatios([1, 2], [1])).toBeUndefined();
  });
  it('says met only when every round is within the target', () => {
    expect(verdict({ median: 1.5, min: 1.2, max: 2 }, 2)).toBe('met');
    expect(verdict({ median: 1.5, min: 1.2, max: 2.4 }, 2)).toBe('met at the median');
    expect(verdict({ median: 2.1, min: 1.2, max: 2.4 }, 2)).toBe('unmet');
  });
});

describe('counterOf', () => {
  const TEXT = [
    '# TYPE apiserver_admission_webhook_fail_open_count counter',
    'apiserver_admission_webhook_fail_open_count{name="a.validate.x",type="validating"} 2',
    'apiserver_admission_webhook_fail_open_count{name="a.mutate.x",type="admit"} 1',
    'apiserver_admission_webhook_fail_open_count{name="b.validate.x",type="validating"} 7',
    'apiserver_admission_webhook_fail_open_count_other{name="a.validate.x"} 100',
  ].join('\n');
  it("adds the matching series of exactly that metric's name", () => {
    expect(counterOf(TEXT, 'apiserver_admission_webhook_fail_open_count', (l) => l.name.startsWith('a.'))).toBe(3);
  });
  it('is 0 for a counter the apiserver has not printed yet', () => {
    expect(counterOf(METRICS, 'apiserver_admission_webhook_fail_open_count')).toBe(0);
  });
});
