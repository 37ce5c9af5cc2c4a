// The apiserver's histograms as its /metrics prints them (Prometheus text format 0.0.4), and the
// arithmetic the apiserver bench does on them: the difference between two scrapes (what one round
// added), a quantile interpolated within buckets as Prometheus' histogram_quantile does, and the
// ratios of one path's rounds to another's with their spread and a target's verdict. Pure: no I/O.
import { median, round } from './stats.js';

export type Labels = Readonly<Record<string, string>>;

export interface Histogram {
  /** Cumulative counts by upper bound, ascending; the last bound is +Inf. */
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  /** Seconds, as the apiserver records them. */
  readonly sum: number;
  readonly count: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/gy;

/** `name="AlwaysPullImages",le="0.005"` as a record; label values unescaped (\\, \", \n). */
export function parseLabels(text: string): Labels {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let match: RegExpExecArray | null;
  // biome-ignore lint/suspicious/noAssignInExpressions: a sticky regex walks the label list
  while ((match = LABEL.exec(text)) !== null) {
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (LABEL.lastIndex >= text.length) break;
  }
  return labels;
}

function bound(le: string): number {
  return le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
}

/**
 * Every series of the histogram `metric` whose labels `match` (the `le` label aside), added into
 * one histogram, as `sum by (le)` would. A metric that is absent (the apiserver prints a
 * histogram only once it has observed something) is an empty histogram.
 */
export function histogramOf(text: string, metric: string, match: (labels: Labels) => boolean = () => true): Histogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric) || line.startsWith('#')) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) continue;
    const [, name, labelText = '', valueText] = sample;
    const suffix = name.slice(metric.length);
    if (suffix !== '_bucket' && suffix !== '_sum' && suffix !== '_count') continue;
    const labels = parseLabels(labelText);
    const { le, ...rest } = labels;
    if (!match(rest)) continue;
    const value = Number(valueText);
    if (suffix === '_bucket') buckets.set(bound(le), (buckets.get(bound(le)) ?? 0) + value);
    else if (suffix === '_sum') sum += value;
    else count += value;
  }
  return {
    buckets: [...buckets].map(([le, c]) => ({ le, count: c })).sort((a, b) => a.le - b.le),
    sum,
    count,
  };
}

/** The sum of the counter `metric`'s series whose labels `match`; 0 while it is absent. */
export function counterOf(text: string, metric: string, match: (labels: Labels) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric) || line.startsWith('#')) continue;
    const sample = SAMPLE.exec(line);
    if (!sample || sample[1] !== metric) continue;
    if (match(parseLabels(sample[2] ?? ''))) total += Number(sample[3]);
  }
  return total;
}

/** What happened between two scrapes of the same histogram. */
export function minus(after: Histogram, before: Histogram): Histogram {
  return {
    buckets: after.buckets.map((b) => ({
      le: b.le,
      count: b.count - (before.buckets.find((x) => x.le === b.le)?.count ?? 0),
    })),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/**
 * Prometheus' histogram_quantile: the bucket the rank falls in, linear within it (from 0 for the
 * first bucket); a rank in the +Inf bucket is the highest finite bound. NaN with no observations.
 */
export function quantile(q: number, h: Histogram): number {
  if (h.count === 0 || h.buckets.length === 0) return Number.NaN;
  const total = h.buckets[h.buckets.length - 1].count;
  const rank = q * total;
  let below = 0;
  let lower = 0;
  for (const { le, count } of h.buckets) {
    if (count >= rank && count > below) {
      if (le === Number.POSITIVE_INFINITY) return lower;
      return lower + ((le - lower) * (rank - below)) / (count - below);
    }
    below = count;
    if (le !== Number.POSITIVE_INFINITY) lower = le;
  }
  return lower;
}

/** The mean of the observations, in seconds (exact: the sum is not bucketed). */
export function mean(h: Histogram): number {
  return h.count === 0 ? Number.NaN : h.sum / h.count;
}

export interface Ratio {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/**
 * One path's figure against its baseline's, round by round (both measured in the same round, so
 * drift in the machine's speed falls on both), then the median and range of those ratios.
 */
export function roundRatios(figures: readonly number[], baseline: readonly number[]): Ratio | undefined {
  if (figures.length === 0 || figures.length !== baseline.length) return undefined;
  const ratios = figures.map((f, i) => f / baseline[i]).filter((r) => Number.isFinite(r));
  if (ratios.length === 0) return undefined;
  return { median: round(median(ratios), 2), min: round(Math.min(...ratios), 2), max: round(Math.max(...ratios), 2) };
}

export type Verdict = 'met' | 'met at the median' | 'unmet';

/** Less is better: every round within the target, the median within it, or not even that. */
export function verdict(ratio: Ratio, target: number): Verdict {
  if (ratio.max <= target) return 'met';
  return ratio.median <= target ? 'met at the median' : 'unmet';
}

/** `1.21 (1.1–1.4)`, the form the bench prints and the generator reads back. */
export function ratioText(ratio: Ratio): string {
  return `${ratio.median} (${ratio.min}–${ratio.max})`;
}
