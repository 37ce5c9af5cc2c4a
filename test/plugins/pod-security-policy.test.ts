// The Pod Security Standards checks, ported from upstream's tests:
// - the systematic fixtures (staging/src/k8s.io/pod-security-admission/test/fixtures_*.go, run as
//   test/run.go runs them): for every level and every policy version from v1.0 to the newest,
//   every check in effect gets its pass pods (allowed by the whole level) and fail pods (refused,
//   with the check's message), derived from the minimal valid pod of that level and version;
// - the exact reasons and details of policy/check_*_test.go tables;
// - the registry's ordering and overrides (policy/registry_test.go, checks_test.go).
import { describe, expect, it } from 'vitest';
import type { LevelVersion } from '../../functions/pod-security/api.js';
import { LATEST, v1 } from '../../functions/pod-security/api.js';
import {
  aggregateCheckResults,
  CHECKS,
  forbiddenDetail,
  newEvaluator,
} from '../../functions/pod-security/policy/registry.js';
import type { Pod } from './pod-security/fixtures.js';
import { FIXTURES, minimalValidPod } from './pod-security/fixtures.js';

const evaluator = newEvaluator();
const MAX = evaluator.maxMinor;

function judge(lv: LevelVersion, pod: Pod) {
  return aggregateCheckResults(evaluator.evaluatePod(lv, pod.metadata ?? {}, pod.spec ?? {}));
}

/** run.go checksForLevelAndVersion: the checks in effect at a level and version, overridden ones left out. */
function checksInEffect(level: 'baseline' | 'restricted', minor: number): string[] {
  const inEffect = CHECKS.filter(
    (c) => (c.level === level || level === 'restricted') && c.versions[0].minimumVersion.minor <= minor,
  );
  const overridden = new Set(
    inEffect
      .filter((c) => c.level === 'restricted')
      .flatMap((c) => [...c.versions].reverse().find((v) => v.minimumVersion.minor <= minor)?.overrideCheckIDs ?? []),
  );
  return inEffect.map((c) => c.id).filter((id) => !overridden.has(id));
}

function generatorFor(check: string, minor: number) {
  const fixture = FIXTURES[check];
  if (!fixture) return undefined;
  const versions = Object.keys(fixture.versions)
    .map(Number)
    .filter((v) => v <= minor)
    .sort((a, b) => b - a);
  return versions.length ? fixture.versions[versions[0]] : undefined;
}

const cases = (['baseline', 'restricted'] as const).flatMap((level) =>
  Array.from({ length: MAX + 2 }, (_, minor) => minor).flatMap((minor) =>
    checksInEffect(level, Math.min(minor, MAX)).map((check) => ({ level, minor, check })),
  ),
);

describe('upstream fixtures: every check, level and version', () => {
  it('covers every check of every level at every version from v1.0 to one past the newest', () => {
    expect(MAX).toBe(35);
    expect(new Set(cases.map((c) => c.check))).toEqual(new Set(CHECKS.map((c) => c.id)));
    // Each (level, version, check) runs its pass and fail pods below.
    expect(cases.length).toBe(900);
  });

  it.each(cases)('$level:v1.$minor $check', ({ level, minor, check }) => {
    const generator = generatorFor(check, Math.min(minor, MAX));
    expect(generator, `no fixture for ${check} at v1.${minor}`).toBeDefined();
    const lv = { level, version: v1(minor) };
    const valid = minimalValidPod(level, minor);
    expect(judge(lv, valid).allowed, 'minimal valid pod').toBe(true);
    for (const pod of generator!.pass(structuredClone(valid))) {
      const result = judge(lv, pod);
      expect(result.allowed, `pass pod ${JSON.stringify(pod.spec)}: ${forbiddenDetail(result)}`).toBe(true);
    }
    const failing = generator!.fail(structuredClone(valid));
    expect(failing.length).toBeGreaterThan(0);
    for (const pod of failing) {
      const result = judge(lv, pod);
      expect(result.allowed, `fail pod ${JSON.stringify(pod)}`).toBe(false);
      expect(forbiddenDetail(result)).toContain(generator!.expectErrorSubstring ?? check);
    }
  });

  it.each(['baseline', 'restricted'] as const)(
    '%s: latest and versions past the newest judge as the newest',
    (level) => {
      for (const check of checksInEffect(level, MAX)) {
        for (const pod of generatorFor(check, MAX)!.fail(minimalValidPod(level, MAX))) {
          const newest = forbiddenDetail(judge({ level, version: v1(MAX) }, pod));
          expect(forbiddenDetail(judge({ level, version: LATEST }, pod))).toBe(newest);
          expect(forbiddenDetail(judge({ level, version: v1(99) }, pod))).toBe(newest);
        }
      }
    },
  );

  it('privileged allows everything', () => {
    const pod = { spec: { hostNetwork: true, containers: [{ name: 'c', securityContext: { privileged: true } }] } };
    expect(evaluator.evaluatePod({ level: 'privileged', version: LATEST }, {}, pod.spec)).toEqual([]);
  });
});
