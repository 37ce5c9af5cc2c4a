// `npm run sync -- --from FILE [--from FILE...]`: loads `kubectl get ... -o json` listings into
// the store the webhooks use (DYNAMODB_ENDPOINT / STATE_TABLE, as the server), so objects created
// before installation are known. Exit 0 when loaded, 1 on a failure, 2 on a usage error.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localClientOptions, localDynamoDb, stateTableName } from '../../lib/state/client.js';
import { clusterKeyPrefix, clusterPartitioned } from '../../lib/state/cluster-partition.js';
import type { DynamoDb } from '../../lib/state/dynamodb.js';
import { sdkDynamoDb } from '../../lib/state/dynamodb-sdk.js';
import { StoreUnavailableError } from '../../lib/admission/ports.js';
import { StateStore } from '../../lib/state/store.js';
import type { Listing } from './sync.js';
import { applyListings, onlyKinds, parseListing, SyncError } from './sync.js';
import { seedingPlan } from './plan.js';
import { plugins as registry } from '../../functions/index.js';
import { ConfigError } from '../../lib/config/errors.js';
import { activePlugins, loadPluginSet, selectionLine } from '../../lib/config/plugins.js';
import { CLUSTERS_DIR, checkClusterName, clusterEnv, fleetCluster } from '../../lib/config/fleet.js';
import { forgetCluster } from './forget.js';

/** Where `npm start` keeps its embedded store's data. */
const LOCAL_STORE_DIR = '.local/dynamodb';

export const USAGE = `Usage: npm run -s sync -- --from FILE|- [--from FILE...] [--admission-config FILE | --cluster NAME]
       npm run -s sync -- --cluster NAME --forget [--dry-run]

Loads objects that existed before the webhooks were installed into the store they use, from
kubectl's JSON listings (a file, or - for standard input; the kind is read from each item). Only
the kinds the active plugins learn are loaded (the AdmissionConfiguration decides which plugins
are active, as for every command); other kinds are skipped with a line each. emit prints the
one command that lists exactly what the active plugins need, for example:

  kubectl get namespaces,resourcequotas,pods,nodes -A -o json | npm run -s sync -- --from -

What each kind teaches:
  namespaces                learned namespaces; a complete listing (a namespace absent from it
                            does not exist: NamespaceLifecycle, NamespaceExists)
  resourcequotas            learned ResourceQuotas (ResourceQuota)
  pods                      each pod's node (NodeRestriction); with services, configmaps,
                            secrets, persistentvolumeclaims, replicationcontrollers and the apps
                            and batch workloads, a recount of the quota ledgers
  nodes                     each Node's uid (NodeRestriction) and labels
                            (OriginPodNodeEnvironment); complete: a Node absent is removed
  storageclasses, ingressclasses, priorityclasses, runtimeclasses, limitranges,
  clusterresourcequotas     learned objects (DefaultStorageClass, PersistentVolumeClaimResize,
                            DefaultIngressClass, Priority, RuntimeClass, LimitRanger,
                            ClusterResourceQuota); each kind listed is complete: one absent is removed

Options:
  --from FILE|-             a listing; repeat for several
  --admission-config FILE   the AdmissionConfiguration (default: ADMISSION_CONFIG or config/admission.yaml)
  --cluster NAME            a fleet's cluster: its AdmissionConfiguration, ${CLUSTERS_DIR}/NAME.yaml,
                            decides what is loaded, and the records go under its keys
                            (${clusterKeyPrefix('NAME')}...), where \`npm start\` serving the fleet reads them
  --forget                  with --cluster, for a removed cluster: delete every record under its
                            keys, and only those (other clusters' and a single cluster's stay).
                            Refused while ${CLUSTERS_DIR}/NAME.yaml exists: delete the file first.
                            A Scan of the whole table finds them (it reads every item once)
  --dry-run                 with --forget: count the records, delete nothing

Environment (as the server):
  DYNAMODB_ENDPOINT   the store's endpoint; for the local server, the one \`npm start\` prints
                      ("store: DynamoDB Local at ..."), while it runs. Unset: the AWS service, in
                      AWS_REGION (or the profile's region), with the SDK's credentials (AWS_PROFILE...)
  STATE_TABLE         the table (default serverless-admission-state, the local server's); a deployed
                      stage's is serverless-admission-STAGE-state (npm run -s outputs prints it):
                      STATE_TABLE=serverless-admission-prod-state AWS_REGION=eu-west-1 npm run sync -- ...

Exit status: 0 loaded (forgotten), 1 a listing or the store failed, 2 usage error.
`;

