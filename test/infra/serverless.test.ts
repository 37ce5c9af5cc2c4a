// serverless.yml against the plugin registry, then a real `sls package` (osls, offline, no AWS
// credentials) and the CloudFormation template and zips it produces: one Lambda per plugin, the
// mTLS custom domain, no execute-api endpoint, the TTL table, least-privilege roles, zips holding
// a bundle and the packaged configuration only, whose bundles run on the project's Node (22, as
// Lambda), the outputs the deploy guide reads, and a deployer policy that covers the template.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { plugins } from '../../functions/index.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import type { PluginMetadata } from '../../lib/admission/plugin.js';
import { learningEndpointRules } from '../../lib/admission/learning.js';
import { capabilityKeysEnv, NEW_KEY, OLD_KEY } from '../support/capability.js';
import { namespaceReview, testStore } from '../support/dynamodb.js';
import { requestOf, review } from '../support/review.js';
import type { IamRequest, PolicyDocument } from '../support/iam-policy.js';
import { evaluate, evaluateIntersection } from '../support/iam-policy.js';
import { partitionPatterns } from '../../lib/state/partitions.js';
import {
  READER_ALARM_LOGICAL_ID,
  READER_ROLE_LOGICAL_ID,
  readerMemorySetting,
} from '../../infra/serverless/cluster-reader.js';
import { functionMemory } from '../../infra/serverless/functions.js';
import { testPki } from '../support/pki.js';

const root = resolve(import.meta.dirname, '../..');

/**
 * osls run offline as a user without AWS would: no credentials, profile or config (packaging must
 * not need any), no telemetry or notifications.
 */
function offlineSls(args: string[], extraEnv: Record<string, string> = {}, timeout?: number) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  return spawnSync(join(root, 'node_modules/.bin/sls'), args, {
    cwd: root,
    env: {
      ...env,
      ...extraEnv,
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      SLS_TELEMETRY_DISABLED: '1',
      SLS_NOTIFICATIONS_MODE: 'off',
      CI: '1',
    },
    encoding: 'utf8',
    ...(timeout !== undefined && { timeout }),
  });
}
const require = createRequire(import.meta.url);
const serverlessYml = parseYaml(readFileSync(join(root, 'serverless.yml'), 'utf8'));
const GENERATOR = './infra/serverless/functions.cjs';

/**
 * What CloudFormation calls with the deployer's credentials to create, update and delete each
 * resource type of the template: the `handlers` permissions of the type's registry schema
 * (create, update, delete and the read they do), narrowed to the properties the template sets.
 */
const DEPLOY_ACTIONS: Record<string, readonly string[]> = {
  'AWS::ApiGateway::BasePathMapping': ['apigateway:POST', 'apigateway:GET', 'apigateway:PATCH', 'apigateway:DELETE'],
  'AWS::ApiGateway::Deployment': ['apigateway:POST', 'apigateway:GET', 'apigateway:PATCH', 'apigateway:DELETE'],
  'AWS::ApiGateway::DomainName': [
    'apigateway:POST',
    'apigateway:GET',
    'apigateway:PATCH',
    'apigateway:DELETE',
    'apigateway:PUT',
    // API Gateway reads the mTLS truststore with the caller's credentials.
    's3:GetObject',
    's3:GetObjectVersion',
  ],
  'AWS::ApiGateway::Method': ['apigateway:PUT', 'apigateway:GET', 'apigateway:PATCH', 'apigateway:DELETE'],
  'AWS::ApiGateway::Resource': ['apigateway:POST', 'apigateway:GET', 'apigateway:PATCH', 'apigateway:DELETE'],
  'AWS::ApiGateway::RestApi': [
    'apigateway:POST',
    'apigateway:GET',
    'apigateway:PATCH',
    'apigateway:PUT',
    'apigateway:DELETE',
  ],
  'AWS::CloudWatch::Alarm': ['cloudwatch:PutMetricAlarm', 'cloudwatch:DescribeAlarms', 'cloudwatch:DeleteAlarms'],
  'AWS::CloudWatch::Dashboard': ['cloudwatch:PutDashboard', 'cloudwatch:GetDashboard', 'cloudwatch:DeleteDashboards'],
  'AWS::DynamoDB::Table': [
    'dynamodb:CreateTable',
    'dynamodb:DescribeTable',
    'dynamodb:UpdateTable',
    'dynamodb:DeleteTable',
    'dynamodb:DescribeTimeToLive',
    'dynamodb:UpdateTimeToLive',
    'dynamodb:DescribeContinuousBackups',
    'dynamodb:UpdateContinuousBackups',
    'dynamodb:ListTagsOfResource',
    'dynamodb:TagResource',
    'kms:DescribeKey',
    'kms:CreateGrant',
  ],
  'AWS::IAM::Role': [
    'iam:CreateRole',
    'iam:GetRole',
    'iam:PutRolePolicy',
    'iam:GetRolePolicy',
    'iam:DeleteRolePolicy',
    'iam:ListRolePolicies',
    'iam:ListAttachedRolePolicies',
    'iam:UpdateAssumeRolePolicy',
    'iam:DeleteRole',
  ],
  'AWS::Lambda::Function': [
    'lambda:CreateFunction',
    'lambda:GetFunction',
    'lambda:UpdateFunctionCode',
    'lambda:UpdateFunctionConfiguration',
    'lambda:DeleteFunction',
    'lambda:ListTags',
    'lambda:TagResource',
    'iam:PassRole',
    // Lambda reads the zip from the deployment bucket with the caller's credentials.
    's3:GetObject',
  ],
  'AWS::Lambda::Permission': ['lambda:AddPermission', 'lambda:GetPolicy', 'lambda:RemovePermission'],
  'AWS::Lambda::Version': ['lambda:PublishVersion', 'lambda:ListVersionsByFunction', 'lambda:GetFunctionConfiguration'],
  'AWS::Lambda::Alias': [
    'lambda:CreateAlias',
    'lambda:GetAlias',
    'lambda:UpdateAlias',
    'lambda:DeleteAlias',
    'lambda:PutProvisionedConcurrencyConfig',
    'lambda:GetProvisionedConcurrencyConfig',
    'lambda:DeleteProvisionedConcurrencyConfig',
  ],
  'AWS::Logs::LogGroup': [
    'logs:CreateLogGroup',
    'logs:DescribeLogGroups',
    'logs:PutRetentionPolicy',
    'logs:DeleteLogGroup',
  ],
  'AWS::S3::Bucket': ['s3:CreateBucket', 's3:PutEncryptionConfiguration', 's3:DeleteBucket'],
  'AWS::S3::BucketPolicy': ['s3:PutBucketPolicy', 's3:GetBucketPolicy', 's3:DeleteBucketPolicy'],
};

/** What osls itself calls on deploy, remove and info (node_modules/osls/lib/plugins/aws). */
const OSLS_ACTIONS = [
  'cloudformation:CreateChangeSet',
  'cloudformation:DescribeChangeSet',
  'cloudformation:ExecuteChangeSet',
  'cloudformation:DeleteChangeSet',
  'cloudformation:CreateStack',
  'cloudformation:UpdateStack',
  'cloudformation:DeleteStack',
  'cloudformation:DescribeStacks',
  'cloudformation:DescribeStackEvents',
  'cloudformation:DescribeStackResource',
  'cloudformation:DescribeStackResources',
  'cloudformation:ListStackResources',
  'cloudformation:GetTemplate',
  'cloudformation:ValidateTemplate',
  'cloudformation:ListExports',
  's3:ListBucket',
  's3:PutObject',
  's3:GetObject',
  's3:DeleteObject',
  's3:ListBucketVersions',
  'lambda:GetFunction',
];

/** The account, region and names an operator's deploy of the packaged template (stage dev) would have. */
const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const STACK = 'serverless-admission-dev';
const API_ID = 'a1b2c3d4e5';
const DOMAIN = 'admission.dev.example.com';
const TRUSTSTORE = 's3://serverless-admission-dev-truststore/truststore.pem';
/** Actions IAM authorizes on no resource of their own: their statements name `*`. */
const NO_RESOURCE = new Set([
  'cloudformation:ListExports',
  'cloudformation:ValidateTemplate',
  'cloudwatch:DescribeAlarms',
  'cloudwatch:ListDashboards',
  'logs:DescribeLogGroups',
]);
/** API Gateway's ARN of a path: `arn:aws:apigateway:<region>::/restapis/...`. */
const apigw = (request: IamRequest): IamRequest =>
  request.resource === '*' ? request : { ...request, resource: `arn:aws:apigateway:${REGION}::${request.resource}` };
