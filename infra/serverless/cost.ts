// What a function costs and what its memory setting buys: the prices (one place, with the day they
// were read), Lambda's CPU share at a memory setting, the rule that chooses each function's memory
// from the bench's figures (test/bench/cost.ts), and the monthly cost at a steady request rate.
// functions.ts deploys the settings chosen; docs/performance.md shows the arithmetic.

/** AWS's published on-demand prices, us-east-1, without free tiers. */
export const PRICES = {
  readOn: '2026-12-02',
  region: 'us-east-1',
  /** Lambda duration, per GB-second (the first 7.5 billion GB-seconds a month on arm64, 6 billion on x86). */
  lambdaGbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  /** Lambda requests, per million (both architectures). */
  lambdaRequestsPerMillion: 0.2,
  /** API Gateway REST API calls, per million, by monthly tier: [calls in the tier, price]. */
  restApiPerMillion: [
    [333_000_000, 3.5],
    [667_000_000, 2.8],
    [19_000_000_000, 2.38],
    [Number.POSITIVE_INFINITY, 1.51],
  ] as readonly (readonly [number, number])[],
} as const;

/** serverless.yml's `provider.architecture`: the prices the page computes with. */
export const ARCHITECTURE = 'arm64' as const;

/** The memory at which a function has one full vCPU; below it, CPU in proportion (Lambda's documentation). */
export const ONE_VCPU_MB = 1769;
/** Lambda's smallest memory setting. */
export const MIN_MEMORY_MB = 128;
/** Settings are chosen in steps of this many MB. */
export const MEMORY_STEP_MB = 64;
/** Lambda bills duration in whole milliseconds, rounded up. */
export const BILLING_MS = 1;
/** Peak RSS may fill at most this fraction of the setting: the rest is headroom for heap growth and GC. */
export const RSS_HEADROOM = 0.75;
/**
 * A cold start (the CPU of loading the function and answering its first review, scaled to the
 * setting's CPU share) stays within this: a third of the webhooks' default 3 s timeout, half of
 * the learning webhooks' 2 s.
 */
export const COLD_START_BUDGET_MS = 1000;
/** A 30-day month. */
export const SECONDS_PER_MONTH = 30 * 24 * 3600;

/** The fraction of one vCPU a setting gets; a single-threaded handler gains nothing past 1. */
export function cpuShare(memoryMb: number): number {
  return Math.min(1, memoryMb / ONE_VCPU_MB);
}

/**
 * A computed estimate, not a measurement on Lambda: CPU time measured on one full CPU, stretched
 * by the setting's share of a vCPU (CPU ms × 1769 / memory below one vCPU).
 */
export function estimatedMs(cpuMs: number, memoryMb: number): number {
  return cpuMs / cpuShare(memoryMb);
}

/** Billed duration: whole milliseconds, rounded up, at least one. */
export function billedMs(durationMs: number): number {
  return Math.max(BILLING_MS, Math.ceil(durationMs / BILLING_MS) * BILLING_MS);
}

const roundUpToStep = (mb: number) => Math.ceil(mb / MEMORY_STEP_MB) * MEMORY_STEP_MB;

export interface MeasuredCost {
  /** Peak resident set of the process over the burst, MB. */
  readonly peakRssMb: number;
  /** CPU time (user + system) per warm request, ms. */
  readonly cpuMsPerRequest: number;
  /** CPU time of the fresh process up to its first answer (Node's start, the load, the first request), ms. */
  readonly coldCpuMs: number;
}

export type MemoryBound = 'minimum' | 'peak RSS' | 'warm CPU' | 'cold start';

/**
 * The memory setting a function gets from its measured figures: the smallest step (of 64 MB, from
 * 128 MB) that (a) holds its peak RSS with a quarter to spare, (b) runs a warm request's CPU within
 * Lambda's 1 ms billing unit (more memory then costs no more per request, and less would be billed
 * the same GB-ms in more milliseconds), and (c) keeps the estimated cold start within the budget;
 * never past one vCPU, which a single-threaded handler cannot use. `bound` names what decided it.
 */
export function chooseMemory(measured: MeasuredCost): { memoryMb: number; bound: MemoryBound } {
  const candidates: [MemoryBound, number][] = [
    ['minimum', MIN_MEMORY_MB],
    ['peak RSS', roundUpToStep(measured.peakRssMb / RSS_HEADROOM)],
    ['warm CPU', roundUpToStep((measured.cpuMsPerRequest * ONE_VCPU_MB) / BILLING_MS)],
    ['cold start', roundUpToStep((measured.coldCpuMs * ONE_VCPU_MB) / COLD_START_BUDGET_MS)],
  ];
  const [bound, memoryMb] = candidates.reduce((a, b) => (b[1] > a[1] ? b : a));
  const cap = roundUpToStep(ONE_VCPU_MB);
  return memoryMb > cap ? { memoryMb: cap, bound } : { memoryMb, bound };
}

/** API Gateway REST's tiered price for a month's calls. */
export function restApiCost(calls: number): number {
  let left = calls;
  let cost = 0;
  for (const [size, perMillion] of PRICES.restApiPerMillion) {
    const inTier = Math.min(left, size);
    cost += (inTier / 1e6) * perMillion;
    left -= inTier;
    if (left <= 0) break;
  }
  return cost;
}

export interface MonthlyCost {
  readonly requests: number;
  readonly gbSeconds: number;
  readonly lambdaDuration: number;
  readonly lambdaRequests: number;
  readonly apiGateway: number;
  readonly total: number;
}

/**
 * A month at a steady `perSecond` requests, each billed `billedMs(durationMs)` at `memoryMb`:
 * Lambda's duration and requests and API Gateway's calls (no free tiers; logs and DynamoDB are
 * in the deploy guide's sums).
 */
export function monthlyCost(perSecond: number, memoryMb: number, durationMs: number): MonthlyCost {
  const requests = perSecond * SECONDS_PER_MONTH;
  const gbSeconds = requests * (memoryMb / 1024) * (billedMs(durationMs) / 1000);
  const lambdaDuration = gbSeconds * PRICES.lambdaGbSecond[ARCHITECTURE];
  const lambdaRequests = (requests / 1e6) * PRICES.lambdaRequestsPerMillion;
  const apiGateway = restApiCost(requests);
  return {
    requests,
    gbSeconds,
    lambdaDuration,
    lambdaRequests,
    apiGateway,
    total: lambdaDuration + lambdaRequests + apiGateway,
  };
}
