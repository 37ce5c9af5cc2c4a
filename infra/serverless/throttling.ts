// What stands between the internet and the functions' concurrency (docs/security.md): API
// Gateway's stage throttle (every request), a throttle per webhook route (so a flood aimed at one
// webhook's path leaves the stage's budget to the others), and reserved concurrency per function
// (so no flood can take the account's concurrency from the other functions, or anything else).
//
// Sizing. A warm webhook answers in tens of milliseconds (npm run load: p99 35 ms), so one
// instance serves about 25 requests per second; 25 reserved instances serve about 700 per second
// per webhook, well above the 200 a route is allowed, with room for cold starts (a few hundred ms
// each) during a scale-up. Requests API Gateway throttles are answered 429 before any function
// runs and are not billed; the apiserver's client waits the Retry-After API Gateway sends, if any,
// and tries again within the webhook's timeout; after that the call has failed (failurePolicy decides).
//
// A fleet: each cluster has a stage of its own, throttled at the cluster's share (its settings'
// throttle, the bucket `npm start` keeps per cluster): cluster-stages.ts. The share is bounded by
// the deployment stage's throttle, the one ceiling the params set.

export interface ThrottlingInputs {
  /** Stage-wide steady rate (requests per second) and burst (token bucket size). */
  readonly apiThrottleRate: number;
  readonly apiThrottleBurst: number;
  /** Per webhook route: its own rate and burst, below the stage's. */
  readonly webhookThrottleRate: number;
  readonly webhookThrottleBurst: number;
  /** Reserved concurrency of every function; 0 reserves none (the account's pool is shared). */
  readonly reservedConcurrency: number;
}

export const THROTTLING_DEFAULTS: ThrottlingInputs = {
  apiThrottleRate: 1000,
  apiThrottleBurst: 2000,
  webhookThrottleRate: 200,
  webhookThrottleBurst: 400,
  reservedConcurrency: 25,
};

/**
 * A route as API Gateway's MethodSettings name it: every `/` of the path as `~1`, after a leading
 * `/` (the AWS::ApiGateway::Stage MethodSetting reference: `/resource/subresource` is
 * `/~1resource~1subresource`).
 */
export function methodSettingsPath(httpEventPath: string): string {
  return `/${`/${httpEventPath.replace(/^\/+/, '')}`.replaceAll('/', '~1')}`;
}

/** A fleet's cluster as the stage throttles it: its name and its fair share (lib/config/fleet.ts). */
export interface ClusterThrottle {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly burst: number;
}

/**
 * The properties the stage gets at its creation by the API's deployment (osls names the
 * deployment resource `ApiGatewayDeployment<instanceId>`; serverless.yml extends it).
 */
export function stageDescription(paths: readonly string[], t: ThrottlingInputs): Record<string, unknown> {
  return {
    StageDescription: {
      ThrottlingRateLimit: t.apiThrottleRate,
      ThrottlingBurstLimit: t.apiThrottleBurst,
      MethodSettings: paths.map((path) => ({
        HttpMethod: 'POST',
        ResourcePath: methodSettingsPath(path),
        ThrottlingRateLimit: t.webhookThrottleRate,
        ThrottlingBurstLimit: t.webhookThrottleBurst,
      })),
    },
  };
}

/** Refuses settings that would let a route exceed the stage or reserve nothing by mistake. */
export function throttlingProblems(t: ThrottlingInputs, clusters: readonly ClusterThrottle[] = []): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(t))
    if (!Number.isFinite(value) || value < 0 || !Number.isInteger(value))
      problems.push(`param ${name} must be a whole number >= 0, got ${value}`);
  if (t.apiThrottleRate === 0 || t.webhookThrottleRate === 0)
    problems.push('params apiThrottleRate and webhookThrottleRate must be > 0: 0 would refuse every request');
  if (t.webhookThrottleRate > t.apiThrottleRate || t.webhookThrottleBurst > t.apiThrottleBurst)
    problems.push('a webhook route cannot be allowed more than the stage: webhookThrottle* must be <= apiThrottle*');
  for (const c of clusters)
    if (c.requestsPerSecond > t.apiThrottleRate || c.burst > t.apiThrottleBurst)
      problems.push(
        `cluster ${c.name}: its throttle (${c.requestsPerSecond} requests per second, burst ${c.burst}) exceeds the stage's (apiThrottleRate ${t.apiThrottleRate}, apiThrottleBurst ${t.apiThrottleBurst}): lower it in config/clusters/${c.name}.settings.yaml or raise the params`,
      );
  return problems;
}
