// vitest globalSetup: ONE DynamoDB Local (in memory) for the whole run; each test file uses its own
// table. The endpoint reaches tests through provide/inject. The run lasts minutes: the JVM starts
// quick (client compiler only), which costs it about half the CPU, starting and serving.
import type { TestProject } from 'vitest/node';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const store = await startEmbeddedDynamoDb({ quickStart: true });
  project.provide('dynamodbEndpoint', store.endpoint);
  return () => store.stop();
}