/** The few intrinsics of the roles' ARNs, resolved as CloudFormation would in the account above. */
function resolveIntrinsic(value: any): string {
  if (typeof value === 'string') return value;
  const table = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${STACK}-state`;
  if (value?.['Fn::GetAtt']?.[0] === 'StateTable' && value['Fn::GetAtt'][1] === 'Arn') return table;
  if (typeof value?.['Fn::Sub'] === 'string')
    return value['Fn::Sub'].replace(/\$\{([^}]+)\}/g, (_: string, name: string) => {
      const known: Record<string, string> = {
        'AWS::Partition': 'aws',
        'AWS::Region': REGION,
        'AWS::AccountId': ACCOUNT,
        'StateTable.Arn': table,
      };
      if (!(name in known)) throw new Error(`unresolved \${${name}}`);
      return known[name]!;
    });
  throw new Error(`unresolved intrinsic ${JSON.stringify(value)}`);
}

/** serverless's function key: `always-pull-images` → `alwaysPullImages`. */
const functionKey = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const logicalPrefix = (name: string) => functionKey(name).charAt(0).toUpperCase() + functionKey(name).slice(1);
const phases = (m: PluginMetadata) => [...(m.mutating ? ['mutate'] : []), ...(m.validating ? ['validate'] : [])];
const endpointKey = (e: string) => `${e.charAt(0).toUpperCase()}${e.slice(1)}`;
/** What a function serves: its judging phases, and the learning endpoint of a plugin that learns. */
const endpoints = (m: PluginMetadata) => [...phases(m), ...(learningEndpointRules(m).length > 0 ? ['learn'] : [])];
const usesTable = (m: PluginMetadata) => m.writes || m.needs.length > 0;

type Generated = {
  functions: Record<string, any>;
  resources: { Resources: Record<string, any>; extensions?: Record<string, any>; Outputs?: Record<string, any> };
  disableDefaultEndpoint: boolean;
};

const everything = everyPluginActiveConfiguration();
afterAll(() => everything.remove());
/** What the default configuration (config/admission.yaml) leaves active: what `npm run package` packages. */
const packaged = activePlugins(loadPluginSet(plugins, { ADMISSION_CONFIG: join(root, 'config/admission.yaml') })).map(
  (p) => p.plugin,
);

/**
 * Unzips a packaged function into a temporary directory (removed after the test) and calls its
 * handler once in a fresh Node with the given review, as deployed: the packaged configuration,
 * no node_modules beside it. Answers the Lambda result.
 */
function invokeUnzipped(
  zip: string,
  name: string,
  phase: 'mutate' | 'validate',
  review: string,
  env: Record<string, string> = {},
): { statusCode: number; body: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  expect(spawnSync('unzip', ['-q', zip, '-d', dir]).status).toBe(0);
  const script = `
    const { handler } = await import('./functions/${name}/handler.cjs');
    const event = { path: '/${name}/${phase}', httpMethod: 'POST', headers: { 'content-type': 'application/json' },
      body: process.env.REVIEW, isBase64Encoded: false,
      requestContext: { identity: { clientCert: { subjectDN: 'CN=kube-apiserver-admission-client' } } } };
    const result = await handler(event, { getRemainingTimeInMillis: () => 5000 });
    process.stdout.write(JSON.stringify(result));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      // As deployed: the packaged configuration, no node_modules to load a YAML parser from.
      ADMISSION_CONFIG: '.package/admission-configuration.json',
      LOG_LEVEL: 'silent',
      CALLER_AUTH: 'mtls',
      REVIEW: review,
      ...env,
    },
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

async function generate(params: Record<string, string>): Promise<Generated> {
  const generator = require(join(root, GENERATOR)) as (arg: {
    resolveVariable: (v: string) => Promise<unknown>;
  }) => Promise<Generated>;
  const defaults = serverlessYml.params.default as Record<string, unknown>;
  const values: Record<string, unknown> = {
    'self:service': 'serverless-admission',
    'sls:stage': 'test',
    'sls:instanceId': '1700000000000',
  };
  // A name with a colon is a variable of its own (`sls:stage`); every other is a param.
  for (const [k, v] of Object.entries({ ...defaults, admissionConfig: everything.file, ...params }))
    values[k.includes(':') ? k : `param:${k}`] = v;
  return generator({ resolveVariable: async (v) => values[v] });
}

