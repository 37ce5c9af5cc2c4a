import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The end-to-end suites start real servers (HTTPS, DynamoDB Local); give them room on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One DynamoDB Local for the whole run (each stateful test file uses its own table).
    globalSetup: ['test/support/dynamodb-global-setup.ts'],
    env: { LOG_LEVEL: 'silent' },
  },
});
