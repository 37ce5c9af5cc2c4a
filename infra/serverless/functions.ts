// serverless.yml's per-plugin part, derived from the plugin registry so that it can never drift:
// one Lambda per plugin with its http events, one IAM role per Lambda holding only what that
// plugin needs, and its alarms and dashboard row (observability.ts). serverless.yml reads it through functions.cjs at package time;
// `npx tsx infra/serverless/functions.ts [--auth url-secret]` prints it as YAML for review.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { AnyAdmissionPlugin, PluginMetadata } from '../../lib/admission/plugin.js';
import { usesStore } from '../../lib/admission/plugin.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { CAPABILITY_PATH_PARAMETER, formatWebhookPath } from '../../lib/http/webhook-path.js';
import { learningEndpointRules } from '../../lib/admission/learning.js';
import { clusterPartitionPatterns, partitionPatterns } from '../../lib/state/partitions.js';
import { packagedFleetFile } from './packaged-config.js';
import type { ObservabilityInputs } from './observability.js';
import { observabilityInputs, serverlessAlarms, serverlessDashboard } from './observability.js';
import { stageResources } from './cluster-stages.js';
import type { ClusterThrottle, ThrottlingInputs } from './throttling.js';
import { stageDescription, THROTTLING_DEFAULTS } from './throttling.js';

export type CallerAuthMode = 'mtls' | 'url-secret';
export type Phase = 'mutate' | 'validate';

/** The CloudFormation logical ID of the shared state table in serverless.yml. */
export const STATE_TABLE_LOGICAL_ID = 'StateTable';

/** What serverless.yml's variables resolve to; only the caller-auth mode changes the shape. */
export interface ServerlessInputs {
  readonly service: string;
  readonly stage: string;
  readonly auth: CallerAuthMode;
  readonly provisionedConcurrency: number;
  /** Alarms and X-Ray (infra/serverless/observability.ts); defaults when absent. */
  readonly observability?: Partial<ObservabilityInputs>;
  /** API Gateway throttles and reserved concurrency (infra/serverless/throttling.ts); defaults when absent. */
  readonly throttling?: Partial<ThrottlingInputs>;
  /** osls's logical ID of the API's deployment (`ApiGatewayDeployment<instanceId>`), whose stage it throttles. */
  readonly deploymentLogicalId?: string;
  /**
   * A fleet (config/clusters/): plugin name → the clusters that enable it. Each function starts
   * from its own package (packaged-config.ts), and its role's partitions are those of its clusters.
   */
  readonly fleet?: ReadonlyMap<string, readonly string[]>;
  /** A fleet's clusters and their shares: a stage each (cluster-stages.ts), throttled at its share. */
  readonly clusters?: readonly ClusterThrottle[];
}

export function throttlingInputs(inputs: ServerlessInputs): ThrottlingInputs {
  return { ...THROTTLING_DEFAULTS, ...inputs.throttling };
}