describe('serverless.yml', () => {
  it('takes its functions and their roles from the registry generator, not a hand-written list', () => {
    expect(serverlessYml.functions).toBe(`\${file(${GENERATOR}):functions}`);
    expect(serverlessYml.resources).toContain(`\${file(${GENERATOR}):resources}`);
    expect(serverlessYml.provider.apiGateway.disableDefaultEndpoint).toBe(
      `\${file(${GENERATOR}):disableDefaultEndpoint}`,
    );
  });

  it('runs nodejs22.x, bundles each function with esbuild for node22, nothing external, config packaged', () => {
    expect(serverlessYml.frameworkVersion).toBe('4');
    expect(serverlessYml.plugins).toEqual(['serverless-esbuild']);
    expect(serverlessYml.provider.runtime).toBe('nodejs22.x');
    expect(serverlessYml.package.individually).toBe(true);
    // Functions start from the configuration parsed at packaging (certificates included), and
    // carry nothing else: config/ may hold cluster listings and other deployments' files.
    expect(serverlessYml.package.patterns).toEqual(['.package/admission-configuration.json']);
    expect(serverlessYml.custom.esbuild.plugins).toBe('infra/serverless/esbuild-plugins.cjs');
    expect(serverlessYml.provider.environment.ADMISSION_CONFIG).toBe(`\${file(${GENERATOR}):packagedConfigFile}`);
    expect(serverlessYml.custom.esbuild).toMatchObject({
      bundle: true,
      minify: true,
      target: 'node22',
      platform: 'node',
      // CommonJS: no ESM loader at a cold start (the measured reason is in serverless.yml).
      format: 'cjs',
      outputFileExtension: '.cjs',
      exclude: [],
    });
    expect(Object.keys(serverlessYml.provider.environment).sort()).toEqual(
      [
        'ADMISSION_CONFIG',
        'ALLOWED_CLIENT_SUBJECTS',
        'CALLER_AUTH',
        'CLUSTER_READER',
        'LOG_LEVEL',
        'LOG_SAMPLE_ALLOWED',
        'STATE_TABLE',
        'URL_CAPABILITY_KEYS',
      ].sort(),
    );
  });

  it('packages the AdmissionConfiguration ADMISSION_CONFIG names, as every other command reads it', () => {
    expect(serverlessYml.params.default.admissionConfig).toBe(`\${env:ADMISSION_CONFIG, 'config/admission.yaml'}`);
    for (const stage of Object.values(serverlessYml.params) as Record<string, unknown>[])
      if (stage !== serverlessYml.params.default) expect(stage.admissionConfig).toBeUndefined();
    // osls resolves it so: one plugin named, one function (the default file serves the default-on set).
    const dir = mkdtempSync(join(tmpdir(), 'sls-print-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'admission.yaml');
    writeFileSync(
      file,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  - name: AlwaysPullImages\n',
    );
    const run = offlineSls(['print', '--stage', 'dev', '--format', 'json'], { ADMISSION_CONFIG: file }, 300_000);
    expect(run.status, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
    expect(Object.keys(printed.functions)).toEqual(['alwaysPullImages']);
  }, 300_000);

  it("gives every plugin's function its own measured memory setting, none the old 512 MB default", () => {
    const settings = Object.fromEntries(plugins.map((p) => [p.metadata.name, functionMemory(p.metadata.name)]));
    for (const [name, memory] of Object.entries(settings)) {
      // Lambda's least, in the 64 MB steps chooseMemory takes, at most one vCPU (1,769 MB → 1,792).
      expect(memory, name).toBeGreaterThanOrEqual(128);
      expect(memory, name).toBeLessThanOrEqual(1792);
      expect(memory % 64, name).toBe(0);
      expect(memory, name).not.toBe(512);
    }
    // The measured extremes: a stateless judge needs little CPU, a quota ledger a full vCPU.
    expect(settings['always-pull-images']).toBe(192);
    expect(settings['validating-admission-policy']).toBe(192);
    expect(settings['mutating-admission-policy']).toBe(256);
    expect(settings['resource-quota']).toBe(1792);
    expect(() => functionMemory('no-such-plugin')).toThrow(
      /plugin no-such-plugin has no memory setting in FUNCTION_MEMORY_MB: measure it with `npm run bench -- --only cost`/,
    );
  });

  it('deploys to --region, else the environment region, else eu-west-1', () => {
    expect(serverlessYml.provider.region).toBe(`\${opt:region, env:AWS_REGION, env:AWS_DEFAULT_REGION, 'eu-west-1'}`);
  });

  const domain = { domainName: 'a.example.com', certificateArn: 'arn:x', truststoreUri: 's3://b/t.pem' };

  it.each(['mtls', 'url-secret'] as const)(
    '%s: one function per registered plugin, its handler and its http paths',
    async (callerAuth) => {
      const generated = await generate({ ...domain, callerAuth, urlCapabilityKeys: capabilityKeysEnv(OLD_KEY) });
      expect(Object.keys(generated.functions).sort()).toEqual(plugins.map((p) => functionKey(p.metadata.name)).sort());
      for (const { metadata } of plugins) {
        const fn = generated.functions[functionKey(metadata.name)];
        expect(fn.handler).toBe(`functions/${metadata.name}/handler.handler`);
        expect(
          existsSync(join(root, 'functions', metadata.name, 'handler.ts')),
          `functions/${metadata.name}/handler.ts`,
        ).toBe(true);
        const prefix = callerAuth === 'url-secret' ? '{capability}/' : '';
        expect(fn.events.map((e: any) => `${e.http.method} ${e.http.path}`)).toEqual(
          endpoints(metadata).map((p) => `post ${prefix}${metadata.name}/${p}`),
        );
        expect(fn.role).toBe(`${logicalPrefix(metadata.name)}LambdaRole`);
        expect(fn.timeout).toBe(
          Math.max(metadata.mutating?.timeoutSeconds ?? 1, metadata.validating?.timeoutSeconds ?? 1),
        );
        expect(fn.memorySize).toBe(functionMemory(metadata.name));
      }
      expect(generated.disableDefaultEndpoint).toBe(true);
    },
  );

  it('url-secret without a domain keeps the execute-api endpoint; mtls without a truststore is refused', async () => {
    const open = await generate({
      callerAuth: 'url-secret',
      urlCapabilityKeys: capabilityKeysEnv(OLD_KEY),
      domainName: '',
    });
    expect(open.disableDefaultEndpoint).toBe(false);
    await expect(generate({ callerAuth: 'mtls', truststoreUri: '' })).rejects.toThrow(
      /callerAuth mtls needs the params domainName, certificateArn, truststoreUri/,
    );
    await expect(generate({ callerAuth: 'url-secret', urlCapabilityKeys: '' })).rejects.toThrow(
      /needs the param urlCapabilityKeys/,
    );
    await expect(generate({ callerAuth: 'none' })).rejects.toThrow(/callerAuth must be mtls or url-secret/);
  });

  it('packages only the plugins active under the AdmissionConfiguration the functions carry', async () => {
    const generated = await generate({
      ...domain,
      callerAuth: 'mtls',
      admissionConfig: join(root, 'config/admission.yaml'),
    });
    expect(Object.keys(generated.functions).sort()).toEqual(packaged.map((p) => functionKey(p.metadata.name)).sort());
    expect(Object.keys(generated.functions)).not.toContain('imagePolicyWebhook');
    expect(Object.keys(generated.functions)).not.toContain('validatingAdmissionPolicy');
    await expect(
      generate({ ...domain, callerAuth: 'mtls', admissionConfig: join(root, 'config/examples/missing.yaml') }),
    ).rejects.toThrow(/ADMISSION_CONFIG: file .*missing\.yaml does not exist/);
  });

  /** A fleet's directory: blue (PodNodeSelector, ResourceQuota), green (AlwaysPullImages, PodNodeSelector). */
  function fleetDir(settings: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-clusters-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const enabled: Record<string, string[]> = {
      blue: ['PodNodeSelector', 'ResourceQuota'],
      green: ['AlwaysPullImages', 'PodNodeSelector'],
    };
    for (const [cluster, names] of Object.entries(enabled)) {
      writeFileSync(
        join(dir, `${cluster}.yaml`),
        `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n${names.map((n) => `  - name: ${n}\n`).join('')}`,
      );
      writeFileSync(join(dir, `${cluster}.settings.yaml`), settings[cluster]);
    }
    return dir;
  }

  it("a fleet: the union of the clusters' plugins, each function with its clusters' package, routes and partitions", async () => {
    const dir = fleetDir({
      blue: 'allowedSubjects: [blue-apiserver]\n',
      green: 'allowedSubjects: [green-apiserver]\n',
    });
    const generated = (await generate({ ...domain, callerAuth: 'mtls', clustersDir: dir })) as Generated & {
      servedPlugins: string;
      packagedConfigFile: string;
    };
    expect(Object.keys(generated.functions).sort()).toEqual(['alwaysPullImages', 'podNodeSelector', 'resourceQuota']);
    expect(generated.servedPlugins.split(',').sort()).toEqual([
      'always-pull-images',
      'pod-node-selector',
      'resource-quota',
    ]);
    expect(generated.resources.Outputs?.ServedClusters.Value).toBe(
      'blue:pod-node-selector resource-quota;green:always-pull-images pod-node-selector',
    );
    // No single cluster's package is left to travel in a fleet's zips.
    expect(generated.packagedConfigFile).toBe('');
    expect(existsSync(join(root, '.package/admission-configuration.json'))).toBe(false);
    const expectedClusters: Record<string, string[]> = {
      'always-pull-images': ['green'],
      'pod-node-selector': ['blue', 'green'],
      'resource-quota': ['blue'],
    };
    for (const [name, clusters] of Object.entries(expectedClusters)) {
      const fn = generated.functions[functionKey(name)];
      const file = `.package/fleet/${name}.json`;
      expect(fn.environment).toEqual({ ADMISSION_CONFIG: file });
      expect(fn.package).toEqual({ patterns: [file] });
      // A single cluster's routes: the cluster before them is its own stage.
      for (const { http } of fn.events) expect(http.path).toMatch(new RegExp(`^${name}/(mutate|validate|learn)$`));
      const packaged = JSON.parse(readFileSync(join(root, file), 'utf8'));
      // Its clusters' configurations only; every cluster's callers (a 404 is said to a proved caller).
      expect(
        Object.keys(packaged.files)
          .map((f: string) => f.split('/').pop())
          .sort(),
      ).toEqual(clusters.map((c) => `${c}.yaml`));
      expect(packaged.fleet.clusters.map((c: any) => [c.name, c.admissionConfiguration !== undefined])).toEqual([
        ['blue', clusters.includes('blue')],
        ['green', clusters.includes('green')],
      ]);
      expect(packaged.fleet.clusters.map((c: any) => c.allowedSubjects)).toEqual([
        ['blue-apiserver'],
        ['green-apiserver'],
      ]);
    }
    // LeadingKeys: the plugin's partitions under each served cluster's prefix, never the bare keys.
    const leadingKeys = (name: string) =>
      generated.resources.Resources[
        `${logicalPrefix(name)}LambdaRole`
      ].Properties.Policies[0].PolicyDocument.Statement.find((s: any) =>
        s.Action.some((a: string) => a.startsWith('dynamodb:')),
      )?.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys'];
    expect(leadingKeys('always-pull-images')).toBeUndefined();
    expect(leadingKeys('pod-node-selector')).toEqual(['cluster#blue#ns#*', 'cluster#green#ns#*']);
    expect(leadingKeys('resource-quota')).toEqual(
      partitionPatterns(plugins.find((p) => p.metadata.name === 'resource-quota')!.metadata).map(
        (p) => `cluster#blue#${p}`,
      ),
    );
    const withoutDir = await generate({
      ...domain,
      callerAuth: 'mtls',
      admissionConfig: join(root, 'config/admission.yaml'),
    });
    expect(Object.keys(withoutDir.functions).sort()).toEqual(packaged.map((p) => functionKey(p.metadata.name)).sort());
    expect(existsSync(join(root, '.package/fleet'))).toBe(false);
  });

  it("a fleet: a stage per cluster at the cluster's own share, its base path on the domain; one cluster: the root", async () => {
    const dir = fleetDir({
      blue: 'allowedSubjects: [blue-apiserver]\nthrottle: {requestsPerSecond: 5, burst: 10}\n',
      green: 'allowedSubjects: [green-apiserver]\n',
    });
    const generated = (await generate({ ...domain, callerAuth: 'mtls', clustersDir: dir })) as Generated & {
      executeApiBasePath: string;
    };
    const { Resources } = generated.resources;
    const ofType = (resources: Record<string, any>, type: string) =>
      Object.fromEntries(Object.entries(resources).filter(([, r]) => r.Type === type));
    const stages = ofType(Resources, 'AWS::ApiGateway::Stage');
    expect(
      Object.values<any>(stages).map((s) => [
        s.Properties.StageName,
        s.Properties.DeploymentId,
        s.Properties.MethodSettings,
      ]),
    ).toEqual([
      [
        'blue',
        { Ref: 'ApiGatewayDeployment1700000000000' },
        [{ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 }],
      ],
      [
        'green',
        { Ref: 'ApiGatewayDeployment1700000000000' },
        // No throttle in its settings: the default share.
        [{ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 }],
      ],
    ]);
    const mappings = Object.values<any>(ofType(Resources, 'AWS::ApiGateway::BasePathMapping'));
    expect(mappings.map((m) => [m.Condition, m.Properties.BasePath, m.Properties.Stage])).toEqual([
      ['HasCustomDomain', 'blue', { Ref: 'ClusterBlueStage' }],
      ['HasCustomDomain', 'green', { Ref: 'ClusterGreenStage' }],
    ]);
    // The execute-api URL of a fleet is the bare name: each cluster's stage begins its paths.
    expect(generated.executeApiBasePath).toBe('');

    // One cluster: the root of the domain mapped to the deployment's stage, and no other stage.
    const single = (await generate({ ...domain, callerAuth: 'mtls' })) as Generated & { executeApiBasePath: string };
    expect(ofType(single.resources.Resources, 'AWS::ApiGateway::Stage')).toEqual({});
    expect(ofType(single.resources.Resources, 'AWS::ApiGateway::BasePathMapping')).toEqual({
      WebhookBasePathMapping: {
        Type: 'AWS::ApiGateway::BasePathMapping',
        Condition: 'HasCustomDomain',
        DependsOn: 'ApiGatewayDeployment1700000000000',
        Properties: { DomainName: { Ref: 'WebhookDomain' }, RestApiId: { Ref: 'ApiGatewayRestApi' }, Stage: 'test' },
      },
    });
    expect(single.executeApiBasePath).toBe('/test');

    // A share above the deployment stage's, a cluster named as the deployment's stage: refused.
    const greedy = fleetDir({
      blue: 'allowedSubjects: [blue-apiserver]\nthrottle: {requestsPerSecond: 5000, burst: 10}\n',
      green: 'allowedSubjects: [green-apiserver]\n',
    });
    await expect(generate({ ...domain, callerAuth: 'mtls', clustersDir: greedy })).rejects.toThrow(
      /cluster blue: its throttle \(5000 requests per second, burst 10\) exceeds the stage's/,
    );
    await expect(generate({ ...domain, callerAuth: 'mtls', clustersDir: dir, 'sls:stage': 'green' })).rejects.toThrow(
      /cluster green: a cluster is served on an API Gateway stage of its name/,
    );
  });

  it("a fleet in url-secret mode: routes {capability}/..., every cluster's key from its settings", async () => {
    const keys = { blue: capabilityKeysEnv(OLD_KEY), green: capabilityKeysEnv(NEW_KEY) };
    const dir = fleetDir({ blue: `capabilityKeys: ["${keys.blue}"]\n`, green: `capabilityKeys: ["${keys.green}"]\n` });
    const generated = await generate({
      callerAuth: 'url-secret',
      urlCapabilityKeys: '',
      domainName: '',
      clustersDir: dir,
    });
    expect(generated.functions.podNodeSelector.events.map((e: any) => e.http.path)).toContain(
      '{capability}/pod-node-selector/mutate',
    );
    const packaged = JSON.parse(readFileSync(join(root, '.package/fleet/pod-node-selector.json'), 'utf8'));
    expect(packaged.fleet.clusters.map((c: any) => c.capabilityKeys)).toEqual([[keys.blue], [keys.green]]);
    // A cluster without its key, a cluster reader: refused, naming what to do.
    const keyless = fleetDir({ blue: `capabilityKeys: ["${keys.blue}"]\n`, green: 'allowedSubjects: [green]\n' });
    await expect(generate({ callerAuth: 'url-secret', domainName: '', clustersDir: keyless })).rejects.toThrow(
      /green\.settings\.yaml.*capabilityKeys.*--cluster green --auth url-secret --public-key/,
    );
    await expect(
      generate({ ...domain, callerAuth: 'url-secret', clustersDir: dir, clusterReader: 'token' }),
    ).rejects.toThrow(/a packaged fleet keeps the learning webhooks/);
  });

  const alarmsOf = (generated: Generated, name: string) =>
    Object.entries(generated.resources.Resources).filter(
      ([id, r]) =>
        r.Type === 'AWS::CloudWatch::Alarm' &&
        id.startsWith(logicalPrefix(name)) &&
        r.Properties.AlarmName.includes(`-${name}-`),
    );

  it('alarms per function: 5xx rate, p99 latency of each webhook against its timeout, throttles, store failures', async () => {
    const generated = await generate({ callerAuth: 'mtls', ...domain });
    for (const { metadata } of plugins) {
      const key = logicalPrefix(metadata.name);
      const r = generated.resources.Resources;
      const expected = [
        `${key}FailureRateAlarm`,
        `${key}ThrottlesAlarm`,
        `${key}RefusedCallersAlarm`,
        ...endpoints(metadata).map((p) => `${key}${endpointKey(p)}LatencyAlarm`),
      ];
      if (usesTable(metadata)) expected.push(`${key}StoreFailuresAlarm`);
      expect(
        alarmsOf(generated, metadata.name)
          .map(([id]) => id)
          .sort(),
      ).toEqual(expected.sort());
      for (const phase of endpoints(metadata)) {
        const latency = r[`${key}${endpointKey(phase)}LatencyAlarm`].Properties;
        const timeout =
          phase === 'learn' ? 2 : (phase === 'mutate' ? metadata.mutating : metadata.validating)!.timeoutSeconds;
        expect(latency).toMatchObject({
          Namespace: 'ServerlessAdmission',
          MetricName: 'Latency',
          ExtendedStatistic: 'p99',
          Threshold: timeout * 1000 * 0.5,
        });
        expect(latency.Dimensions).toEqual([
          { Name: 'service', Value: 'serverless-admission' },
          { Name: 'plugin', Value: metadata.name },
          { Name: 'phase', Value: phase },
        ]);
      }
      const rate = r[`${key}FailureRateAlarm`].Properties;
      expect(rate.Threshold).toBe(1);
      expect(
        rate.Metrics.filter((m: any) => m.MetricStat?.Metric.MetricName === 'Failures').map(
          (m: any) => m.MetricStat.Metric.Dimensions[2].Value,
        ),
      ).toEqual(endpoints(metadata));
      expect(rate.Metrics.find((m: any) => m.ReturnData).Expression).toBe('IF(total > 0, 100 * failed / total, 0)');
      expect(r[`${key}ThrottlesAlarm`].Properties).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${key}LambdaFunction` } }],
      });
      // No topic given: the alarms show on the dashboard and notify nobody.
      for (const [, a] of alarmsOf(generated, metadata.name)) expect(a.Properties.AlarmActions).toBeUndefined();
    }
  });

  it('notifies the SNS topic param, scales the latency alarm by its fraction, refuses nonsense', async () => {
    const topic = 'arn:aws:sns:eu-west-1:123456789012:admission-alarms';
    const generated = await generate({
      callerAuth: 'mtls',
      ...domain,
      alarmTopicArn: topic,
      latencyAlarmFraction: '0.8',
      failureRateAlarmPercent: '5',
    });
    const alarms = Object.values(generated.resources.Resources).filter((r: any) => r.Type === 'AWS::CloudWatch::Alarm');
    for (const a of alarms) expect(a.Properties).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
    expect(generated.resources.Resources.AlwaysPullImagesValidateLatencyAlarm.Properties.Threshold).toBe(
      plugins.find((p) => p.metadata.name === 'always-pull-images')!.metadata.validating!.timeoutSeconds * 800,
    );
    expect(generated.resources.Resources.AlwaysPullImagesFailureRateAlarm.Properties.Threshold).toBe(5);
    await expect(generate({ callerAuth: 'mtls', ...domain, alarmTopicArn: 'my-topic' })).rejects.toThrow(
      /alarmTopicArn must be an SNS topic ARN/,
    );
    await expect(generate({ callerAuth: 'mtls', ...domain, latencyAlarmFraction: '2' })).rejects.toThrow(
      /latencyAlarmFraction/,
    );
    await expect(generate({ callerAuth: 'mtls', ...domain, tracing: 'yes' })).rejects.toThrow(
      /tracing must be true or false/,
    );
  });

  it('X-Ray tracing only when asked for, with the role permission it needs', async () => {
    const off = await generate({ callerAuth: 'mtls', ...domain });
    const on = await generate({ callerAuth: 'mtls', ...domain, tracing: 'true' });
    for (const { metadata } of plugins) {
      expect(off.functions[functionKey(metadata.name)].tracing).toBeUndefined();
      expect(on.functions[functionKey(metadata.name)].tracing).toBe('Active');
      const actions = (g: Generated) =>
        g.resources.Resources[
          `${logicalPrefix(metadata.name)}LambdaRole`
        ].Properties.Policies[0].PolicyDocument.Statement.flatMap((s: any) => s.Action);
      expect(actions(off)).not.toContain('xray:PutTraceSegments');
      expect(actions(on)).toContain('xray:PutTraceSegments');
    }
  });

  it('alarms on refused callers: the 403s of one plugin in 5 minutes, above the threshold param', async () => {
    const generated = await generate({ callerAuth: 'mtls', ...domain, refusedCallersAlarmThreshold: '7' });
    const alarm = generated.resources.Resources.AlwaysPullImagesRefusedCallersAlarm.Properties;
    expect(alarm).toMatchObject({
      Namespace: 'ServerlessAdmission',
      MetricName: 'Requests',
      Dimensions: [
        { Name: 'service', Value: 'serverless-admission' },
        { Name: 'plugin', Value: 'always-pull-images' },
        { Name: 'decision', Value: 'malformed_caller_refused' },
      ],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 7,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    await expect(generate({ callerAuth: 'mtls', ...domain, refusedCallersAlarmThreshold: '-1' })).rejects.toThrow(
      /refusedCallersAlarmThreshold/,
    );
  });

  it('throttles the stage and every webhook route, and reserves concurrency per function', async () => {
    const generated = await generate({ callerAuth: 'mtls', ...domain });
    const stage = generated.resources.extensions!.ApiGatewayDeployment1700000000000.Properties.StageDescription;
    expect(stage).toMatchObject({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 });
    const routes = Object.values(generated.functions).flatMap((fn: any) => fn.events.map((e: any) => e.http.path));
    expect(stage.MethodSettings.map((m: any) => m.ResourcePath).sort()).toEqual(
      routes.map((path: string) => `/~1${path.replaceAll('/', '~1')}`).sort(),
    );
    for (const setting of stage.MethodSettings)
      expect(setting).toMatchObject({ HttpMethod: 'POST', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 });
    for (const fn of Object.values(generated.functions)) expect((fn as any).reservedConcurrency).toBe(25);
    const none = await generate({ callerAuth: 'mtls', ...domain, reservedConcurrency: '0' });
    for (const fn of Object.values(none.functions)) expect((fn as any).reservedConcurrency).toBeUndefined();
    await expect(generate({ callerAuth: 'mtls', ...domain, webhookThrottleRate: '5000' })).rejects.toThrow(
      /webhookThrottle\* must be <= apiThrottle\*/,
    );
    await expect(generate({ callerAuth: 'mtls', ...domain, apiThrottleRate: '0' })).rejects.toThrow(/must be > 0/);
  });

  it('provisioned concurrency only when asked for', async () => {
    const base = { callerAuth: 'mtls', ...domain };
    const none = await generate(base);
    const warm = await generate({ ...base, provisionedConcurrency: '2' });
    for (const { metadata } of plugins) {
      expect(none.functions[functionKey(metadata.name)].provisionedConcurrency).toBeUndefined();
      expect(warm.functions[functionKey(metadata.name)].provisionedConcurrency).toBe(2);
    }
  });
});

describe('npm run package (osls, offline, no credentials)', () => {
  let out: string;
  let template: { Resources: Record<string, any>; Conditions: Record<string, any>; Outputs: Record<string, any> };
  const resourcesOf = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'sls-package-'));
    // No AWS credentials, profile or config: packaging must not need any.
    const run = offlineSls(['package', '--stage', 'dev', '--package', out], {}, 540_000);
    if (run.status !== 0) throw new Error(`sls package failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
    template = JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8'));
  }, 600_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('one Lambda per plugin, nodejs22.x, its own memory setting, each with its own role', () => {
    const lambdas = resourcesOf('AWS::Lambda::Function');
    expect(lambdas.map(([id]) => id).sort()).toEqual(
      packaged.map((p) => `${logicalPrefix(p.metadata.name)}LambdaFunction`).sort(),
    );
    for (const { metadata } of packaged)
      expect(
        template.Resources[`${logicalPrefix(metadata.name)}LambdaFunction`].Properties.MemorySize,
        metadata.name,
      ).toBe(functionMemory(metadata.name));
    for (const [id, lambda] of lambdas) {
      expect(lambda.Properties.Runtime).toBe('nodejs22.x');
      expect(lambda.Properties.Role).toEqual({ 'Fn::GetAtt': [id.replace(/LambdaFunction$/, 'LambdaRole'), 'Arn'] });
      expect(Object.keys(lambda.Properties.Environment.Variables)).toEqual(
        expect.arrayContaining([
          'ADMISSION_CONFIG',
          'STATE_TABLE',
          'CALLER_AUTH',
          'ALLOWED_CLIENT_SUBJECTS',
          'URL_CAPABILITY_KEYS',
        ]),
      );
    }
    // No shared role with every permission.
    expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
  });

  it('gives DynamoDB access only to plugins that write or learn state, only on the state table, only their partitions', () => {
    for (const { metadata } of packaged) {
      const role = template.Resources[`${logicalPrefix(metadata.name)}LambdaRole`];
      expect(role.Type).toBe('AWS::IAM::Role');
      // The deployer policy's IAM statements reach these roles by this path only.
      expect(role.Properties.Path).toBe('/serverless-admission/');
      const statements = role.Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement);
      const dynamo = statements.filter((s: any) => s.Action.some((a: string) => a.startsWith('dynamodb:')));
      expect(dynamo.length > 0, `${metadata.name} table access`).toBe(usesTable(metadata));
      for (const s of dynamo) {
        // The table has no index: its items only, and only under the plugin's own partition keys.
        expect(s.Resource).toEqual([{ 'Fn::GetAtt': ['StateTable', 'Arn'] }]);
        expect(s.Condition).toEqual({
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitionPatterns(metadata) },
        });
        expect(partitionPatterns(metadata).length, metadata.name).toBeGreaterThan(0);
        expect(s.Action).not.toContain('dynamodb:*');
        expect(s.Action).not.toContain('dynamodb:Scan');
      }
      for (const s of statements) expect(s.Resource).not.toContain('*');
    }
  });

  it('serves http POST <plugin>/<endpoint> on a REST API whose execute-api endpoint is disabled', () => {
    const [[, api]] = resourcesOf('AWS::ApiGateway::RestApi');
    expect(api.Properties.DisableExecuteApiEndpoint).toBe(true);
    expect(api.Properties.EndpointConfiguration.Types).toEqual(['REGIONAL']);
    const paths = resourcesOf('AWS::ApiGateway::Resource').map(([, r]) => r.Properties.PathPart);
    for (const { metadata } of packaged) {
      expect(paths).toContain(metadata.name);
      for (const endpoint of endpoints(metadata)) expect(paths).toContain(endpoint);
    }
    expect(resourcesOf('AWS::ApiGateway::Method').length).toBe(
      packaged.reduce((n, p) => n + endpoints(p.metadata).length, 0),
    );
  });

  it('has the regional mTLS custom domain with its truststore and a base path mapping to the stage', () => {
    const domain = template.Resources.WebhookDomain;
    expect(domain.Type).toBe('AWS::ApiGateway::DomainName');
    expect(domain.Properties).toMatchObject({
      DomainName: 'admission.dev.example.com',
      SecurityPolicy: 'TLS_1_2',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    expect(domain.Properties.MutualTlsAuthentication['Fn::If'][0]).toBe('HasTruststore');
    expect(domain.Properties.MutualTlsAuthentication['Fn::If'][1].TruststoreUri).toBe(
      's3://serverless-admission-dev-truststore/truststore.pem',
    );
    expect(template.Conditions.HasTruststore).toEqual({
      'Fn::Not': [{ 'Fn::Equals': ['s3://serverless-admission-dev-truststore/truststore.pem', ''] }],
    });
    const mapping = template.Resources.WebhookBasePathMapping;
    expect(mapping.Properties).toMatchObject({
      DomainName: { Ref: 'WebhookDomain' },
      RestApiId: { Ref: 'ApiGatewayRestApi' },
      Stage: 'dev',
    });
    const [[deploymentId]] = resourcesOf('AWS::ApiGateway::Deployment');
    expect([mapping.DependsOn].flat()).toEqual([deploymentId]);
  });

  it('has the state table: pk/sk strings, TTL on expiresAt, point-in-time recovery', () => {
    const table = template.Resources.StateTable;
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.Properties.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(table.Properties.AttributeDefinitions).toEqual([
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ]);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it("has every function's alarms and one dashboard with a row per plugin", () => {
    const alarms = resourcesOf('AWS::CloudWatch::Alarm').map(([id]) => id);
    for (const { metadata } of packaged) {
      const key = logicalPrefix(metadata.name);
      expect(alarms).toEqual(expect.arrayContaining([`${key}FailureRateAlarm`, `${key}ThrottlesAlarm`]));
      for (const phase of phases(metadata))
        expect(alarms).toContain(`${key}${phase === 'mutate' ? 'Mutate' : 'Validate'}LatencyAlarm`);
      expect(alarms.includes(`${key}StoreFailuresAlarm`)).toBe(usesTable(metadata));
    }
    const dashboards = resourcesOf('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const [[, dashboard]] = dashboards;
    expect(dashboard.Properties.DashboardName).toBe('serverless-admission-dev');
    const body = JSON.parse(dashboard.Properties.DashboardBody['Fn::Sub']);
    for (const { metadata } of packaged) {
      const titles = body.widgets
        .map((w: any) => w.properties.title)
        .filter((t: string | undefined) => t?.startsWith(`${metadata.name}:`));
      expect(titles.length, metadata.name).toBe(usesTable(metadata) ? 4 : 3);
    }
    // Every ${...} left for Fn::Sub is the region or a function of this template.
    const refs = [...dashboard.Properties.DashboardBody['Fn::Sub'].matchAll(/\$\{([^}]+)\}/g)].map(
      (m: RegExpMatchArray) => m[1],
    );
    for (const ref of refs)
      expect(ref === 'AWS::Region' || template.Resources[ref]?.Type === 'AWS::Lambda::Function', ref).toBe(true);
    expect(template.Outputs.DashboardName.Value).toEqual({ Ref: 'AdmissionDashboard' });
  });

  it('throttles the stage its deployment creates, per route too, and reserves each function 25 instances', () => {
    const [[, deployment]] = resourcesOf('AWS::ApiGateway::Deployment');
    expect(deployment.Properties.StageName).toBe('dev');
    expect(deployment.Properties.StageDescription).toMatchObject({
      ThrottlingRateLimit: 1000,
      ThrottlingBurstLimit: 2000,
    });
    expect(deployment.Properties.StageDescription.MethodSettings).toHaveLength(
      resourcesOf('AWS::ApiGateway::Method').length,
    );
    for (const [, fn] of resourcesOf('AWS::Lambda::Function'))
      expect(fn.Properties.ReservedConcurrentExecutions).toBe(25);
  });

  it('keeps logs for a bounded time', () => {
    const groups = resourcesOf('AWS::Logs::LogGroup');
    expect(groups).toHaveLength(packaged.length);
    for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
  });

  it('packages each function on its own, at most 1 MB: its bundle and the packaged configuration, nothing else', () => {
    const zips = readdirSync(out).filter((f) => f.endsWith('.zip'));
    expect(zips.sort()).toEqual(packaged.map((p) => `${functionKey(p.metadata.name)}.zip`).sort());
    for (const { metadata } of packaged) {
      const zip = join(out, `${functionKey(metadata.name)}.zip`);
      expect(statSync(zip).size, `${zip} size`).toBeLessThanOrEqual(1024 * 1024);
      const listing = spawnSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort();
      // No config/ (listings, examples, other files), no other plugin's code, no node_modules.
      expect(listing, zip).toEqual(['.package/admission-configuration.json', `functions/${metadata.name}/handler.cjs`]);
    }
  });

  it('outputs what the deploy guide reads: the base URL (custom domain, else execute-api), its DNS target, the table', () => {
    expect(template.Outputs.WebhookBaseUrl.Condition).toBeUndefined();
    expect(template.Outputs.WebhookBaseUrl.Value).toEqual({
      'Fn::If': [
        'HasCustomDomain',
        'https://admission.dev.example.com',
        {
          'Fn::Join': [
            '',
            [
              'https://',
              { Ref: 'ApiGatewayRestApi' },
              '.execute-api.',
              { Ref: 'AWS::Region' },
              '.',
              { Ref: 'AWS::URLSuffix' },
              '/dev',
            ],
          ],
        },
      ],
    });
    expect(template.Outputs.CallerAuth.Value).toBe('mtls');
    expect(template.Outputs.WebhookDomainTarget).toMatchObject({
      Condition: 'HasCustomDomain',
      Value: { 'Fn::GetAtt': ['WebhookDomain', 'RegionalDomainName'] },
    });
    expect(template.Outputs.WebhookDomainHostedZoneId.Value).toEqual({
      'Fn::GetAtt': ['WebhookDomain', 'RegionalHostedZoneId'],
    });
    expect(template.Outputs.StateTableName.Value).toEqual({ Ref: 'StateTable' });
    // What emit --served checks its webhooks against: exactly the packaged plugins.
    expect(template.Outputs.ServedPlugins.Value.split(',').sort()).toEqual(packaged.map((p) => p.metadata.name).sort());
    expect(template.Resources.StateTable.Properties.TableName).toBe('serverless-admission-dev-state');
    // Teardown keeps the table: the guide says how to delete it.
    expect(template.Resources.StateTable.DeletionPolicy).toBe('Retain');
  });

  /** The template's deploy, as requests of the deployer: each action on the ARN it names, with its context. */
  function deployRequests(policyOf: (type: string) => readonly string[]): IamRequest[] {
    const requests: IamRequest[] = [];
    const bucket = `${STACK}-serverlessdeploymentbucket-${'a1b2c3d4'}`;
    const functionArn = (name: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
    const functionNames = resourcesOf('AWS::Lambda::Function').map(([, r]) => r.Properties.FunctionName as string);
    for (const [id, resource] of Object.entries(template.Resources)) {
      const p = resource.Properties ?? {};
      const on = (resources: string | readonly string[], context?: IamRequest['context']) => (action: string) =>
        [resources]
          .flat()
          .map((r) => ({ action, resource: NO_RESOURCE.has(action) ? '*' : r, ...(context && { context }) }));
      let arns: (action: string) => IamRequest[];
      switch (resource.Type) {
        case 'AWS::IAM::Role': {
          const boundary = resolveIntrinsic(p.PermissionsBoundary);
          arns = on(`arn:aws:iam::${ACCOUNT}:role${p.Path}${STACK}-${id}-A1B2C3D4`, {
            'iam:PermissionsBoundary': boundary,
            'aws:PrincipalAccount': ACCOUNT,
          });
          break;
        }
        case 'AWS::Lambda::Function':
          arns = (action) =>
            action === 'iam:PassRole'
              ? [
                  {
                    action,
                    resource: `arn:aws:iam::${ACCOUNT}:role/serverless-admission/${STACK}-${id}-A1B2C3D4`,
                    context: { 'iam:PassedToService': 'lambda.amazonaws.com' },
                  },
                ]
              : action === 's3:GetObject'
                ? [{ action, resource: `arn:aws:s3:::${bucket}/serverless/${STACK}/a.zip` }]
                : on(functionArn(p.FunctionName))(action);
          break;
        case 'AWS::Lambda::Version':
        case 'AWS::Lambda::Permission':
        case 'AWS::Lambda::Alias':
          // FunctionName: { Ref: <function> } or { Fn::GetAtt: [<function>, Arn] }.
          arns = on(
            functionArn(
              template.Resources[p.FunctionName.Ref ?? p.FunctionName['Fn::GetAtt'][0]].Properties.FunctionName,
            ),
          );
          break;
        case 'AWS::Logs::LogGroup':
          arns = on(`arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${p.LogGroupName}`);
          break;
        case 'AWS::DynamoDB::Table':
          arns = (action) =>
            action.startsWith('kms:')
              ? [
                  {
                    action,
                    resource: `arn:aws:kms:${REGION}:${ACCOUNT}:key/00000000-0000-0000-0000-000000000000`,
                    context: { 'kms:ViaService': `dynamodb.${REGION}.amazonaws.com` },
                  },
                ]
              : on(`arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${p.TableName}`)(action);
          break;
        case 'AWS::ApiGateway::RestApi':
          arns = (action) => on(action === 'apigateway:POST' ? '/restapis' : `/restapis/${API_ID}`)(action).map(apigw);
          break;
        case 'AWS::ApiGateway::Resource':
        case 'AWS::ApiGateway::Method':
          arns = (action) => on(`/restapis/${API_ID}/resources/r1b2c3/methods/POST`)(action).map(apigw);
          break;
        case 'AWS::ApiGateway::Deployment':
          arns = (action) => on(`/restapis/${API_ID}/deployments`)(action).map(apigw);
          break;
        case 'AWS::ApiGateway::DomainName':
          arns = (action) =>
            action.startsWith('s3:')
              ? on(`arn:aws:s3:::${TRUSTSTORE.slice('s3://'.length)}`)(action)
              : on(action === 'apigateway:POST' ? '/domainnames' : `/domainnames/${DOMAIN}`)(action).map(apigw);
          break;
        case 'AWS::ApiGateway::BasePathMapping':
          arns = (action) => on(`/domainnames/${DOMAIN}/basepathmappings/(none)`)(action).map(apigw);
          break;
        case 'AWS::CloudWatch::Alarm':
          arns = on(`arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${p.AlarmName}`);
          break;
        case 'AWS::CloudWatch::Dashboard':
          arns = on(`arn:aws:cloudwatch::${ACCOUNT}:dashboard/${p.DashboardName}`);
          break;
        case 'AWS::S3::Bucket':
        case 'AWS::S3::BucketPolicy':
          arns = on(`arn:aws:s3:::${bucket}`);
          break;
        default:
          throw new Error(`${resource.Type}: add the ARNs CloudFormation acts on for it`);
      }
      for (const action of policyOf(resource.Type)) requests.push(...arns(action));
    }
    for (const action of OSLS_ACTIONS) {
      const service = action.split(':')[0];
      const resource = NO_RESOURCE.has(action)
        ? '*'
        : service === 'cloudformation'
          ? `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${STACK}/0f1e2d3c-0000-0000-0000-000000000000`
          : service === 'lambda'
            ? functionArn(functionNames[0]!)
            : /Object/.test(action)
              ? `arn:aws:s3:::${bucket}/serverless/${STACK}/a.zip`
              : `arn:aws:s3:::${bucket}`;
      requests.push({ action, resource });
    }
    return requests;
  }

  /** The deployer policy with its placeholders filled in as an operator of this template would. */
  const deployerPolicy = (): PolicyDocument =>
    JSON.parse(
      readFileSync(join(root, 'docs/deployer-policy.json'), 'utf8')
        .replaceAll('REPLACE-WITH-TRUSTSTORE-BUCKET', TRUSTSTORE.slice('s3://'.length).split('/')[0]!)
        .replaceAll('REPLACE-WITH-DOMAIN-NAME', DOMAIN),
    );

  it('has a deployer policy (docs/deployer-policy.json) allowing every action the template needs, on its ARN', () => {
    const policy = deployerPolicy();
    expect(policy.Version).toBe('2012-10-17');
    for (const s of policy.Statement.filter((s) => s.Effect === 'Allow'))
      for (const action of [s.Action].flat()) expect(action, 'no wildcard action').toMatch(/^[a-z0-9-]+:[A-Za-z]+$/);
    const requests = deployRequests((type) => DEPLOY_ACTIONS[type] ?? []);
    for (const type of new Set(Object.values(template.Resources).map((r: any) => r.Type as string)))
      expect(Object.keys(DEPLOY_ACTIONS), `${type}: add the actions CloudFormation calls for it`).toContain(type);
    expect(requests.length).toBeGreaterThan(500);
    const refused = requests.filter(
      (r) => evaluate(policy, { ...r, context: { 'aws:PrincipalAccount': ACCOUNT, ...r.context } }) !== 'allowed',
    );
    expect(refused).toEqual([]);
  });

  it('lets the deployer create a function role only with the shipped permissions boundary, and never remove it', () => {
    const policy = deployerPolicy();
    const role = `arn:aws:iam::${ACCOUNT}:role/serverless-admission/${STACK}-AnyLambdaRole-A1B2C3D4`;
    const boundary = `arn:aws:iam::${ACCOUNT}:policy/serverless-admission-boundary`;
    const asDeployer = (action: string, context: Record<string, string> = {}, resource = role) =>
      evaluate(policy, { action, resource, context: { 'aws:PrincipalAccount': ACCOUNT, ...context } });
    for (const action of ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy']) {
      expect(asDeployer(action, { 'iam:PermissionsBoundary': boundary }), action).toBe('allowed');
      expect(asDeployer(action), `${action} without a boundary`).toBe('explicitly denied');
      for (const other of [
        `arn:aws:iam::${ACCOUNT}:policy/AdministratorAccess`,
        'arn:aws:iam::aws:policy/AdministratorAccess',
        `arn:aws:iam::210987654321:policy/serverless-admission-boundary`,
      ])
        expect(asDeployer(action, { 'iam:PermissionsBoundary': other }), `${action} bounded by ${other}`).toBe(
          'explicitly denied',
        );
    }
    // Attaching managed policies, swapping or removing the boundary, rewriting the boundary itself.
    expect(asDeployer('iam:AttachRolePolicy', { 'iam:PermissionsBoundary': boundary })).toBe('implicitly denied');
    expect(asDeployer('iam:PutRolePermissionsBoundary', { 'iam:PermissionsBoundary': boundary })).toBe(
      'implicitly denied',
    );
    expect(asDeployer('iam:PutRolePermissionsBoundary')).toBe('explicitly denied');
    expect(asDeployer('iam:DeleteRolePermissionsBoundary', { 'iam:PermissionsBoundary': boundary })).toBe(
      'explicitly denied',
    );
    for (const action of ['iam:CreatePolicyVersion', 'iam:SetDefaultPolicyVersion', 'iam:DeletePolicy'])
      expect(asDeployer(action, {}, boundary), action).toBe('explicitly denied');
    expect(asDeployer('iam:CreatePolicy', {}, `arn:aws:iam::${ACCOUNT}:policy/anything`)).toBe('implicitly denied');
    // Roles elsewhere in the account: neither created nor passed.
    const elsewhere = `arn:aws:iam::${ACCOUNT}:role/admin`;
    expect(asDeployer('iam:CreateRole', { 'iam:PermissionsBoundary': boundary }, elsewhere)).toBe('implicitly denied');
    expect(asDeployer('iam:PassRole', { 'iam:PassedToService': 'lambda.amazonaws.com' }, elsewhere)).toBe(
      'implicitly denied',
    );
    expect(asDeployer('iam:PassRole', { 'iam:PassedToService': 'ec2.amazonaws.com' })).toBe('implicitly denied');
  });

  it("confines the deployer's API Gateway actions to REST APIs and the named domain", () => {
    const policy = deployerPolicy();
    const asDeployer = (action: string, path: string) => evaluate(policy, apigw({ action, resource: path }));
    expect(asDeployer('apigateway:POST', '/restapis')).toBe('allowed');
    expect(asDeployer('apigateway:PATCH', `/restapis/${API_ID}/stages/dev`)).toBe('allowed');
    expect(asDeployer('apigateway:POST', '/domainnames')).toBe('allowed');
    expect(asDeployer('apigateway:DELETE', `/domainnames/${DOMAIN}`)).toBe('allowed');
    // Another domain of the account, its mappings, and the account's other API Gateway resources.
    expect(asDeployer('apigateway:DELETE', '/domainnames/shop.example.com')).toBe('implicitly denied');
    expect(asDeployer('apigateway:POST', '/domainnames/shop.example.com/basepathmappings')).toBe('implicitly denied');
    expect(asDeployer('apigateway:PATCH', '/account')).toBe('implicitly denied');
    expect(asDeployer('apigateway:POST', '/apikeys')).toBe('implicitly denied');
    expect(asDeployer('apigateway:POST', '/usageplans')).toBe('implicitly denied');
    expect(asDeployer('apigateway:PUT', `/tags/arn%3Aaws%3Aapigateway%3A${REGION}%3A%3A%2Frestapis%2Fother`)).toBe(
      'implicitly denied',
    );
  });

  it('bounds every IAM role of the template by the shipped permissions boundary, which allows what the roles hold', () => {
    const boundaryPolicy: PolicyDocument = JSON.parse(
      readFileSync(join(root, 'docs/permissions-boundary.json'), 'utf8'),
    );
    const roles = resourcesOf('AWS::IAM::Role');
    expect(roles.length).toBe(packaged.length);
    for (const [id, role] of roles) {
      expect(role.Properties.PermissionsBoundary, id).toEqual({
        'Fn::Sub': `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:policy/serverless-admission-boundary`,
      });
      // Every action of the role's own policy, on the resource it names, passes the boundary too.
      const statements = role.Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement);
      const inline: PolicyDocument = {
        Version: '2012-10-17',
        Statement: statements.map((s: any) => ({ ...s, Resource: [s.Resource].flat().map(resolveIntrinsic) })),
      };
      for (const s of inline.Statement)
        for (const action of [s.Action].flat())
          for (const resource of [s.Resource].flat()) {
            const context = { 'dynamodb:LeadingKeys': ['ns#team-a'] };
            expect(evaluate(boundaryPolicy, { action, resource, context }), `${id}: ${action} on ${resource}`).toBe(
              'allowed',
            );
          }
      // Nothing the boundary leaves out: another table, another log group, IAM.
      for (const [action, resource] of [
        ['dynamodb:GetItem', `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/payments`],
        ['dynamodb:Scan', `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${STACK}-state`],
        ['logs:PutLogEvents', `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/payments:*`],
        ['iam:CreateRole', `arn:aws:iam::${ACCOUNT}:role/serverless-admission/x`],
      ] as const)
        expect(evaluateIntersection([boundaryPolicy, inline], { action, resource }), `${id}: ${action}`).not.toBe(
          'allowed',
        );
    }
  });

  it('starts every function from the packaged configuration, which names no file it does not carry', () => {
    for (const [, lambda] of resourcesOf('AWS::Lambda::Function'))
      expect(lambda.Properties.Environment.Variables.ADMISSION_CONFIG).toBe('.package/admission-configuration.json');
    const packagedConfig = JSON.parse(readFileSync(join(root, '.package/admission-configuration.json'), 'utf8'));
    expect(packagedConfig).toMatchObject({
      kind: 'PackagedConfiguration',
      admissionConfiguration: 'config/admission.yaml',
    });
    expect(Object.keys(packagedConfig.files)).toContain('config/admission.yaml');
    expect(Object.keys(packagedConfig.files).every((f) => f.startsWith('config/'))).toBe(true);
    // Certificates a kubeconfig names travel as text in the same file (none with the shipped configuration).
    expect(packagedConfig.texts).toEqual({});
  });

  it('bundles no YAML parser and no AWS SDK: every function is at most 112 KB', () => {
    for (const { metadata } of packaged) {
      const zip = join(out, `${functionKey(metadata.name)}.zip`);
      const bundle = spawnSync('unzip', ['-p', zip, `functions/${metadata.name}/handler.cjs`], {
        maxBuffer: 8 * 1024 * 1024,
      }).stdout;
      // yaml's own error class names survive minification; a bundle that carried it would hold them.
      expect(bundle.includes('YAMLParseError'), `${metadata.name} carries yaml`).toBe(false);
      // The SDK names itself in its user agent; the functions sign their own DynamoDB calls.
      expect(bundle.includes('aws-sdk-js'), `${metadata.name} carries the AWS SDK`).toBe(false);
      // The largest, node-restriction, is 104.5 KB since capabilities name their deployment, state
      // keys their cluster and a store miss may read the cluster; the SDK's client alone is ~390 KB.
      expect(bundle.length, `${metadata.name} bundle bytes`).toBeLessThanOrEqual(112 * 1024);
      if (!usesTable(metadata)) {
        // middy's streamed-response modules are stubbed (infra/serverless/esbuild-plugins.cjs):
        // nothing else in a stateless function imports a stream.
        expect(bundle.includes('"node:stream'), `${metadata.name} imports node:stream`).toBe(false);
      } else {
        expect(bundle.includes('aws4_request'), `${metadata.name} signs its DynamoDB calls`).toBe(true);
      }
    }
  });

  it('builds stateful bundles that answer from DynamoDB with no node_modules: the first store call included', async () => {
    const { metadata } = packaged.find((p) => p.metadata.name === 'namespace-lifecycle')!;
    const store = await testStore('package-namespace-lifecycle');
    onTestFinished(() => store.close());
    // A pod created in a namespace the store knows is terminating: refused, which only a store read can tell.
    await store
      .state({ uid: 'seed', dryRun: false })
      .namespaceLearner.observe(requestOf(namespaceReview('UPDATE', 'leaving', { phase: 'Terminating' })));
    const pod = review({ namespace: 'leaving', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } });
    const result = invokeUnzipped(
      join(out, `${functionKey(metadata.name)}.zip`),
      metadata.name,
      'validate',
      JSON.stringify(pod),
      { DYNAMODB_ENDPOINT: store.endpoint, STATE_TABLE: store.tableName },
    );
    expect(result.statusCode, result.body).toBe(200);
    expect(JSON.parse(result.body).response).toMatchObject({
      uid: pod.request.uid,
      allowed: false,
      status: { code: 403, reason: 'Forbidden' },
    });
    expect(JSON.parse(result.body).response.status.message).toContain('because it is being terminated');
  });

  it('builds bundles that run on the local Node: the handler answers a real apiserver review', () => {
    const { metadata } = packaged.find((p) => p.metadata.mutating)!;
    const review = readFileSync(
      join(root, 'test/fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json'),
      'utf8',
    );
    const result = invokeUnzipped(join(out, `${functionKey(metadata.name)}.zip`), metadata.name, 'mutate', review);
    expect(result.statusCode).toBe(200);
    const answer = JSON.parse(result.body);
    expect(answer).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: JSON.parse(review).request.uid },
    });
  });
});

const READER_SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:reader-token-AbCdEf';

// Its own packaging, after the file's others (osls and esbuild share the checkout's build folders).
describe('packaged with a cluster reader', () => {
  it('osls packages the scheduled function, its role and alarm, under 500 resources, and a zip of its own', () => {
    const out = mkdtempSync(join(tmpdir(), 'sls-reader-package-'));
    onTestFinished(() => rmSync(out, { recursive: true, force: true }));
    const run = offlineSls([
      'package',
      '--stage',
      'dev',
      '--package',
      out,
      '--param=clusterReader=token',
      '--param=clusterEndpoint=https://203.0.113.10:6443',
      `--param=clusterCa=${Buffer.from(testPki().ca.certPem).toString('base64')}`,
      `--param=clusterTokenSource=${READER_SECRET}`,
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const template = JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8'));
    const resources: Record<string, any> = template.Resources;
    expect(Object.keys(resources).length).toBeLessThan(500);
    const fn = resources.ClusterReaderLambdaFunction.Properties;
    expect(fn.Role).toEqual({ 'Fn::GetAtt': [READER_ROLE_LOGICAL_ID, 'Arn'] });
    // The reader's memory is param memorySize's, the setting its measured peak RSS chose.
    expect(fn.MemorySize).toBe(readerMemorySetting());
    expect(fn.Environment.Variables).toMatchObject({ CLUSTER_READER: 'token', CLUSTER_TOKEN_SOURCE: READER_SECRET });
    const rule = Object.values(resources).find((r) => r.Type === 'AWS::Events::Rule');
    expect(rule?.Properties.ScheduleExpression).toBe('rate(1 minute)');
    expect(resources[READER_ALARM_LOGICAL_ID].Type).toBe('AWS::CloudWatch::Alarm');
    // Every plugin function learns nothing from requests: the reader is the one source.
    for (const resource of Object.values(resources))
      if (resource.Type === 'AWS::Lambda::Function')
        expect(resource.Properties.Environment.Variables.CLUSTER_READER).toBe('token');
    const zip = spawnSync('unzip', ['-Z1', join(out, 'clusterReader.zip')], { encoding: 'utf8' });
    expect(zip.stdout.split('\n').filter(Boolean).sort()).toEqual([
      '.package/admission-configuration.json',
      'infra/cluster-reader/handler.cjs',
    ]);
  });
});

// Its own packaging too: a fleet of two clusters (config/clusters/ as param clustersDir names it).
describe('packaged as a fleet', () => {
  it('osls packages the union of the plugins, each zip with its own package, and the bundle serves each cluster', () => {
    const out = mkdtempSync(join(tmpdir(), 'sls-fleet-package-'));
    // Under the checkout, as config/clusters/ is: packaged files are named relative to it.
    const clusters = mkdtempSync(join(root, '.local', 'fleet-package-'));
    onTestFinished(() => {
      rmSync(out, { recursive: true, force: true });
      rmSync(clusters, { recursive: true, force: true });
    });
    const enabled: Record<string, string[]> = {
      blue: ['PodNodeSelector', 'ResourceQuota'],
      green: ['AlwaysPullImages', 'PodNodeSelector'],
    };
    for (const [cluster, names] of Object.entries(enabled)) {
      writeFileSync(
        join(clusters, `${cluster}.yaml`),
        `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n${names.map((n) => `  - name: ${n}\n`).join('')}`,
      );
      // Two shares: blue's own, green's the default.
      const share = cluster === 'blue' ? 'throttle: {requestsPerSecond: 50, burst: 100}\n' : '';
      writeFileSync(join(clusters, `${cluster}.settings.yaml`), `allowedSubjects: [${cluster}-apiserver]\n${share}`);
    }
    const run = offlineSls(['package', '--stage', 'dev', '--package', out, `--param=clustersDir=${clusters}`]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const template = JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8'));
    expect(template.Outputs.ServedPlugins.Value).toBe('always-pull-images,pod-node-selector,resource-quota');
    expect(template.Outputs.ServedClusters.Value).toBe(
      'blue:pod-node-selector resource-quota;green:always-pull-images pod-node-selector',
    );
    const resources: Record<string, any> = template.Resources;
    const paths = Object.values<any>(resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::Resource')
      .map((r) => r.Properties.PathPart);
    // A single cluster's routes; each cluster is a stage of the same deployment, at its own share.
    expect(paths).not.toContain('{cluster}');
    const [deploymentId] = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::ApiGateway::Deployment');
    const stages = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::Stage');
    expect(
      stages.map(([id, r]) => [id, r.Properties.StageName, r.Properties.DeploymentId, r.Properties.MethodSettings]),
    ).toEqual([
      [
        'ClusterBlueStage',
        'blue',
        { Ref: deploymentId },
        [{ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 }],
      ],
      [
        'ClusterGreenStage',
        'green',
        { Ref: deploymentId },
        [{ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 }],
      ],
    ]);
    // The deployment's own stage (dev) is no cluster's; the domain maps only the clusters' base paths.
    expect(resources[deploymentId].Properties.StageName).toBe('dev');
    const mappings = Object.values<any>(resources).filter((r) => r.Type === 'AWS::ApiGateway::BasePathMapping');
    expect(mappings.map((m) => [m.Condition, m.Properties.BasePath, m.Properties.Stage])).toEqual([
      ['HasCustomDomain', 'blue', { Ref: 'ClusterBlueStage' }],
      ['HasCustomDomain', 'green', { Ref: 'ClusterGreenStage' }],
    ]);
    // 2 resources per cluster, well within CloudFormation's 500.
    expect(Object.keys(resources).length).toBeLessThan(500);
    process.stderr.write(`packaged fleet of 2 clusters: ${Object.keys(resources).length} resources\n`);
    // The execute-api base URL without the deployment's stage: the cluster's stage opens each URL.
    expect(template.Outputs.WebhookBaseUrl.Value['Fn::If'][2]['Fn::Join'][1].at(-1)).toBe('');
    for (const name of ['always-pull-images', 'pod-node-selector', 'resource-quota']) {
      const zip = join(out, `${functionKey(name)}.zip`);
      const listing = spawnSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort();
      expect(listing, zip).toEqual([`.package/fleet/${name}.json`, `functions/${name}/handler.cjs`]);
      const lambda = template.Resources[`${logicalPrefix(name)}LambdaFunction`];
      expect(lambda.Properties.Environment.Variables.ADMISSION_CONFIG).toBe(`.package/fleet/${name}.json`);
    }
    // The bundle, unzipped and started as deployed: green is served AlwaysPullImages; blue, which
    // does not enable it, gets 404 with its own certificate, and green's certificate at blue's path 403.
    const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    expect(spawnSync('unzip', ['-q', join(out, 'alwaysPullImages.zip'), '-d', dir]).status).toBe(0);
    const pod = review({
      namespace: 'apps',
      object: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    });
    const script = `
      const { handler } = await import('./functions/always-pull-images/handler.cjs');
      const answers = [];
      for (const [path, subject] of JSON.parse(process.env.CALLS)) {
        // Through the custom domain: the base path /<cluster> mapped to the cluster's stage.
        const event = { path, httpMethod: 'POST', headers: { 'content-type': 'application/json' },
          body: process.env.REVIEW, isBase64Encoded: false,
          requestContext: { path, stage: path.split('/')[1], domainName: 'admission.dev.example.com',
            identity: { clientCert: { subjectDN: 'CN=' + subject } } } };
        answers.push((await handler(event, { getRemainingTimeInMillis: () => 5000 })).statusCode);
      }
      process.stdout.write(JSON.stringify(answers));`;
    const calls = [
      ['/green/always-pull-images/mutate', 'green-apiserver'],
      ['/blue/always-pull-images/mutate', 'blue-apiserver'],
      ['/blue/always-pull-images/mutate', 'green-apiserver'],
      ['/red/always-pull-images/mutate', 'green-apiserver'],
    ];
    const invoked = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        ADMISSION_CONFIG: '.package/fleet/always-pull-images.json',
        CALLER_AUTH: 'mtls',
        LOG_LEVEL: 'silent',
        REVIEW: JSON.stringify(pod),
        CALLS: JSON.stringify(calls),
      },
    });
    expect(invoked.status, invoked.stderr).toBe(0);
    expect(JSON.parse(invoked.stdout)).toEqual([200, 404, 403, 404]);
  });
});
