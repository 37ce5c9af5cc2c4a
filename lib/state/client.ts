// The one DynamoDB client of a Lambda instance. Created at first use and kept at module scope, so
// its connections are reused across invocations (Lambda keeps the module between requests). It is
// the small signed-HTTP client (dynamodb-http.ts): no function bundles the AWS SDK.
import type { DynamoDb } from './dynamodb.js';
import { HttpDynamoDb, regionalEndpoint } from './dynamodb-http.js';

export const DEFAULT_STATE_TABLE = 'serverless-admission-state';

export function stateTableName(env: NodeJS.ProcessEnv = process.env): string {
  return env.STATE_TABLE || DEFAULT_STATE_TABLE;
}

/**
 * What a client of a local endpoint (DynamoDB Local, loopback only) is configured with:
 * placeholder credentials and region, since DynamoDB Local accepts any; 3 attempts per call.
 */
export function localClientOptions(endpoint: string, options: { maxAttempts?: number } = {}) {
  return {
    endpoint,
    region: process.env.AWS_REGION || 'local',
    credentials: {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID || 'local',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || 'local',
    },
    maxAttempts: options.maxAttempts ?? 3,
  };
}

/** The functions' client for a local endpoint (DynamoDB Local). */
export function localDynamoDb(endpoint: string, options: { maxAttempts?: number } = {}): DynamoDb {
  return new HttpDynamoDb(localClientOptions(endpoint, options));
}

/**
 * The AWS service, with the region and the credentials the Lambda runtime puts in the
 * environment (the function role's). Without them every call fails, naming what is missing, and
 * the store answers 5xx (the apiserver's failurePolicy decides). Outside Lambda, the CLIs use the
 * SDK's chain instead.
 */
export function awsDynamoDb(env: NodeJS.ProcessEnv = process.env): DynamoDb {
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN } = env;
  if (!region) return unavailable('MissingRegion', 'no AWS region in the environment (AWS_REGION): Lambda sets it');
  if (!accessKeyId || !secretAccessKey) {
    return unavailable(
      'MissingCredentials',
      'no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): Lambda sets them from the function role',
    );
  }
  return new HttpDynamoDb({
    endpoint: regionalEndpoint(region),
    region,
    credentials: { accessKeyId, secretAccessKey, ...(AWS_SESSION_TOKEN && { sessionToken: AWS_SESSION_TOKEN }) },
  });
}

/** A client that sends nothing: every call fails with `name` and `message`. */
function unavailable(name: string, message: string): DynamoDb {
  return {
    call: () => Promise.reject(Object.assign(new Error(message), { name })),
    destroy: () => undefined,
  };
}

let shared: { endpoint: string | undefined; client: DynamoDb } | undefined;

/**
 * DYNAMODB_ENDPOINT locally and in tests; the real service (region and credentials from the Lambda
 * environment) when deployed. One client per process: a changed endpoint replaces it (tests).
 */
export function sharedDynamoDb(env: NodeJS.ProcessEnv = process.env): DynamoDb {
  const endpoint = env.DYNAMODB_ENDPOINT || undefined;
  if (shared === undefined || shared.endpoint !== endpoint) {
    shared?.client.destroy();
    shared = { endpoint, client: endpoint ? localDynamoDb(endpoint) : awsDynamoDb(env) };
  }
  return shared.client;
}
