// The deployed cluster reader (docs/seed-state.md): invoked every minute by its schedule, it reads
// the cluster for the plugins ADMISSION_CONFIG activates, for about 50 s, under a lease.
import type { Context } from 'aws-lambda';
import { READER_WATCH_MS, scheduledRun } from '../../lib/cluster/scheduled.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import { deployedCredentials } from '../../lib/kube/deployed-credentials.js';
import { sharedDynamoDb, stateTableName } from '../../lib/state/index.js';
import { plugins as registry } from '../../functions/index.js';

// At cold start: bad configuration fails here, naming the variable.
const credentials = deployedCredentials();
const active = activePlugins(loadPluginSet(registry)).map(({ plugin }) => plugin.metadata);
/** The run ends this long before the function's timeout: room to checkpoint and release the lease. */
const RESERVE_MS = 8_000;

export async function handler(_event: unknown, context: Context) {
  if (!credentials) return { ran: false, reason: 'CLUSTER_READER is none' };
  return scheduledRun({
    credentials,
    plugins: active,
    dynamoDb: sharedDynamoDb(),
    tableName: stateTableName(),
    runId: context.awsRequestId,
    watchMs: Math.min(READER_WATCH_MS, context.getRemainingTimeInMillis() - RESERVE_MS),
    emit: (line) => process.stdout.write(`${line}\n`),
    log: (line) => process.stderr.write(`${line}\n`),
  });
}
