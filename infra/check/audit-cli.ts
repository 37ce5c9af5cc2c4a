// `npm run audit -- --from pods.json --from namespaces.json ...`: PolicyReports of what the
// configured plugins would refuse among the objects that already run (audit.ts). Exit 0 when the
// reports are written (whatever they find), 1 on a failure, 2 on a usage error or unreadable input.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { DEFAULT_ADMISSION_CONFIG } from '../../lib/config/admission-configuration.js';
import { ConfigError } from '../../lib/config/errors.js';
import { CLUSTERS_DIR, clusterEnv, fleetCluster } from '../../lib/config/fleet.js';
import type { Listing } from '../sync/sync.js';
import { parseListing, SyncError } from '../sync/sync.js';
import type { PolicyReport } from './audit.js';
import { auditListings, summaryTable } from './audit.js';
import { AdmissionChain, DEFAULT_USER } from './runner.js';

export const USAGE = `Usage: npm run audit -- --from FILE [--from FILE...] [--config FILE | --cluster NAME] [--out DIR]

Judges every object that already runs as if it were created now, by the configured plugins'
validating webhooks (the same chain as npm run check, validating half only; nothing is recorded),
and writes wgpolicyk8s.io/v1alpha2 PolicyReports: one per namespace, and a ClusterPolicyReport for
cluster-scoped objects. Each result: policy = plugin, rule = webhook, result pass | fail | warn
(a refusal softened by enforcement Warn or Audit, or a warning) | error, the message, the object.

The listings are the ones \`npm run sync\` reads (kubectl get ... -o json); namespaces, quotas,
nodes and classes in them are loaded first, as sync would load them:

  kubectl get namespaces -o json > namespaces.json
  kubectl get pods,services,deployments -A -o json > workloads.json
  kubectl get resourcequotas -A -o json > quotas.json
  kubectl get storageclasses,ingressclasses,priorityclasses,runtimeclasses -o json > classes.json

Options:
      --from FILE       a kubectl get -o json listing; repeatable (required)
      --config FILE     the AdmissionConfiguration (default: ADMISSION_CONFIG, else ${DEFAULT_ADMISSION_CONFIG})
      --cluster NAME    a fleet's cluster: its AdmissionConfiguration, ${CLUSTERS_DIR}/NAME.yaml (docs/fleet.md)
      --out DIR         one file per report (policyreport-<namespace>.yaml, clusterpolicyreport.yaml)
                        instead of multi-document YAML on stdout
      --user NAME       the requesting user (default: ${DEFAULT_USER.username})
      --group GROUP     the user's groups; repeatable (default: ${DEFAULT_USER.groups?.join(', ')};
                        with --user: system:authenticated)
  -h, --help

Examples:
  npm run audit -- --from namespaces.json --from workloads.json > reports.yaml
  npm run audit -- --from namespaces.json --from workloads.json --out reports/ && kubectl apply -f reports/

A summary table (plugin x pass/fail/warn/error) goes to stderr.
Exit status: 0 reports written, 1 failure, 2 usage error or unreadable input.
`;

export interface AuditIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => Date;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function reportFileName(report: PolicyReport): string {
  return report.kind === 'ClusterPolicyReport'
    ? 'clusterpolicyreport.yaml'
    : `policyreport-${report.metadata.namespace}.yaml`;
}

async function audit(argv: string[], io: AuditIo): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        from: { type: 'string', multiple: true },
        config: { type: 'string' },
        cluster: { type: 'string' },
        out: { type: 'string' },
        user: { type: 'string' },
        group: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (!values.from?.length) throw new UsageError('--from FILE is required (a kubectl get -o json listing)');
  // --cluster NAME: a fleet's cluster, judged under its own AdmissionConfiguration.
  if (values.cluster !== undefined && values.config !== undefined)
    throw new UsageError(`--config and --cluster both name a configuration: --cluster ${values.cluster} reads its own`);
  const cluster = values.cluster === undefined ? undefined : fleetCluster(values.cluster);
  const configFile = cluster?.configFile ?? values.config;
  const listings: Listing[] = values.from.map((file) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new SyncError(`${file}: cannot be read`);
    }
    return parseListing(text, file);
  });
  const namespaces = new Map(
    listings
      .flatMap((l) => l.byKind.get('Namespace') ?? [])
      .map((ns) => [ns.metadata?.name as string, (ns.metadata?.labels ?? {}) as Record<string, string>]),
  );
  const chain = new AdmissionChain({
    ...(configFile !== undefined && { configFile }),
    env: cluster ? clusterEnv(cluster, io.env) : io.env,
    readOnly: true,
    namespaces,
    user: {
      username: values.user ?? DEFAULT_USER.username,
      groups: values.group ?? (values.user !== undefined ? ['system:authenticated'] : DEFAULT_USER.groups),
    },
  });
  io.stderr(
    `audit: ${cluster ? `cluster ${cluster.name}, ` : ''}configuration ${chain.configurationFile}, ${chain.active.length} plugins\n`,
  );
  const reports = await auditListings(chain, listings, (line) => io.stderr(`${line}\n`), io.now);
  if (values.out !== undefined) {
    mkdirSync(values.out, { recursive: true });
    for (const report of reports) {
      const file = join(values.out, reportFileName(report));
      writeFileSync(file, stringify(report, { lineWidth: 0, aliasDuplicateObjects: false }));
      io.stderr(`wrote ${file}\n`);
    }
  } else io.stdout(reports.map((r) => stringify(r, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n'));
  io.stderr(summaryTable(reports));
  return 0;
}

/** The whole command, without process globals, so tests run it in-process. Returns the exit code. */
export async function auditCommand(argv: string[], io: AuditIo): Promise<number> {
  try {
    return await audit(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`audit: ${error.message}\nRun npm run audit -- --help for usage.\n`);
      return 2;
    }
    if (error instanceof SyncError || error instanceof ConfigError) {
      io.stderr(`audit: ${error instanceof ConfigError ? 'invalid configuration: ' : ''}${error.message}\n`);
      return 2;
    }
    io.stderr(`audit: ${(error as Error).message}\n`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  auditCommand(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  }).then((code) => {
    process.exitCode = code;
  });
}
