// `npm run sync -- --from FILE [--from FILE...]`: loads `kubectl get ... -o json` listings into
// the store the webhooks use (DYNAMODB_ENDPOINT / STATE_TABLE, as the server), so objects created
// before installation are known. Exit 0 when loaded, 1 on a failure, 2 on a usage error.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localDynamoDb, stateTableName } from '../../lib/state/client.js';
import type { DynamoDb } from '../../lib/state/dynamodb.js';
import { sdkDynamoDb } from '../../lib/state/dynamodb-sdk.js';
import { StoreUnavailableError } from '../../lib/admission/ports.js';
import { StateStore } from '../../lib/state/store.js';
import type { Listing } from './sync.js';
import { applyListings, parseListing, SyncError } from './sync.js';

/** Where `npm start` keeps its embedded store's data. */
const LOCAL_STORE_DIR = '.local/dynamodb';

export const USAGE = `Usage: npm run sync -- --from FILE [--from FILE...]

Loads objects that existed before the webhooks were installed into the store they use, from the
output of kubectl (each FILE one listing; the kind is read from the items):

  kubectl get namespaces -o json > namespaces.json          learned namespaces (a complete listing:
                                                            a namespace absent from it does not exist)
  kubectl get resourcequotas -A -o json > quotas.json       learned ResourceQuotas
  kubectl get pods -A -o json > pods.json                   each pod's node (NodeRestriction) and a
                                                            recount of the quota ledger (also services,
                                                            configmaps, secrets, persistentvolumeclaims,
                                                            replicationcontrollers, deployments,
                                                            replicasets, statefulsets, daemonsets,
                                                            jobs, cronjobs)
  kubectl get nodes -o json > nodes.json                    each Node's uid (NodeRestriction) and
                                                            labels (OriginPodNodeEnvironment);
                                                            complete: a Node absent is removed
  kubectl get storageclasses,ingressclasses,priorityclasses,runtimeclasses -o json > classes.json
                                                            learned classes (DefaultStorageClass,
                                                            PersistentVolumeClaimResize,
                                                            DefaultIngressClass, Priority,
                                                            RuntimeClass); each kind listed is
                                                            complete: a class absent is removed
  kubectl get clusterresourcequotas -o json > crqs.json     learned ClusterResourceQuotas (OpenShift;
                                                            complete, as the classes); the counted
                                                            kinds' listings also recount each one's
                                                            usage in the namespaces it selects
  kubectl get limitranges -A -o json > limitranges.json     learned LimitRanges (LimitRanger); complete
                                                            too (-A: every namespace's), so a
                                                            LimitRange absent is removed

  npm run sync -- --from namespaces.json --from quotas.json --from pods.json --from nodes.json

Environment (as the server):
  DYNAMODB_ENDPOINT   the store's endpoint; for the local server, the one \`npm start\` prints
                      ("store: DynamoDB Local at ..."), while it runs. Unset: the AWS service, in
                      AWS_REGION (or the profile's region), with the SDK's credentials (AWS_PROFILE...)
  STATE_TABLE         the table (default serverless-admission-state, the local server's); a deployed
                      stage's is serverless-admission-STAGE-state (npm run -s outputs prints it):
                      STATE_TABLE=serverless-admission-prod-state AWS_REGION=eu-west-1 npm run sync -- ...

Exit status: 0 loaded, 1 a listing or the store failed, 2 usage error.
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
}

function usageError(io: SyncIo, message: string): number {
  io.stderr(`sync: ${message}\n\n${USAGE}`);
  return 2;
}

export async function syncCommand(argv: string[], io: SyncIo): Promise<number> {
  let values: { from?: string[]; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { from: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
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
  if (files.length === 0) return usageError(io, 'no --from FILE given');

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

  try {
    // Every file is read and checked before anything is written.
    const listings: Listing[] = files.map((file) => {
      const path = resolve(cwd, file);
      if (!existsSync(path)) throw new SyncError(`${file}: no such file`);
      const listing = parseListing(readFileSync(path, 'utf8'), file);
      if (listing.byKind.size === 0) io.stderr(`${file}: an empty list, nothing to load\n`);
      return listing;
    });
    // AWS: the SDK's client, for the operator's credentials (profiles, SSO, roles).
    const client =
      io.client ?? (endpoint ? localDynamoDb(endpoint) : sdkDynamoDb(new DynamoDBClient({ maxAttempts: 3 })));
    const table = stateTableName(io.env);
    const now = io.now ?? Date.now;
    const store = new StateStore(client, table, /* dryRun */ false, now);
    io.stderr(`store: ${endpoint ?? 'AWS DynamoDB'}, table ${table}\n`);
    try {
      await applyListings(listings, store, `sync-${now()}`, (line) => io.stderr(`${line}\n`));
    } finally {
      if (!io.client) client.destroy();
    }
    return 0;
  } catch (error) {
    if (error instanceof SyncError || error instanceof StoreUnavailableError) {
      io.stderr(`sync: ${error.message}\n`);
      return 1;
    }
    throw error;
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
