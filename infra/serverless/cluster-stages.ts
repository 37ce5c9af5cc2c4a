// How callers reach the REST API's stages, and, in a fleet, each cluster's fair share at API Gateway.
//
// A single cluster: the deployment's stage (osls's, named after `--stage`), and on the custom
// domain one base path mapping of the domain's root to it.
//
// A fleet: one more stage per cluster on the same REST API and the same deployment, named after the
// cluster, whose stage-wide method settings (`*` `/*`) throttle it at the cluster's share (its
// settings' `throttle`, the bucket `npm start` keeps per cluster). On the custom domain, one base
// path mapping per cluster maps `/<cluster>` to that stage; on the execute-api name the stage is the
// path's first segment already. So the URLs keep their shape, `https://HOST/<cluster>/...`, the
// API's routes are a single cluster's (no `{cluster}` path parameter), and the handler learns the
// cluster from the stage it came through (lib/http/admission-handler.ts). A flood through one
// cluster's stage is answered 429 by API Gateway before any function runs, and spends nothing of
// another stage's throttles.
//
// Why stages, and not the alternatives (docs/fleet.md, "Fair share"):
// - Per-cluster method settings need per-cluster routes: literal `/<cluster>/...` resources, about
//   17 REST resources per cluster, against CloudFormation's 500 per stack and API Gateway's 300
//   resources per API; a `{cluster}` path parameter is one route that every cluster shares.
// - A usage plan per cluster, chosen by a Lambda authorizer (apiKeySource AUTHORIZER): an API key,
//   a usage plan and its key per cluster (3 resources against 2), an authorizer function, its role,
//   permission and log group, and a second Lambda invocation in front of every review its cache
//   does not answer, for a bucket shared across a cluster's routes where a stage's is per route.
// A stage costs nothing while idle, and 2 resources per cluster (its stage; its mapping when a
// custom domain is set). API Gateway allows 10 stages per REST API unless its quota is raised:
// the deployment's own stage and 9 clusters.
import type { ClusterThrottle } from './throttling.js';

/** osls's logical IDs of the REST API, and serverless.yml's of the custom domain. */
export const REST_API_LOGICAL_ID = 'ApiGatewayRestApi';
export const DOMAIN_LOGICAL_ID = 'WebhookDomain';
/** A single cluster's mapping of the custom domain's root to the deployment's stage. */
export const ROOT_MAPPING_LOGICAL_ID = 'WebhookBasePathMapping';

/** `blue-2` → `Blue2`: the part of a cluster's logical IDs that names it. */
function clusterKey(cluster: string): string {
  return cluster
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

export const clusterStageLogicalId = (cluster: string): string => `Cluster${clusterKey(cluster)}Stage`;
export const clusterMappingLogicalId = (cluster: string): string => `Cluster${clusterKey(cluster)}BasePathMapping`;

export interface StageInputs {
  /** The deployment's stage (`--stage`), which osls's deployment creates. */
  readonly stage: string;
  /** osls's logical ID of the API's deployment (`ApiGatewayDeployment<instanceId>`). */
  readonly deploymentLogicalId: string;
  /** A fleet's clusters and their shares; absent for a single cluster. */
  readonly clusters?: readonly ClusterThrottle[];
}

/**
 * Names that cannot be stages beside the deployment's: a cluster named as the deployment's stage
 * (API Gateway has one stage of a name), and two clusters whose logical IDs would be one.
 */
export function clusterStageProblems(clusters: readonly string[], stage: string): string[] {
  const problems: string[] = [];
  if (clusters.includes(stage))
    problems.push(
      `cluster ${stage}: a cluster is served on an API Gateway stage of its name, and ${stage} is the deployment's own stage: rename config/clusters/${stage}.yaml or deploy with another --stage`,
    );
  const byKey = new Map<string, string>();
  for (const cluster of clusters) {
    const other = byKey.get(clusterKey(cluster));
    if (other !== undefined)
      problems.push(
        `clusters ${other} and ${cluster}: their stages would have one CloudFormation logical ID (${clusterStageLogicalId(cluster)}): rename one of them`,
      );
    byKey.set(clusterKey(cluster), cluster);
  }
  return problems;
}

/**
 * The stages and custom-domain mappings of the template: the root mapping for a single cluster, a
 * stage and a mapping per cluster for a fleet. The mappings exist only with a custom domain
 * (serverless.yml's HasCustomDomain condition).
 */
export function stageResources(inputs: StageInputs): Record<string, unknown> {
  const { clusters, deploymentLogicalId } = inputs;
  const api = { Ref: REST_API_LOGICAL_ID };
  const domain = { Ref: DOMAIN_LOGICAL_ID };
  if (clusters === undefined)
    return {
      [ROOT_MAPPING_LOGICAL_ID]: {
        Type: 'AWS::ApiGateway::BasePathMapping',
        Condition: 'HasCustomDomain',
        // The stage exists once the deployment does (osls's deployment creates it).
        DependsOn: deploymentLogicalId,
        Properties: { DomainName: domain, RestApiId: api, Stage: inputs.stage },
      },
    };
  return Object.fromEntries(
    clusters.flatMap((cluster) => [
      [
        clusterStageLogicalId(cluster.name),
        {
          Type: 'AWS::ApiGateway::Stage',
          Properties: {
            RestApiId: api,
            // Every deploy makes a new deployment; the stage moves to it with the others.
            DeploymentId: { Ref: deploymentLogicalId },
            StageName: cluster.name,
            Description: `Cluster ${cluster.name}: its webhooks, throttled at its share`,
            // API Gateway applies a stage's throttle to each of its methods: each webhook route of
            // the cluster at the cluster's share.
            MethodSettings: [
              {
                HttpMethod: '*',
                ResourcePath: '/*',
                ThrottlingRateLimit: cluster.requestsPerSecond,
                ThrottlingBurstLimit: cluster.burst,
              },
            ],
          },
        },
      ],
      [
        clusterMappingLogicalId(cluster.name),
        {
          Type: 'AWS::ApiGateway::BasePathMapping',
          Condition: 'HasCustomDomain',
          Properties: {
            DomainName: domain,
            RestApiId: api,
            BasePath: cluster.name,
            Stage: { Ref: clusterStageLogicalId(cluster.name) },
          },
        },
      ],
    ]),
  );
}
