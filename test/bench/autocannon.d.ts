// The part of autocannon's API the throughput bench uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    readonly average: number;
    readonly p50: number;
    readonly p99: number;
    readonly total: number;
  }
  interface Options {
    readonly url: string;
    readonly method?: string;
    readonly body?: string;
    readonly headers?: Record<string, string>;
    readonly connections?: number;
    readonly duration?: number;
    readonly tlsOptions?: Record<string, unknown>;
  }
  interface Result {
    readonly requests: Histogram;
    readonly latency: Histogram;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly duration: number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
