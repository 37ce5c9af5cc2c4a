// serverless.yml's cluster reader (docs/deploy-aws.md): when param clusterReader is eks or token,
// one function a schedule invokes every minute (infra/cluster-reader/handler.ts: ~50 s of watch
// under a lease), its own role, and an alarm when it stops. Its role may write only the reader's
// key prefixes (lib/state/table.ts) and read only its own token source; eks needs no AWS
// permission at all (STS GetCallerIdentity is allowed to every principal), only an EKS access
// entry for the role (npm run -s emit -- --reader-rbac --eks-cluster NAME).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { READER_METRIC } from '../../lib/cluster/scheduled.js';
import { tokenSourceCall } from '../../lib/kube/deployed-credentials.js';
import type { MemoryBound } from './cost.js';
import { chooseMemory } from './cost.js';
import { rolePath, STATE_TABLE_LOGICAL_ID } from './functions.js';

export const READER_FUNCTION = 'clusterReader';
export const READER_ROLE_LOGICAL_ID = 'ClusterReaderLambdaRole';
export const READER_ALARM_LOGICAL_ID = 'ClusterReaderStoppedAlarm';
/** The partition keys the reader writes (lib/state/table.ts), as dynamodb:LeadingKeys patterns. */
export const READER_KEY_PREFIXES = ['ns#*', 'rq#*', 'pod#*', 'node#*', 'obj#*', 'reader#*', 'lease#cluster-reader'];
/** A run watches ~50 s; the function may run a little longer to checkpoint and release its lease. */
export const READER_TIMEOUT_SECONDS = 70;
/**
 * The reader's memory setting from its peak RSS: chooseMemory's rule (infra/serverless/cost.ts),
 * the peak with a quarter to spare, in 64 MB steps from 128 MB. The reader answers no request, so
 * neither a warm request's CPU nor a webhook's cold-start budget applies to it; its run's CPU at
 * the setting is measured beside it (docs/performance.md, "The cluster reader").
 */
export function readerMemoryFor(peakRssMb: number): { memoryMb: number; bound: MemoryBound } {
  return chooseMemory({ peakRssMb, cpuMsPerRequest: 0, coldCpuMs: 0 });
}

/**
 * What serverless.yml's default reader memory covers, from `npm run bench -- --only reader`: a
 * cluster of `pods` pods (25 to a namespace, each namespace with a ResourceQuota, a node per 30
 * pods) read from scratch, the reader's peak RSS there, and how much the peak grows per 1,000 pods.
 */
export const READER_MEASURED = { pods: 3_000, peakRssMb: 154.5, rssMbPer1000Pods: 22.9 } as const;

/** serverless.yml's default of param memorySize: the reader's setting unless the operator overrides it. */
export function readerMemorySetting(): number {
  const yml = parse(readFileSync(join(import.meta.dirname, '../../serverless.yml'), 'utf8')) as {
    params: { default: { memorySize: unknown } };
  };
  const memory = yml.params.default.memorySize;
  if (typeof memory !== 'number') throw new Error('serverless.yml: params.default.memorySize is not a number');
  return memory;
}

/** The alarm: no run reported within this, or one ended this far behind the apiserver. */
const STOPPED_AFTER_SECONDS = 180;

export interface ReaderParams {
  readonly mode: string;
  readonly endpoint: string;
  /** base64 PEM (a kubeconfig's certificate-authority-data). */
  readonly ca: string;
  readonly clusterName: string;
  readonly tokenSource: string;
}