/** `always-pull-images` → `AlwaysPullImages`: serverless's own normalisation of function names. */
export function functionKey(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `alwaysPullImages`: the key under `functions:` (serverless derives logical IDs from it). */
export function functionName(metadata: PluginMetadata): string {
  const key = functionKey(metadata.name);
  return key.charAt(0).toLowerCase() + key.slice(1);
}

export function phasesOf(metadata: PluginMetadata): Phase[] {
  const phases: Phase[] = [];
  if (metadata.mutating) phases.push('mutate');
  if (metadata.validating) phases.push('validate');
  return phases;
}

/** Every endpoint a plugin's function serves: its judging phases, and `learn` when it learns. */
export function endpointsOf(metadata: PluginMetadata): Endpoint[] {
  return [...phasesOf(metadata), ...(learningEndpointRules(metadata).length > 0 ? (['learn'] as const) : [])];
}

/**
 * The API Gateway paths of one plugin; url-secret mode puts the caller's capability first. A
 * fleet's routes are the same: the cluster before them is its own stage (cluster-stages.ts).
 */
export function httpPaths(metadata: PluginMetadata, auth: CallerAuthMode): string[] {
  const capability = auth === 'url-secret' ? { capability: CAPABILITY_PATH_PARAMETER } : {};
  // API Gateway's http event paths have no leading slash.
  return endpointsOf(metadata).map((endpoint) =>
    formatWebhookPath({ plugin: metadata.name, endpoint, ...capability }).slice(1),
  );
}

/** The partitions (dynamodb:LeadingKeys) one plugin's function may touch: its clusters' in a fleet. */
export function rolePartitions(metadata: PluginMetadata, inputs: Pick<ServerlessInputs, 'fleet'>): string[] {
  const clusters = inputs.fleet?.get(metadata.name);
  return inputs.fleet === undefined ? partitionPatterns(metadata) : clusterPartitionPatterns(metadata, clusters ?? []);
}

/** Only plugins that record side effects or learned state may touch the table. */
export function needsStateTable(metadata: PluginMetadata): boolean {
  return usesStore(metadata);
}

/** A Lambda gives up with the apiserver: its timeout is the longest webhook timeout it serves. */
export function lambdaTimeout(metadata: PluginMetadata): number {
  return Math.max(
    ...[metadata.mutating, metadata.validating].filter((p) => p !== undefined).map((p) => p.timeoutSeconds),
    1,
  );
}

/** The IAM path of every function role: `/serverless-admission/`. */
export function rolePath(service: string): string {
  return `/${service}/`;
}

/**
 * The managed policy that bounds every function role (docs/permissions-boundary.json, created once
 * by an administrator, outside the stack, so that the deployer cannot widen it).
 */
export function permissionsBoundaryName(service: string): string {
  return `${service}-boundary`;
}

export function roleLogicalId(metadata: PluginMetadata): string {
  return `${functionKey(metadata.name)}LambdaRole`;
}

/**
 * Each plugin function's memory setting, MB: chooseMemory (infra/serverless/cost.ts) applied to
 * `npm run bench -- --only cost --requests 200 --rounds 3` (medians of 3 bursts of 200 reviews, the
 * bundle loaded as Lambda loads it, request log on; x86 CPU, Node 22). Every function's peak RSS was
 * 50-71 MB (an empty handler's: 43 MB), so RSS decides none of them; CPU does. Per line: what decided
 * it, the CPU ms per warm request, the CPU ms to the first answer. Re-measure and update a line when
 * a plugin's code or its store calls change.
 */
const FUNCTION_MEMORY_MB: Readonly<Record<string, number>> = {
  // Warm CPU 0.068-0.072 ms (x 1769 / 128 MB: within 1 billed ms at the minimum); cold 35-52 ms.
  'always-admit': 128,
  'always-deny': 128,
  'certificate-subject-restriction': 128,
  'default-ingress-class': 128,
  'default-toleration-seconds': 128,
  'deny-service-external-ips': 128,
  'external-ip-ranger': 128,
  // Warm CPU 0.074-0.104 ms (1 billed ms from 192 MB); cold 39-93 ms (ValidatingAdmissionPolicy's
  // CEL runtime the most).
  'always-pull-images': 192,
  'cluster-resource-override': 192,
  'event-rate-limit': 192,
  'extended-resource-toleration': 192,
  'limit-pod-hard-anti-affinity-topology': 192,
  'namespace-reservation': 192,
  'node-restriction': 192,
  'persistent-volume-claim-resize': 192,
  'pod-node-constraints': 192,
  'restricted-endpoints-admission': 192,
  'run-once-duration': 192,
  'runtime-class': 192,
  'storage-object-in-use-protection': 192,
  'taint-nodes-by-condition': 192,
  'validating-admission-policy': 192,
  // The cold start: 110 ms of CPU to the first answer (the CEL runtime), within 1 s from 256 MB.
  'mutating-admission-policy': 256,
  // Warm CPU 0.116 ms, measured on its 500 answer: the default configuration names no image-review
  // backend, and a configured function's own HTTPS call to it comes on top.
  'image-policy-webhook': 256,
  // Warm CPU 0.48-0.88 ms, one or two store reads a request (each about 0.4 ms of CPU).
  priority: 896,
  'default-storage-class': 1280,
  'namespace-exists': 1344,
  'namespace-lifecycle': 1472,
  'pod-node-selector': 1472,
  'limit-ranger': 1536,
  'origin-pod-node-environment': 1536,
  'pod-security': 1600,
  'pod-toleration-restriction': 1600,
  // Warm CPU past one vCPU's millisecond (3.4-4.6 ms: quota ledgers, store reads and writes): one
  // full vCPU, the most a single-threaded handler can use.
  'resource-quota': 1792,
  'cluster-resource-quota': 1792,
};

/**
 * The memory setting of a plugin's function (FUNCTION_MEMORY_MB); a plugin without one fails
 * packaging, naming it: `npm run bench -- --only cost` measures it and proposes one.
 */
export function functionMemory(name: string): number {
  const memory = FUNCTION_MEMORY_MB[name];
  if (memory === undefined)
    throw new Error(
      `infra/serverless/functions.ts: plugin ${name} has no memory setting in FUNCTION_MEMORY_MB: measure it with \`npm run bench -- --only cost\` and add the "chosen MB" it proposes`,
    );
  return memory;
}

function serverlessFunction(plugin: AnyAdmissionPlugin, inputs: ServerlessInputs): Record<string, unknown> {
  const { metadata } = plugin;
  const fleetPackage = inputs.fleet === undefined ? undefined : packagedFleetFile(metadata.name);
  return {
    handler: `functions/${metadata.name}/handler.handler`,
    description: metadata.summary.slice(0, 256),
    timeout: lambdaTimeout(metadata),
    memorySize: functionMemory(metadata.name),
    role: roleLogicalId(metadata),
    ...(inputs.provisionedConcurrency > 0 && { provisionedConcurrency: inputs.provisionedConcurrency }),
    ...(throttlingInputs(inputs).reservedConcurrency > 0 && {
      reservedConcurrency: throttlingInputs(inputs).reservedConcurrency,
    }),
    ...(observabilityInputs(inputs).tracing && { tracing: 'Active' }),
    // A fleet: the function's own package, in its zip only (serverless-esbuild's per-function patterns).
    ...(fleetPackage !== undefined && {
      environment: { ADMISSION_CONFIG: fleetPackage },
      package: { patterns: [fleetPackage] },
    }),
    events: httpPaths(metadata, inputs.auth).map((path) => ({
      http: { method: 'post', path },
    })),
  };
}

export function serverlessFunctions(
  plugins: readonly AnyAdmissionPlugin[],
  inputs: ServerlessInputs,
): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    plugins.map((plugin) => [functionName(plugin.metadata), serverlessFunction(plugin, inputs)]),
  );
}

