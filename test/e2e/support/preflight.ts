// vitest globalSetup of the end-to-end suite, and `npm run test:e2e`'s first step: without the
// control-plane binaries the suite fails at once with one line saying what it needs; it never
// passes by running nothing.
import { assetsDir } from './control-plane.js';

export default function preflight(): void {
  assetsDir();
}

// Run directly (`tsx test/e2e/support/preflight.ts`): one line and exit 1.
if (process.argv[1] && import.meta.filename === process.argv[1]) {
  try {
    assetsDir();
  } catch (error) {
    process.stderr.write(`test:e2e: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
