// The one DynamoDB client of a Lambda instance. Created at first use and kept at module scope, so
// its connections are reused across invocations (Lambda keeps the module between requests).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const DEFAULT_STATE_TABLE = 'serverless-admission-state';

export function stateTableName(env: NodeJS.ProcessEnv = process.env): string {
  return env.STATE_TABLE || DEFAULT_STATE_TABLE;
}

/**
 * A client for a local endpoint (DynamoDB Local): loopback only, placeholder credentials and
 * region, since DynamoDB Local accepts any.
 */
export function localDynamoDbClient(endpoint: string, options: { maxAttempts?: number } = {}): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION || 'local',
    credentials: {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID || 'local',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || 'local',
    },
    maxAttempts: options.maxAttempts ?? 3,
  });
}

let shared: { endpoint: string | undefined; client: DynamoDBClient } | undefined;

/**
 * DYNAMODB_ENDPOINT locally and in tests; the real service (region and credentials from the Lambda
 * environment) when deployed. One client per process: a changed endpoint replaces it (tests).
 */
export function sharedDynamoDbClient(env: NodeJS.ProcessEnv = process.env): DynamoDBClient {
  const endpoint = env.DYNAMODB_ENDPOINT || undefined;
  if (shared === undefined || shared.endpoint !== endpoint) {
    shared?.client.destroy();
    shared = { endpoint, client: endpoint ? localDynamoDbClient(endpoint) : new DynamoDBClient({ maxAttempts: 3 }) };
  }
  return shared.client;
}