/**
 * One role per Lambda: write its own log group, and, for plugins that keep state, read and write
 * the items of the state table under the partition keys of the state it keeps (items only: no
 * table management, no scans, no other plugin's ledger).
 */
function lambdaRole(metadata: PluginMetadata, inputs: ServerlessInputs): Record<string, unknown> {
  const lambdaName = `${inputs.service}-${inputs.stage}-${functionName(metadata)}`;
  const logGroup = {
    'Fn::Sub': `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${lambdaName}:*`,
  };
  const statements: unknown[] = [
    { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: [logGroup] },
  ];
  if (needsStateTable(metadata)) {
    statements.push({
      Effect: 'Allow',
      Action: [
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:ConditionCheckItem',
      ],
      // The table has no index: the items of its own partitions only (lib/state/partitions).
      Resource: [{ 'Fn::GetAtt': [STATE_TABLE_LOGICAL_ID, 'Arn'] }],
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': rolePartitions(metadata, inputs) } },
    });
  }
  // X-Ray accepts no resource-level permissions: '*' is the only Resource its actions take.
  if (observabilityInputs(inputs).tracing)
    statements.push({ Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' });
  return {
    Type: 'AWS::IAM::Role',
    Properties: {
      // The service's own path: a deployer policy can grant IAM actions on these roles only
      // (docs/deployer-policy.json), whatever names CloudFormation gives them.
      Path: rolePath(inputs.service),
      // The deployer may create a role only with this boundary (docs/deployer-policy.json), so
      // no role it creates can do more than docs/permissions-boundary.json allows.
      PermissionsBoundary: {
        'Fn::Sub': `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:policy/${permissionsBoundaryName(inputs.service)}`,
      },
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] }],
      },
      Policies: [
        {
          PolicyName: `${lambdaName}-policy`.slice(0, 128),
          PolicyDocument: { Version: '2012-10-17', Statement: statements },
        },
      ],
    },
  };
}

