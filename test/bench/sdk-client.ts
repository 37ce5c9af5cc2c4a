// The bench's "AWS SDK client" variant of a stateful function: lib/state/client.ts as it was
// before the functions signed their own calls, the SDK's DynamoDBClient behind the same port.
// cold-start.ts builds it in place of client.ts, so both variants are measured in one run.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDb } from '../../lib/state/dynamodb.js';
import { localDynamoDbClient, sdkDynamoDb } from '../../lib/state/dynamodb-sdk.js';

export { DEFAULT_STATE_TABLE, localDynamoDb, stateTableName } from '../../lib/state/client.js';

let shared: DynamoDb | undefined;

export function sharedDynamoDb(env: NodeJS.ProcessEnv = process.env): DynamoDb {
  shared ??= sdkDynamoDb(
    env.DYNAMODB_ENDPOINT ? localDynamoDbClient(env.DYNAMODB_ENDPOINT) : new DynamoDBClient({ maxAttempts: 3 }),
  );
  return shared;
}
