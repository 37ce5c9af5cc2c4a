// The end-to-end files that take longest start first, so that they run beside the others rather
// than after them: keep-alive mostly waits out Go's 90 s idle window, and PodSecurity's native
// proof sends every fixture case through the apiserver twice. The rest keep vitest's own order.
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

const LONGEST_FIRST = ['keep-alive.e2e.test.ts', 'pod-security-native.e2e.test.ts'];

function rank(spec: TestSpecification): number {
  const at = LONGEST_FIRST.findIndex((name) => spec.moduleId.endsWith(`/${name}`));
  return at < 0 ? LONGEST_FIRST.length : at;
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: equal ranks keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
