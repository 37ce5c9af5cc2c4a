// The DynamoDB port of lib/state: the seven operations the store sends, in the service's own
// request and response shapes (the SDK's types, imported as types only). Two adapters implement
// it: dynamodb-http.ts, the small signed-HTTP client every function bundles, and dynamodb-sdk.ts,
// the AWS SDK's client, for the CLIs (sync), whose operators' credentials need the SDK's chain.
import type {
  BatchWriteItemInput,
  BatchWriteItemOutput,
  DeleteItemInput,
  DeleteItemOutput,
  GetItemInput,
  GetItemOutput,
  PutItemInput,
  PutItemOutput,
  QueryInput,
  QueryOutput,
  TransactWriteItemsInput,
  TransactWriteItemsOutput,
  UpdateItemInput,
  UpdateItemOutput,
} from '@aws-sdk/client-dynamodb';

export interface DynamoDbOperations {
  GetItem: { input: GetItemInput; output: GetItemOutput };
  Query: { input: QueryInput; output: QueryOutput };
  PutItem: { input: PutItemInput; output: PutItemOutput };
  UpdateItem: { input: UpdateItemInput; output: UpdateItemOutput };
  DeleteItem: { input: DeleteItemInput; output: DeleteItemOutput };
  BatchWriteItem: { input: BatchWriteItemInput; output: BatchWriteItemOutput };
  TransactWriteItems: { input: TransactWriteItemsInput; output: TransactWriteItemsOutput };
}

export type DynamoDbOperation = keyof DynamoDbOperations;

export const WRITE_OPERATIONS: ReadonlySet<DynamoDbOperation> = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);

/**
 * One operation sent and its answer. A refusal by the service rejects with an Error whose `name`
 * is the service's error code (ConditionalCheckFailedException...) and which carries the error's
 * fields (`Item`, `CancellationReasons`), as the SDK's exceptions do: store.ts reads only those.
 */
export interface DynamoDb {
  call<Op extends DynamoDbOperation>(
    operation: Op,
    input: DynamoDbOperations[Op]['input'],
  ): Promise<DynamoDbOperations[Op]['output']>;
  /** Closes the client's connections. */
  destroy(): void;
}
