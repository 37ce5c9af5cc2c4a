import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/e2e/support/sequencer.js';

// The end-to-end suite (`npm run test:e2e`): every test file starts its own control plane from
// KUBEBUILDER_ASSETS (test/e2e/support/control-plane.ts), and most start `npm start` beside it. No
// assertion measures the machine; the limits turn a hang into a failure on a busy 2-core machine.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    // Two files at a time: each runs an apiserver, etcd, a controller-manager and a webhook server,
    // and most of a file's time is spent waiting on them.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirstSequencer },
    globalSetup: [
      'test/support/run-setup.ts',
      'test/support/dynamodb-global-setup.ts',
      'test/e2e/support/preflight.ts',
    ],
    env: { LOG_LEVEL: 'silent' },
  },
});
