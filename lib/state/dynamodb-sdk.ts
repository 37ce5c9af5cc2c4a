// The AWS SDK's side of lib/state, which no function bundles (functions use dynamodb-http.ts):
// the DynamoDB port over the SDK's client, for the CLIs run on an operator's machine, whose
// credentials come from the SDK's chain (profiles, SSO, roles); and the table's creation (the local
// server, tests).
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { localClientOptions } from './client.js';
import { TTL_ATTRIBUTE } from './table.js';
import type { DynamoDb, DynamoDbOperation, DynamoDbOperations } from './dynamodb.js';

const COMMANDS = {
  GetItem: GetItemCommand,
  Query: QueryCommand,
  PutItem: PutItemCommand,
  UpdateItem: UpdateItemCommand,
  DeleteItem: DeleteItemCommand,
  BatchWriteItem: BatchWriteItemCommand,
  TransactWriteItems: TransactWriteItemsCommand,
} as const;

export function sdkDynamoDb(client: DynamoDBClient): DynamoDb {
  return {
    async call<Op extends DynamoDbOperation>(
      operation: Op,
      input: DynamoDbOperations[Op]['input'],
    ): Promise<DynamoDbOperations[Op]['output']> {
      const Command = COMMANDS[operation] as new (input: unknown) => Parameters<DynamoDBClient['send']>[0];
      const { $metadata: _, ...output } = await client.send(new Command(input));
      return output as DynamoDbOperations[Op]['output'];
    },
    destroy: () => client.destroy(),
  };
}

/** The SDK's client for a local endpoint (DynamoDB Local): for the table's creation (below). */
export function localDynamoDbClient(endpoint: string, options: { maxAttempts?: number } = {}): DynamoDBClient {
  return new DynamoDBClient(localClientOptions(endpoint, options));
}

/** The state table (table.ts's layout), created if missing, with its TTL attribute enabled. */
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
