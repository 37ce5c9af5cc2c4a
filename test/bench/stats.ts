// Small measurement helpers: figures, never assertions.

export interface Distribution {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
}

export function distribution(samples: number[]): Distribution {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: round(at(0.5)), p99: round(at(0.99)), mean: round(mean) };
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Runs `fn` `warmup` times, then times `iterations` runs one by one; microseconds. */
export async function timeEach(
  fn: () => unknown | Promise<unknown>,
  iterations: number,
  warmup = Math.min(500, iterations),
): Promise<Distribution> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = new Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await fn();
    samples[i] = (performance.now() - start) * 1000;
  }
  return distribution(samples);
}

export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ');
  return [
    line(columns),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(columns.map((c) => String(r[c])))),
  ].join('\n');
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median and range of one figure over rounds: a wide range says the machine was noisy. */
export function spread(values: readonly number[]): { median: number; min: number; max: number } {
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}
