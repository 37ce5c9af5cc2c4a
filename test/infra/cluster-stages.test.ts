// A fleet's fair share at API Gateway: one stage per cluster on the deployment's REST API, throttled
// at the cluster's share, and one custom-domain mapping `/<cluster>` per stage; a single cluster
// keeps the one mapping of the domain's root to the deployment's stage.
import { describe, expect, it } from 'vitest';
import {
  clusterMappingLogicalId,
  clusterStageLogicalId,
  clusterStageProblems,
  ROOT_MAPPING_LOGICAL_ID,
  stageResources,
} from '../../infra/serverless/cluster-stages.js';

const deploymentLogicalId = 'ApiGatewayDeployment1700000000000';

describe('cluster stages', () => {
  it('gives each cluster a stage named after it on the same deployment, throttled at its own share', () => {
    const resources = stageResources({
      stage: 'prod',
      deploymentLogicalId,
      clusters: [
        { name: 'blue', requestsPerSecond: 5, burst: 10 },
        { name: 'green-2', requestsPerSecond: 200, burst: 400 },
      ],
    }) as Record<string, any>;
    expect(Object.keys(resources).sort()).toEqual([
      'ClusterBlueBasePathMapping',
      'ClusterBlueStage',
      'ClusterGreen2BasePathMapping',
      'ClusterGreen2Stage',
    ]);
    for (const [name, rate, burst] of [
      ['blue', 5, 10],
      ['green-2', 200, 400],
    ] as const) {
      const stage = resources[clusterStageLogicalId(name)];
      expect(stage.Type).toBe('AWS::ApiGateway::Stage');
      expect(stage.Properties).toMatchObject({
        RestApiId: { Ref: 'ApiGatewayRestApi' },
        DeploymentId: { Ref: deploymentLogicalId },
        StageName: name,
        // The stage-wide method settings: every method of the stage at the cluster's share.
        MethodSettings: [
          { HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst },
        ],
      });
      const mapping = resources[clusterMappingLogicalId(name)];
      expect(mapping).toEqual({
        Type: 'AWS::ApiGateway::BasePathMapping',
        Condition: 'HasCustomDomain',
        Properties: {
          DomainName: { Ref: 'WebhookDomain' },
          RestApiId: { Ref: 'ApiGatewayRestApi' },
          BasePath: name,
          Stage: { Ref: clusterStageLogicalId(name) },
        },
      });
    }
    // No mapping of the domain's root: a fleet's URLs all begin with a cluster.
    expect(resources[ROOT_MAPPING_LOGICAL_ID]).toBeUndefined();
  });

  it("a single cluster: only the mapping of the domain's root to the deployment's stage", () => {
    expect(stageResources({ stage: 'prod', deploymentLogicalId })).toEqual({
      WebhookBasePathMapping: {
        Type: 'AWS::ApiGateway::BasePathMapping',
        Condition: 'HasCustomDomain',
        DependsOn: deploymentLogicalId,
        Properties: { DomainName: { Ref: 'WebhookDomain' }, RestApiId: { Ref: 'ApiGatewayRestApi' }, Stage: 'prod' },
      },
    });
  });

  it("refuses a cluster named as the deployment's stage, and two clusters of one logical ID", () => {
    expect(clusterStageProblems(['blue', 'green'], 'prod')).toEqual([]);
    expect(clusterStageProblems(['blue', 'prod'], 'prod')).toEqual([
      "cluster prod: a cluster is served on an API Gateway stage of its name, and prod is the deployment's own stage: rename config/clusters/prod.yaml or deploy with another --stage",
    ]);
    expect(clusterStageProblems(['blue-2', 'blue2'], 'prod')).toEqual([
      'clusters blue-2 and blue2: their stages would have one CloudFormation logical ID (ClusterBlue2Stage): rename one of them',
    ]);
  });
});
