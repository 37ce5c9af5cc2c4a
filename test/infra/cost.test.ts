import { describe, expect, it } from 'vitest';
import {
  billedMs,
  chooseMemory,
  cpuShare,
  estimatedMs,
  monthlyCost,
  PRICES,
  restApiCost,
} from '../../infra/serverless/cost.js';

describe('what a memory setting buys', () => {
  it('gives CPU in proportion to memory up to one vCPU at 1,769 MB, and no more past it', () => {
    expect(cpuShare(1769)).toBe(1);
    expect(cpuShare(3538)).toBe(1);
    expect(cpuShare(884.5)).toBe(0.5);
    // 0.3 ms of CPU on a full CPU takes 1769/128 times as long at 128 MB.
    expect(estimatedMs(0.3, 128)).toBeCloseTo((0.3 * 1769) / 128, 10);
    expect(estimatedMs(0.3, 4096)).toBe(0.3);
  });

  it('bills whole milliseconds, rounded up, at least one', () => {
    expect(billedMs(0.2)).toBe(1);
    expect(billedMs(1)).toBe(1);
    expect(billedMs(1.0001)).toBe(2);
    expect(billedMs(7.5)).toBe(8);
  });
});

describe('choosing a function’s memory', () => {
  const light = { peakRssMb: 50, cpuMsPerRequest: 0.05, coldCpuMs: 40 };

  it('stays at 128 MB when nothing measured needs more', () => {
    expect(chooseMemory(light)).toEqual({ memoryMb: 128, bound: 'minimum' });
  });

  it('fits a warm request’s CPU in one billed millisecond, in 64 MB steps', () => {
    // 0.3 ms × 1769 = 530.7 MB → 576.
    expect(chooseMemory({ ...light, cpuMsPerRequest: 0.3 })).toEqual({ memoryMb: 576, bound: 'warm CPU' });
  });

  it('keeps a quarter of the setting free above the peak RSS', () => {
    // 150 / 0.75 = 200 → 256.
    expect(chooseMemory({ ...light, peakRssMb: 150 })).toEqual({ memoryMb: 256, bound: 'peak RSS' });
  });

  it('keeps the estimated cold start within a second', () => {
    // 115 ms × 1769 / 1000 ms = 203.4 → 256.
    expect(chooseMemory({ ...light, coldCpuMs: 115 })).toEqual({ memoryMb: 256, bound: 'cold start' });
  });

  it('never gives more than one vCPU, which a single-threaded handler cannot use', () => {
    expect(chooseMemory({ ...light, cpuMsPerRequest: 8 })).toEqual({ memoryMb: 1792, bound: 'warm CPU' });
  });

  it('is the cheaper setting as well as the faster one for a stateless function', () => {
    // 0.3 ms of CPU: at 576 MB billed 1 ms; at 128 MB 4.15 ms, billed 5 ms.
    const cost = (memory: number) => monthlyCost(10, memory, estimatedMs(0.3, memory)).lambdaDuration;
    expect(cost(576)).toBeLessThan(cost(128));
    expect(cost(576)).toBeLessThan(cost(1024));
  });
});

describe('a month of requests', () => {
  it('prices API Gateway REST calls by tier', () => {
    expect(restApiCost(1e6)).toBeCloseTo(3.5, 10);
    expect(restApiCost(333e6)).toBeCloseTo(333 * 3.5, 6);
    expect(restApiCost(400e6)).toBeCloseTo(333 * 3.5 + 67 * 2.8, 6);
  });

  it('adds Lambda duration (billed ms × GB), Lambda requests and API Gateway calls', () => {
    const month = monthlyCost(10, 512, 0.4);
    expect(month.requests).toBe(25_920_000);
    // 25.92 M requests × 0.5 GB × 0.001 s = 12,960 GB-s.
    expect(month.gbSeconds).toBeCloseTo(12_960, 6);
    expect(month.lambdaDuration).toBeCloseTo(12_960 * PRICES.lambdaGbSecond.arm64, 10);
    expect(month.lambdaRequests).toBeCloseTo(25.92 * 0.2, 10);
    expect(month.apiGateway).toBeCloseTo(25.92 * 3.5, 10);
    expect(month.total).toBeCloseTo(month.lambdaDuration + month.lambdaRequests + month.apiGateway, 10);
    // Ten times the rate, ten times every part (still within API Gateway's first tier).
    expect(monthlyCost(100, 512, 0.4).total).toBeCloseTo(10 * month.total, 6);
  });
});
