// The one table of lib/state. Every record has a string partition key `pk` and sort key `sk`;
// ephemeral records carry `expiresAt` (epoch seconds), the table's TTL attribute. DynamoDB deletes
// expired items lazily (up to days later on AWS), so every reader also ignores them itself.
//
//   pk                         sk                            what
//   ns#<name>                  namespace                     a learned namespace (or a tombstone)
//   ns#                        listing                       a complete namespace listing was loaded (sync)
//   pod#<namespace>/<name>     placement                     a learned pod's uid and node (or a tombstone)
//   node#<name>                node                          a learned Node's uid (or a tombstone)
//   rq#<namespace>#queue       queue                         quota reservations in arrival order (quota-ledger.ts)
//   rq#<namespace>             decided#<request uid>          a queued reservation that wrote no charge of its own
//   rq#<namespace>             quota#<name>                  a learned ResourceQuota (spec.hard, scopes)
//   rq#<namespace>             charge#<resource>#<name>      what one object consumes; expiresAt while reserved
//   erl#<bucket key>           bucket                        an EventRateLimit token bucket; expiresAt = when full again
//   req#<plugin>#<uid>         done                          idempotency record of one request; expiresAt
//   cache#<plugin>#<key>       decision                      a cached backend decision; expiresAt = its TTL
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';

export const TTL_ATTRIBUTE = 'expiresAt';

export async function createStateTable(client: DynamoDBClient, tableName: string): Promise<void> {
  let exists = true;
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    exists = false;
  }
  if (!exists) {
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
        }),
      );
    } catch (error) {
      // Another process created it first.
      if ((error as Error).name !== 'ResourceInUseException') throw error;
    }
    await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  }
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  if (status !== 'ENABLED' && status !== 'ENABLING') {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  }
}
