// `npm run sync -- --cluster NAME --forget`: a removed cluster's state deleted from the one table.
// Every record a fleet's cluster writes lives under partition keys prefixed `cluster#<name>#`
// (lib/state/cluster-partition.ts), spread over as many partitions as it has namespaces, kinds and
// buckets, so no Query names them all: a Scan filtered on the prefix finds them, page by page, and
// BatchWriteItem deletes each page's keys, 25 at a time, retrying what the service leaves
// unprocessed. The functions never scan, so Scan lives here with the SDK's client, not in the
// store's port. Records of other clusters, and of a deployment without a fleet, never match the
// prefix: cluster names are DNS labels, so no cluster's prefix begins another's.
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { clusterKeyPrefix } from '../../lib/state/cluster-partition.js';

type Key = Record<string, AttributeValue>;

/** DynamoDB's limit of requests per BatchWriteItem. */
const BATCH = 25;
/** Attempts at one batch's unprocessed deletes before the command fails (backing off 50 ms, doubling). */
const ATTEMPTS = 8;

export interface ForgetOptions {
  readonly table: string;
  readonly cluster: string;
  /** Count only: nothing is deleted. */
  readonly dryRun: boolean;
  readonly progress: (line: string) => void;
  /** Tests: the wait between attempts at unprocessed deletes. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface ForgetResult {
  /** Records under the cluster's prefix that were found (and, unless a dry run, deleted). */
  readonly records: number;
  /** Items the Scan read, the cluster's and everyone else's: what the Scan cost in reads. */
  readonly scanned: number;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Deletes (or, in a dry run, counts) every record of `cluster`. */
export async function forgetCluster(client: DynamoDBClient, options: ForgetOptions): Promise<ForgetResult> {
  const { table, cluster, dryRun, progress } = options;
  const sleep = options.sleep ?? wait;
  let records = 0;
  let scanned = 0;
  let startKey: Key | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        // The key only: a page of keys is all a delete needs, and the filter costs no extra read.
        ProjectionExpression: '#pk, #sk',
        FilterExpression: 'begins_with(#pk, :prefix)',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
        ExpressionAttributeValues: { ':prefix': { S: clusterKeyPrefix(cluster) } },
        ConsistentRead: true,
        ...(startKey && { ExclusiveStartKey: startKey }),
      }),
    );
    const keys = (page.Items ?? []) as Key[];
    scanned += page.ScannedCount ?? 0;
    if (!dryRun)
      for (let i = 0; i < keys.length; i += BATCH) await deleteBatch(client, table, keys.slice(i, i + BATCH), sleep);
    records += keys.length;
    startKey = page.LastEvaluatedKey;
    if (keys.length > 0 || startKey === undefined)
      progress(`${dryRun ? 'found' : 'deleted'} ${records} record${records === 1 ? '' : 's'} (${scanned} scanned)`);
  } while (startKey !== undefined);
  return { records, scanned };
}

/** One BatchWriteItem of deletes, with what the service leaves unprocessed sent again, backing off. */
async function deleteBatch(
  client: DynamoDBClient,
  table: string,
  keys: readonly Key[],
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  let requests = keys.map((Key) => ({ DeleteRequest: { Key } }));
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt === ATTEMPTS)
      throw new Error(
        `${requests.length} delete${requests.length === 1 ? '' : 's'} still unprocessed after ${ATTEMPTS} attempts: run --forget again`,
      );
    if (attempt > 0) await sleep(50 * 2 ** (attempt - 1));
    const answer = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
    requests = (answer.UnprocessedItems?.[table] ?? []) as typeof requests;
  }
}
