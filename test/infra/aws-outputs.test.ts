// `npm run -s outputs`: the deployed stack's outputs, read with the AWS SDK's CloudFormation
// client from a loopback stand-in for the CloudFormation endpoint (AWS itself is the one thing
// that cannot run here), and the emit command they make, which is run for real.
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const XMLNS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

/** The stacks the stand-in knows: stack name -> outputs. */
const STACKS: Record<string, Record<string, string>> = {
  'serverless-admission-eks': {
    WebhookBaseUrl: 'https://a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com/eks',
    CallerAuth: 'url-secret',
    StateTableName: 'serverless-admission-eks-state',
    DashboardName: 'serverless-admission-eks',
    ServedPlugins: 'always-pull-images,pod-node-selector',
    ServiceEndpoint: 'https://a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com/eks',
    AlwaysPullImagesLambdaFunctionQualifiedArn: 'arn:aws:lambda:eu-central-1:123456789012:function:x:1',
  },
  'serverless-admission-prod': {
    WebhookBaseUrl: 'https://admission.example.com',
    CallerAuth: 'mtls',
    WebhookDomainTarget: 'd-abc123.execute-api.eu-central-1.amazonaws.com',
    WebhookDomainHostedZoneId: 'Z1U9ULNL0V5AJ3',
    StateTableName: 'serverless-admission-prod-state',
    DashboardName: 'serverless-admission-prod',
  },
  // A fleet of two clusters: each cluster is a stage, whose name emit --cluster puts in the URL.
  'serverless-admission-fleet': {
    WebhookBaseUrl: 'https://f1e2d3c4b5.execute-api.eu-central-1.amazonaws.com',
    CallerAuth: 'url-secret',
    ServedPlugins: 'always-pull-images,pod-node-selector,resource-quota',
    ServedClusters: 'blue:pod-node-selector resource-quota;green:always-pull-images pod-node-selector',
  },
  // Packaged under an AdmissionConfiguration naming one plugin.
  'serverless-admission-small': {
    WebhookBaseUrl: 'https://small.example.com',
    CallerAuth: 'mtls',
    ServedPlugins: 'always-pull-images',
  },
};

interface Seen {
  readonly form: URLSearchParams;
  readonly authorization: string;
}

const seen: Seen[] = [];
let server: Server;
let endpoint: string;

const member = (key: string, value: string) =>
  `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`;