export interface SyncIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Tests: a client for the store instead of one from DYNAMODB_ENDPOINT. */
  readonly client?: DynamoDb;
  readonly now?: () => number;
  /** The directory relative paths (files, .local/) resolve against; the process's by default. */
  readonly cwd?: string;
  /** `--from -`: the listing on standard input (tests give it here). */
  readonly stdin?: () => Promise<string>;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function usageError(io: SyncIo, message: string): number {
  io.stderr(`sync: ${message}\n\n${USAGE}`);
  return 2;
}

export async function syncCommand(argv: string[], io: SyncIo): Promise<number> {
  let values: {
    from?: string[];
    help?: boolean;
    'admission-config'?: string;
    cluster?: string;
    forget?: boolean;
    'dry-run'?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        from: { type: 'string', multiple: true },
        'admission-config': { type: 'string' },
        cluster: { type: 'string' },
        forget: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return usageError(io, (error as Error).message);
  }
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (positionals.length > 0)
    return usageError(io, `unexpected argument ${JSON.stringify(positionals[0])}: name each file with --from`);
  const files = values.from ?? [];
  if (values['dry-run'] && !values.forget) return usageError(io, '--dry-run is for --forget');
  if (values.forget) {
    if (values.cluster === undefined) return usageError(io, '--forget needs --cluster NAME: the cluster to forget');
    if (files.length > 0 || values['admission-config'] !== undefined)
      return usageError(io, "--forget deletes a cluster's records: drop --from and --admission-config");
  } else if (files.length === 0) return usageError(io, 'no --from FILE given');
  if (values.cluster !== undefined && values['admission-config'] !== undefined)
    return usageError(
      io,
      `--admission-config and --cluster both name a configuration: --cluster ${values.cluster} reads its own`,
    );

  const cwd = io.cwd ?? process.cwd();
  const endpoint = io.env.DYNAMODB_ENDPOINT || undefined;
  if (!io.client && !endpoint && existsSync(resolve(cwd, LOCAL_STORE_DIR))) {
    io.stderr(
      `sync: DYNAMODB_ENDPOINT is not set, and ${LOCAL_STORE_DIR} holds the local server's store, which is served only while \`npm start\` runs.\n` +
        `  Run sync while \`npm start\` runs, with DYNAMODB_ENDPOINT set to the endpoint it prints ("store: DynamoDB Local at http://127.0.0.1:PORT"),\n` +
        `  or set DYNAMODB_ENDPOINT to another store.\n`,
    );
    return 1;
  }
  if (values.forget) return forget(values.cluster as string, values['dry-run'] === true, endpoint, cwd, io);

  try {
    // What the active plugins learn decides what is loaded: the rule every command follows.
    // --cluster NAME: the cluster's own AdmissionConfiguration, and its keys in the table.
    const cluster = values.cluster === undefined ? undefined : fleetCluster(values.cluster, clustersDir(io.cwd));
    if (cluster) io.stderr(`cluster ${cluster.name}: ${cluster.configFile}\n`);
    const env = cluster
      ? clusterEnv(cluster, io.env)
      : {
          ...io.env,
          ...(values['admission-config'] !== undefined && { ADMISSION_CONFIG: values['admission-config'] }),
        };
    const pluginSet = loadPluginSet(registry, env);
    io.stderr(`${selectionLine(pluginSet)}\n`);
    const wanted = seedingPlan(activePlugins(pluginSet).map((p) => p.plugin.metadata)).listingKeys;
    // Every file is read and checked before anything is written; stdin (`-`) is read once.
    const listings: Listing[] = [];
    for (const file of files) {
      let text: string;
      if (file === '-') text = await (io.stdin ?? readStdin)();
      else {
        const path = resolve(cwd, file);
        if (!existsSync(path)) throw new SyncError(`${file}: no such file`);
        text = readFileSync(path, 'utf8');
      }
      const listing = parseListing(text, file === '-' ? 'stdin' : file);
      if (listing.byKind.size === 0) io.stderr(`${listing.file}: an empty list, nothing to load\n`);
      const { kept, skipped } = onlyKinds(listing, wanted);
      for (const [key, count] of skipped)
        io.stderr(`${listing.file}: ${count} ${key.replace(/^\//, '')} skipped: no active plugin learns them\n`);
      listings.push(kept);
    }
    // AWS: the SDK's client, for the operator's credentials (profiles, SSO, roles).
    const client =
      io.client ?? (endpoint ? localDynamoDb(endpoint) : sdkDynamoDb(new DynamoDBClient({ maxAttempts: 3 })));
    const table = stateTableName(io.env);
    const now = io.now ?? Date.now;
    const store = new StateStore(
      cluster ? clusterPartitioned(client, cluster.name) : client,
      table,
      /* dryRun */ false,
      now,
    );
    io.stderr(
      `store: ${endpoint ?? 'AWS DynamoDB'}, table ${table}${cluster ? `, keys ${clusterKeyPrefix(cluster.name)}...` : ''}\n`,
    );
    try {
      await applyListings(listings, store, `sync-${now()}`, (line) => io.stderr(`${line}\n`));
    } finally {
      if (!io.client) client.destroy();
    }
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`sync: invalid configuration: ${error.message}\n`);
      return 1;
    }
    if (error instanceof SyncError || error instanceof StoreUnavailableError) {
      io.stderr(`sync: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/** Where the fleet's cluster files are: config/clusters/ of the directory sync runs in. */
const clustersDir = (cwd: string | undefined): string => (cwd === undefined ? CLUSTERS_DIR : join(cwd, CLUSTERS_DIR));

/**
 * --forget: a removed cluster's records deleted, after its file is gone (while it exists, \`npm
 * start\` serves the cluster, and its requests would write the records again). It scans, which
 * the store's port (io.client) does not: the SDK's client, from DYNAMODB_ENDPOINT or AWS's chain.
 */
async function forget(name: string, dryRun: boolean, endpoint: string | undefined, cwd: string, io: SyncIo) {
  try {
    checkClusterName(name, '--cluster');
  } catch (error) {
    return usageError(io, (error as Error).message);
  }
  const file = join(clustersDir(io.cwd), `${name}.yaml`);
  if (existsSync(resolve(cwd, file))) {
    io.stderr(
      `sync: cluster ${name} still has its file ${file}: delete it and restart what serves the fleet first, then forget its records\n`,
    );
    return 1;
  }
  const client = new DynamoDBClient(endpoint ? localClientOptions(endpoint) : { maxAttempts: 3 });
  const table = stateTableName(io.env);
  io.stderr(
    `${dryRun ? 'counting' : 'deleting'} the records of cluster ${name} (keys ${clusterKeyPrefix(name)}...) in ${endpoint ?? 'AWS DynamoDB'}, table ${table}\n`,
  );
  try {
    const { records } = await forgetCluster(client, {
      table,
      cluster: name,
      dryRun,
      progress: (line) => io.stderr(`${line}\n`),
    });
    io.stdout(
      `${dryRun ? `cluster ${name} has` : `cluster ${name}: deleted`} ${records} record${records === 1 ? '' : 's'}${dryRun ? ' (dry run: nothing deleted)' : ''}\n`,
    );
    // Its key (url-secret) and client certificate (mTLS) are files, not state: named, not deleted.
    const local = resolve(cwd, '.local/clusters', name);
    if (!dryRun && existsSync(local))
      io.stderr(
        `note: .local/clusters/${name}/ still holds the cluster's key or client certificate: delete it when done\n`,
      );
    return 0;
  } catch (error) {
    io.stderr(`sync: ${(error as Error).name}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    client.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const code = await syncCommand(process.argv.slice(2), {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
  });
  process.exitCode = code;
}
