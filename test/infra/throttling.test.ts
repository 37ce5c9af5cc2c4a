// API Gateway's throttles as the stage gets them: every route by its MethodSettings path, and in a
// fleet each cluster's routes at that cluster's own share.
import { describe, expect, it } from 'vitest';
import {
  clusterMethodSettings,
  methodSettingsPath,
  stageDescription,
  THROTTLING_DEFAULTS,
  throttlingProblems,
} from '../../infra/serverless/throttling.js';

describe('API Gateway throttles', () => {
  it('names a route as the MethodSetting reference does: /resource/subresource is /~1resource~1subresource', () => {
    expect(methodSettingsPath('resource/subresource')).toBe('/~1resource~1subresource');
    expect(methodSettingsPath('/{capability}/always-pull-images/validate')).toBe(
      '/~1{capability}~1always-pull-images~1validate',
    );
  });

  it("throttles each cluster's routes at its own share, in place of the route default", () => {
    const paths = ['{capability}/always-pull-images/validate', '{capability}/pod-node-selector/mutate'];
    const clusters = [
      { name: 'blue', requestsPerSecond: 5, burst: 10 },
      { name: 'green', requestsPerSecond: 200, burst: 400 },
    ];
    expect(clusterMethodSettings(paths, clusters)).toEqual([
      {
        HttpMethod: 'POST',
        ResourcePath: '/~1blue~1{capability}~1always-pull-images~1validate',
        ThrottlingRateLimit: 5,
        ThrottlingBurstLimit: 10,
      },
      {
        HttpMethod: 'POST',
        ResourcePath: '/~1blue~1{capability}~1pod-node-selector~1mutate',
        ThrottlingRateLimit: 5,
        ThrottlingBurstLimit: 10,
      },
      {
        HttpMethod: 'POST',
        ResourcePath: '/~1green~1{capability}~1always-pull-images~1validate',
        ThrottlingRateLimit: 200,
        ThrottlingBurstLimit: 400,
      },
      {
        HttpMethod: 'POST',
        ResourcePath: '/~1green~1{capability}~1pod-node-selector~1mutate',
        ThrottlingRateLimit: 200,
        ThrottlingBurstLimit: 400,
      },
    ]);
    const stage = stageDescription(paths, THROTTLING_DEFAULTS, clusters).StageDescription as Record<string, unknown>;
    expect(stage.MethodSettings).toEqual(clusterMethodSettings(paths, clusters));
    // Without a fleet: the route default, as before.
    const single = stageDescription(paths, THROTTLING_DEFAULTS).StageDescription as { MethodSettings: unknown[] };
    expect(single.MethodSettings).toContainEqual({
      HttpMethod: 'POST',
      ResourcePath: '/~1{capability}~1always-pull-images~1validate',
      ThrottlingRateLimit: 200,
      ThrottlingBurstLimit: 400,
    });
  });

  it("refuses a cluster's share above the stage's, naming the cluster, its file and both ways out", () => {
    expect(throttlingProblems(THROTTLING_DEFAULTS, [{ name: 'blue', requestsPerSecond: 200, burst: 400 }])).toEqual([]);
    expect(throttlingProblems(THROTTLING_DEFAULTS, [{ name: 'blue', requestsPerSecond: 5000, burst: 400 }])).toEqual([
      "cluster blue: its throttle (5000 requests per second, burst 400) exceeds the stage's (apiThrottleRate 1000, apiThrottleBurst 2000): lower it in config/clusters/blue.settings.yaml or raise the params",
    ]);
  });
});
