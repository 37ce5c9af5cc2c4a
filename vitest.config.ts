import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The end-to-end suite runs apart, through a real apiserver: npm run test:e2e.
    exclude: ['test/e2e/**', 'node_modules/**'],
    // No assertion measures the machine: these limits only turn a hang into a failure, and are
    // generous enough for a 2-core machine shared with other work (load average 15). The suites
    // that restart DynamoDB Local or `npm start` set their own, longer ones.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    // At least two files at a time, even on 2 cores (vitest's default would be one): much of the
    // run waits on other processes (JVM starts, `npm start`, `sls package`), not on this CPU.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Run-wide: the temporary root and the test PKI (run-setup), then ONE DynamoDB Local for the
    // whole run, each stateful test file on its own table. Teardowns run in reverse order.
    globalSetup: ['test/support/run-setup.ts', 'test/support/dynamodb-global-setup.ts'],
    env: { LOG_LEVEL: 'silent' },
  },
});
