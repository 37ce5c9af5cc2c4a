// Fair share between the clusters of a fleet in one process (`npm start`): each cluster draws its
// requests from a token bucket of its own (its settings' `throttle`, else the default), so a flood
// from one cluster is refused at that cluster's door and the others keep their share of the
// process. On AWS, API Gateway's per-route throttles do the same (infra/serverless/throttling.ts).
//
// A refused request is answered 429 with `Retry-After` before any handler runs. The apiserver's
// webhook client (client-go's rest.Request, 10 retries by default) waits that long and sends the
// review again, within the webhook's timeoutSeconds; once that has passed, the call has failed
// and the webhook's failurePolicy decides, as for any answer other than 200 (docs/fleet.md).

export interface ThrottleSettings {
  readonly requestsPerSecond: number;
  readonly burst: number;
}

/** One cluster's bucket: `burst` tokens at most, refilled at `requestsPerSecond`. */
export class ClusterShare {
  #tokens: number;
  #last: number;

  constructor(
    readonly settings: ThrottleSettings,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = settings.burst;
    this.#last = now();
  }

  /** Takes one request's token: undefined when there was one, else the whole seconds to wait. */
  take(): number | undefined {
    const now = this.now();
    const { requestsPerSecond, burst } = this.settings;
    this.#tokens = Math.min(burst, this.#tokens + ((now - this.#last) / 1000) * requestsPerSecond);
    this.#last = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return undefined;
    }
    // Retry-After is whole seconds (RFC 9110), and client-go reads only that form: at least 1.
    return Math.max(1, Math.ceil((1 - this.#tokens) / requestsPerSecond));
  }
}

/** The 429's one-line reason: the cluster and its share, never anything of the request. */
export function throttledAnswer(cluster: string, settings: ThrottleSettings): string {
  return `cluster ${cluster} is over its fair share of ${settings.requestsPerSecond} requests per second (burst ${settings.burst}): retry later\n`;
}
