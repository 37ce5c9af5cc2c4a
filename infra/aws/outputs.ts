// `npm run -s outputs -- --stage STAGE [--region REGION]`: reads the deployed stack's outputs
// (CloudFormation DescribeStacks, with the operator's AWS credentials) and prints what the next
// steps need: the outputs as NAME=value lines, or with --emit the `npm run -s emit` command for
// this deployment (its base URL and caller-auth mode; a fleet's, one per cluster). Data on stdout, notes on stderr.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { parse } from 'yaml';

const USAGE = `Usage: npm run -s outputs -- --stage STAGE [--region REGION] [--emit [--out DIR]] [--json]

Reads the outputs of the stack \`sls deploy --stage STAGE\` made (serverless-admission-STAGE) and
prints those the next steps read as NAME=value lines:

  WebhookBaseUrl             the --base-url of npm run emit: https://DOMAIN with a custom domain,
                             else https://API.execute-api.REGION.amazonaws.com/STAGE
  CallerAuth                 mtls or url-secret: the --auth of npm run emit
  WebhookDomainTarget        with a custom domain: where its DNS record points (CNAME or alias)
  WebhookDomainHostedZoneId  with a custom domain: the hosted zone of a Route 53 alias record
  StateTableName             the STATE_TABLE of npm run sync against this deployment
  DashboardName              the CloudWatch dashboard
  ServedPlugins              the plugins the deployment serves: the --served of npm run emit
  ServedClusters             a fleet: each cluster's plugins (cluster:plugin plugin;...)

Options:
  --stage STAGE    the stage deployed (required)
  --region REGION  the stack's region (default: AWS_REGION, else AWS_DEFAULT_REGION)
  --emit           print only the npm run -s emit command for this deployment (a fleet: one
                   per cluster, each with its --cluster)
  --out DIR        with --emit: add --out DIR to it (mTLS needs it: the apiserver's kubeconfig;
                   a fleet: DIR/CLUSTER for each cluster)
  --json           the outputs as one JSON object
  -h, --help       this text

Credentials: the AWS SDK's usual chain (AWS_PROFILE, AWS_ACCESS_KEY_ID..., SSO). Permission:
cloudformation:DescribeStacks on the stack.

Exit status: 0 printed, 1 the stack could not be read, 2 bad arguments.
`;

/** The outputs serverless.yml declares for the next steps, in the order printed. */
export const STACK_OUTPUTS = [
  'WebhookBaseUrl',
  'CallerAuth',
  'WebhookDomainTarget',
  'WebhookDomainHostedZoneId',
  'StateTableName',
  'DashboardName',
  'ServedPlugins',
  'ServedClusters',
] as const;

export interface OutputsIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

/** serverless.yml's `service`: the stack of a stage is `<service>-<stage>`. */
function serviceName(): string {
  const doc = parse(readFileSync(join(import.meta.dirname, '../../serverless.yml'), 'utf8')) as { service: string };
  return doc.service;
}

/** A value safe to paste into a POSIX shell as one word. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./~-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** ServedClusters (`blue:pod-node-selector resource-quota;green:...`) as cluster → its plugins. */
export function servedClusters(value: string): Map<string, string[]> {
  return new Map(
    value
      .split(';')
      .filter((entry) => entry.includes(':'))
      .map((entry) => {
        const [cluster = '', plugins = ''] = entry.split(':');
        return [cluster, plugins.split(' ').filter(Boolean)];
      }),
  );
}

/**
 * The emit commands of the deployment the outputs describe: one, or in a fleet one per cluster
 * (its --cluster, and as --served the plugins the deployment serves for that cluster).
 */
export function emitCommands(outputs: Readonly<Record<string, string>>, out?: string): string[] {
  const baseUrl = outputs.WebhookBaseUrl;
  if (!baseUrl) throw new Error('the stack has no WebhookBaseUrl output: deployed from an older serverless.yml?');
  const auth = outputs.CallerAuth === 'url-secret' ? ['--auth', 'url-secret'] : [];
  const command = (cluster: string[], served: string | undefined, outDir: string | undefined) =>
    [
      'npm',
      'run',
      '-s',
      'emit',
      '--',
      ...cluster,
      ...auth,
      '--base-url',
      baseUrl,
      ...(served ? ['--served', served] : []),
      ...(outDir ? ['--out', outDir] : []),
    ]
      .map(shellWord)
      .join(' ');
  if (!outputs.ServedClusters) return [command([], outputs.ServedPlugins, out)];
  return [...servedClusters(outputs.ServedClusters)].map(([cluster, plugins]) =>
    command(['--cluster', cluster], plugins.join(','), out ? `${out.replace(/\/+$/, '')}/${cluster}` : undefined),
  );
}

export async function outputsCommand(argv: string[], io: OutputsIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        stage: { type: 'string' },
        region: { type: 'string' },
        emit: { type: 'boolean', default: false },
        out: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    io.stderr(`outputs: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (!values.stage) {
    io.stderr(`outputs: --stage is required (the stage of sls deploy)\n\n${USAGE}`);
    return 2;
  }
  if (values.out !== undefined && !values.emit) {
    io.stderr('outputs: --out goes with --emit\n');
    return 2;
  }
  const region = values.region || io.env.AWS_REGION || io.env.AWS_DEFAULT_REGION;
  if (!region) {
    io.stderr('outputs: no region: give --region (the one sls deploy used) or set AWS_REGION\n');
    return 2;
  }
  const stack = `${serviceName()}-${values.stage}`;
  const client = new CloudFormationClient({ region, maxAttempts: 3 });
  let outputs: Record<string, string>;
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stack }));
    const found = Stacks?.[0];
    if (!found) throw new Error(`stack ${stack} not found`);
    const all = new Map((found.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
    outputs = Object.fromEntries(
      STACK_OUTPUTS.flatMap((name) => {
        const value = all.get(name);
        return value === undefined ? [] : [[name, value]];
      }),
    );
    io.stderr(`stack ${stack} in ${region}: ${found.StackStatus}\n`);
  } catch (error) {
    io.stderr(`outputs: stack ${stack} in ${region}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    client.destroy();
  }

  if (values.emit) {
    try {
      for (const command of emitCommands(outputs, values.out)) io.stdout(`${command}\n`);
    } catch (error) {
      io.stderr(`outputs: ${(error as Error).message}\n`);
      return 1;
    }
    return 0;
  }
  if (values.json) io.stdout(`${JSON.stringify(outputs, null, 2)}\n`);
  else for (const [name, value] of Object.entries(outputs)) io.stdout(`${name}=${value}\n`);
  if (outputs.WebhookBaseUrl && outputs.WebhookDomainTarget)
    io.stderr(`DNS: point ${new URL(outputs.WebhookBaseUrl).host} at ${outputs.WebhookDomainTarget}\n`);
  if (outputs.WebhookBaseUrl) for (const command of emitCommands(outputs)) io.stderr(`next: ${command}\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await outputsCommand(process.argv.slice(2), {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
  });
}