export function serverlessRoles(
  plugins: readonly AnyAdmissionPlugin[],
  inputs: ServerlessInputs,
): Record<string, unknown> {
  return Object.fromEntries(
    plugins.map((plugin) => [roleLogicalId(plugin.metadata), lambdaRole(plugin.metadata, inputs)]),
  );
}

export interface ServerlessPart {
  readonly functions: Record<string, Record<string, unknown>>;
  /**
   * Merged into serverless.yml's `resources` (it is a list of fragments); `extensions` adds the
   * stage's throttles to the deployment osls generates.
   */
  readonly resources: {
    readonly Resources: Record<string, unknown>;
    readonly extensions?: Record<string, { readonly Properties: Record<string, unknown> }>;
  };
}

export function serverlessPart(plugins: readonly AnyAdmissionPlugin[], inputs: ServerlessInputs): ServerlessPart {
  return {
    functions: serverlessFunctions(plugins, inputs),
    resources: {
      Resources: {
        ...serverlessRoles(plugins, inputs),
        ...serverlessAlarms(plugins, inputs),
        ...serverlessDashboard(plugins, inputs),
        ...(inputs.deploymentLogicalId !== undefined &&
          stageResources({
            stage: inputs.stage,
            deploymentLogicalId: inputs.deploymentLogicalId,
            ...(inputs.clusters !== undefined && { clusters: inputs.clusters }),
          })),
      },
      ...(inputs.deploymentLogicalId !== undefined && {
        extensions: {
          [inputs.deploymentLogicalId]: {
            Properties: stageDescription(
              plugins.flatMap((plugin) => httpPaths(plugin.metadata, inputs.auth)),
              throttlingInputs(inputs),
            ),
          },
        },
      }),
    },
  };
}

const USAGE = `Usage: tsx infra/serverless/functions.ts [--auth mtls|url-secret] [--stage STAGE] [--json]

Prints the functions, per-function IAM roles, alarms and dashboard that serverless.yml gets from
the plugin registry (through infra/serverless/functions.cjs), for review. Nothing to copy: serverless.yml already
references the generator.
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      auth: { type: 'string', default: 'mtls' },
      stage: { type: 'string', default: 'dev' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (values.auth !== 'mtls' && values.auth !== 'url-secret') {
    process.stderr.write(`--auth must be mtls or url-secret\n${USAGE}`);
    process.exit(2);
  }
  const { plugins } = await import('../../functions/index.js');
  const part = serverlessPart(plugins, {
    service: 'serverless-admission',
    stage: values.stage,
    auth: values.auth,
    provisionedConcurrency: 0,
  });
  process.stdout.write(values.json ? `${JSON.stringify(part, null, 2)}\n` : stringify(part));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  });
}