/** CloudFormation's Query protocol: a form-encoded POST, an XML answer. */
function answer(form: URLSearchParams): { status: number; body: string } {
  const name = form.get('StackName') ?? '';
  const outputs = STACKS[name];
  if (form.get('Action') !== 'DescribeStacks' || !outputs)
    return {
      status: 400,
      body: `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${name} does not exist</Message></Error><RequestId>r1</RequestId></ErrorResponse>`,
    };
  const members = Object.entries(outputs)
    .map(([k, v]) => member(k, v))
    .join('');
  return {
    status: 200,
    body: `<DescribeStacksResponse xmlns="${XMLNS}"><DescribeStacksResult><Stacks><member><StackName>${name}</StackName><StackId>arn:aws:cloudformation:eu-central-1:123456789012:stack/${name}/1</StackId><CreationTime>2026-11-01T00:00:00Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus><Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r2</RequestId></ResponseMetadata></DescribeStacksResponse>`,
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      seen.push({ form, authorization: String(req.headers.authorization ?? '') });
      const { status, body } = answer(form);
      res.writeHead(status, { 'content-type': 'text/xml' }).end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

/** `npm run -s outputs -- ARGS` with credentials in the environment and the stand-in as endpoint. */
async function outputs(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  const child = spawn('npm', ['run', '-s', 'outputs', '--', ...args], {
    cwd: ROOT,
    env: {
      ...env,
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const status = await new Promise<number | null>((done) => child.on('close', done));
  return { status, stdout, stderr };
}

describe('npm run -s outputs', () => {
  it('reads the stage stack in the given region with signed DescribeStacks; prints NAME=value lines', async () => {
    const run = await outputs(['--stage', 'prod', '--region', 'eu-central-1']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      [
        'WebhookBaseUrl=https://admission.example.com',
        'CallerAuth=mtls',
        'WebhookDomainTarget=d-abc123.execute-api.eu-central-1.amazonaws.com',
        'WebhookDomainHostedZoneId=Z1U9ULNL0V5AJ3',
        'StateTableName=serverless-admission-prod-state',
        'DashboardName=serverless-admission-prod',
        '',
      ].join('\n'),
    );
    expect(run.stderr).toContain('DNS: point admission.example.com at d-abc123.execute-api.eu-central-1.amazonaws.com');
    const request = seen.at(-1)!;
    expect(request.form.get('Action')).toBe('DescribeStacks');
    expect(request.form.get('StackName')).toBe('serverless-admission-prod');
    expect(request.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-central-1\/cloudformation\/aws4_request,/,
    );
  });

  it('--emit: the emit command of a url-secret deployment without a domain (its execute-api URL)', async () => {
    const run = await outputs(['--stage', 'eks', '--region', 'eu-central-1', '--emit']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      'npm run -s emit -- --auth url-secret --base-url https://a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com/eks --served always-pull-images,pod-node-selector\n',
    );
  });

  it('--emit of a fleet: one command per cluster, each with its --cluster and the plugins served for it', async () => {
    const run = await outputs(['--stage', 'fleet', '--region', 'eu-central-1', '--emit', '--out', 'webhooks/']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      [
        'npm run -s emit -- --cluster blue --auth url-secret --base-url https://f1e2d3c4b5.execute-api.eu-central-1.amazonaws.com --served pod-node-selector,resource-quota --out webhooks/blue',
        'npm run -s emit -- --cluster green --auth url-secret --base-url https://f1e2d3c4b5.execute-api.eu-central-1.amazonaws.com --served always-pull-images,pod-node-selector --out webhooks/green',
        '',
      ].join('\n'),
    );
    const listed = await outputs(['--stage', 'fleet', '--region', 'eu-central-1']);
    expect(listed.stdout).toContain(
      'ServedClusters=blue:pod-node-selector resource-quota;green:always-pull-images pod-node-selector\n',
    );
    expect(listed.stderr.match(/^next: npm run -s emit -- --cluster /gm)).toHaveLength(2);
  });

  it('--json: the outputs the next steps read, and only those', async () => {
    const run = await outputs(['--stage', 'eks', '--region', 'eu-central-1', '--json']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      WebhookBaseUrl: 'https://a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com/eks',
      CallerAuth: 'url-secret',
      StateTableName: 'serverless-admission-eks-state',
      DashboardName: 'serverless-admission-eks',
      ServedPlugins: 'always-pull-images,pod-node-selector',
    });
  });

  it('--emit of a deployment that serves fewer plugins than the configuration names: emit refuses', async () => {
    const run = await outputs(['--stage', 'small', '--region', 'eu-central-1', '--emit']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('npm run -s emit -- --base-url https://small.example.com --served always-pull-images\n');
    // The shipped configuration serves the default-on set, PodNodeSelector among it.
    const emit = spawnSync('sh', ['-c', run.stdout], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(emit.status).toBe(1);
    expect(emit.stdout).toBe('');
    expect(emit.stderr).toMatch(
      /emit: invalid configuration: AdmissionConfiguration: plugins: .*PodNodeSelector \(pod-node-selector\).*: not served by this deployment \(it serves always-pull-images\): package and deploy with the same ADMISSION_CONFIG, or leave them out with --plugins/,
    );
    // Leaving them out, as the message says, emits the one webhook pair the deployment answers.
    const one = spawnSync('sh', ['-c', `${run.stdout.trim()} --plugins always-pull-images`], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(one.status, one.stderr).toBe(0);
    const names = parseAllDocuments(one.stdout).map((d) => d.toJS().metadata.name);
    expect(names).toEqual(['serverless-admission-always-pull-images', 'serverless-admission-always-pull-images']);
  });

  it('--emit prints a command that runs: the mTLS emit it prints writes webhook configurations', async () => {
    const run = await outputs(['--stage', 'prod', '--region', 'eu-central-1', '--emit']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('npm run -s emit -- --base-url https://admission.example.com\n');
    const emit = spawnSync('sh', ['-c', run.stdout], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(emit.status, emit.stderr).toBe(0);
    const documents = parseAllDocuments(emit.stdout).map((d) => d.toJS());
    expect(documents.length).toBeGreaterThan(0);
    for (const doc of documents) {
      for (const webhook of doc.webhooks)
        expect(webhook.clientConfig.url).toMatch(/^https:\/\/admission\.example\.com\//);
    }
  });

  it('a stack that is not there: exit 1 with CloudFormation’s reason; no region: exit 2', async () => {
    const missing = await outputs(['--stage', 'gone', '--region', 'eu-central-1']);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('Stack with id serverless-admission-gone does not exist');
    const noRegion = await outputs(['--stage', 'prod']);
    expect(noRegion.status).toBe(2);
    expect(noRegion.stderr).toContain('no region');
  });
});