/** What is wrong with the params, one line each (empty: deployable). */
export function readerParamProblems(params: ReaderParams): string[] {
  if (params.mode === 'none') return [];
  if (params.mode !== 'eks' && params.mode !== 'token')
    return [`param clusterReader must be none, eks or token, got ${JSON.stringify(params.mode)}`];
  const problems: string[] = [];
  if (!/^https:\/\/[^/\s]+/.test(params.endpoint))
    problems.push(
      'param clusterEndpoint must be the apiserver URL (https://...), e.g. aws eks describe-cluster --query cluster.endpoint',
    );
  if (!Buffer.from(params.ca, 'base64').toString('utf8').includes('-----BEGIN CERTIFICATE-----'))
    problems.push('param clusterCa must be the base64 PEM of the cluster CA (certificate-authority-data)');
  if (params.mode === 'eks' && params.clusterName === '')
    problems.push('param clusterName is required with clusterReader eks');
  if (params.mode === 'token') {
    try {
      tokenSourceCall(params.tokenSource);
    } catch {
      problems.push(
        'param clusterTokenSource must be the ARN of the Secrets Manager secret or SSM SecureString parameter holding the reader token',
      );
    }
  }
  return problems;
}

export interface ReaderPart {
  readonly functions: Record<string, Record<string, unknown>>;
  readonly Resources: Record<string, unknown>;
}

export function readerPart(
  params: ReaderParams,
  inputs: { service: string; stage: string; alarmTopicArn: string },
): ReaderPart | undefined {
  if (params.mode === 'none') return undefined;
  const lambdaName = `${inputs.service}-${inputs.stage}-${READER_FUNCTION}`;
  const statements: unknown[] = [
    {
      Effect: 'Allow',
      Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      Resource: [
        {
          'Fn::Sub': `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${lambdaName}:*`,
        },
      ],
    },
    {
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      Resource: [{ 'Fn::GetAtt': [STATE_TABLE_LOGICAL_ID, 'Arn'] }],
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': READER_KEY_PREFIXES } },
    },
  ];
  if (params.mode === 'token') {
    const call = tokenSourceCall(params.tokenSource);
    statements.push(
      call.service === 'ssm'
        ? { Effect: 'Allow', Action: ['ssm:GetParameter'], Resource: [params.tokenSource] }
        : { Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: [params.tokenSource] },
    );
  }
  const topic = inputs.alarmTopicArn;
  return {
    functions: {
      [READER_FUNCTION]: {
        handler: 'infra/cluster-reader/handler.handler',
        description: 'Reads the cluster the plugins judge: ~50 s of list and watch per run, under a lease.',
        timeout: READER_TIMEOUT_SECONDS,
        role: READER_ROLE_LOGICAL_ID,
        // One run at a time is the lease's job; this keeps a retry storm from starting more.
        reservedConcurrency: 2,
        environment: {
          CLUSTER_READER: params.mode,
          CLUSTER_ENDPOINT: params.endpoint,
          CLUSTER_CA: params.ca,
          ...(params.mode === 'eks' && { CLUSTER_NAME: params.clusterName }),
          // The ARN only: the token itself is read at cold start and never leaves memory.
          ...(params.mode === 'token' && { CLUSTER_TOKEN_SOURCE: params.tokenSource }),
        },
        events: [{ schedule: { rate: ['rate(1 minute)'] } }],
      },
    },
    Resources: {
      [READER_ROLE_LOGICAL_ID]: {
        Type: 'AWS::IAM::Role',
        Properties: {
          Path: rolePath(inputs.service),
          AssumeRolePolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] },
            ],
          },
          Policies: [
            {
              PolicyName: `${lambdaName}-policy`.slice(0, 128),
              PolicyDocument: { Version: '2012-10-17', Statement: statements },
            },
          ],
        },
      },
      // No report for 3 minutes (the schedule or the function stopped: missing data breaches), or
      // a run that ended more than 3 minutes behind the apiserver.
      [READER_ALARM_LOGICAL_ID]: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          AlarmDescription: `${lambdaName}: the cluster reader stopped or fell behind the apiserver; the plugins judge stale state`,
          Namespace: 'ServerlessAdmission',
          MetricName: READER_METRIC.lag,
          Dimensions: [{ Name: 'Service', Value: 'cluster-reader' }],
          Statistic: 'Maximum',
          Period: 60,
          EvaluationPeriods: STOPPED_AFTER_SECONDS / 60,
          Threshold: STOPPED_AFTER_SECONDS,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'breaching',
          ...(topic !== '' && { AlarmActions: [topic], OKActions: [topic] }),
        },
      },
    },
  };
}
