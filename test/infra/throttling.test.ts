// API Gateway's throttles as the deployment's stage gets them: every route by its MethodSettings
// path; a fleet's clusters' shares are bounded by the stage's (each cluster's own stage:
// test/infra/cluster-stages.test.ts).
import { describe, expect, it } from 'vitest';
import {
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

  it('throttles every webhook route of the stage at the route default', () => {
    const paths = ['{capability}/always-pull-images/validate', '{capability}/pod-node-selector/mutate'];
    const stage = stageDescription(paths, THROTTLING_DEFAULTS).StageDescription as { MethodSettings: unknown[] };
    expect(stage.MethodSettings).toContainEqual({
      HttpMethod: 'POST',
      ResourcePath: '/~1{capability}~1always-pull-images~1validate',
      ThrottlingRateLimit: 200,
      ThrottlingBurstLimit: 400,
    });
    expect(stage.MethodSettings).toHaveLength(2);
  });

  it("refuses a cluster's share above the stage's, naming the cluster, its file and both ways out", () => {
    expect(throttlingProblems(THROTTLING_DEFAULTS, [{ name: 'blue', requestsPerSecond: 200, burst: 400 }])).toEqual([]);
    expect(throttlingProblems(THROTTLING_DEFAULTS, [{ name: 'blue', requestsPerSecond: 5000, burst: 400 }])).toEqual([
      "cluster blue: its throttle (5000 requests per second, burst 400) exceeds the stage's (apiThrottleRate 1000, apiThrottleBurst 2000): lower it in config/clusters/blue.settings.yaml or raise the params",
    ]);
  });
});
