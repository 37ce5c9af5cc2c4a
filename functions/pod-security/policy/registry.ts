// Which checks judge a pod at a level and version, in which order, and how their results read as
// one message. Upstream: policy/registry.go (checkRegistry, populate, inflateVersions) and
// policy/checks.go (AggregateCheckResults, ForbiddenDetail).
//
// Every check applies from its MinimumVersion until its next revision; a version newer than every
// revision (and `latest`) uses the newest. The restricted level runs the baseline checks too,
// except those a restricted revision overrides. Results come in the order of the checks' IDs:
// baseline IDs sorted, then restricted IDs sorted, which is the order of upstream's messages.
import type { LevelVersion } from '../api.js';
import { byBytes } from './types.js';
import type { Check, CheckPod, CheckResult, PodMetadataLike, PodSpecLike, VersionedCheck } from './types.js';
import { hostChecks } from './host.js';
import { privilegeChecks } from './privileges.js';
import { profileChecks } from './profiles.js';
import { sysctlChecks } from './sysctls.js';
import { userChecks } from './users.js';
import { volumeChecks } from './volumes.js';

export const CHECKS: readonly Check[] = [
  ...hostChecks,
  ...privilegeChecks,
  ...profileChecks,
  ...sysctlChecks,
  ...userChecks,
  ...volumeChecks,
];

export interface Evaluator {
  /** The newest policy version any check knows; `latest` and newer versions mean this one. */
  readonly maxMinor: number;
  evaluatePod(lv: LevelVersion, meta: PodMetadataLike, spec: PodSpecLike): CheckResult[];
}

/** The revision of a check in effect at a minor version, or undefined before its first. */
function revisionAt(check: Check, minor: number): VersionedCheck | undefined {
  let found: VersionedCheck | undefined;
  for (const revision of check.versions) if (revision.minimumVersion.minor <= minor) found = revision;
  return found;
}

export function newEvaluator(checks: readonly Check[] = CHECKS): Evaluator {
  const ids = new Set<string>();
  for (const check of checks) {
    if (ids.has(check.id)) throw new Error(`multiple checks registered for ID ${check.id}`);
    ids.add(check.id);
  }
  const maxMinor = Math.max(...checks.map((c) => c.versions[c.versions.length - 1].minimumVersion.minor));
  const ordered = [
    ...checks.filter((c) => c.level === 'baseline').sort((a, b) => byBytes(a.id, b.id)),
    ...checks.filter((c) => c.level === 'restricted').sort((a, b) => byBytes(a.id, b.id)),
  ];
  const baseline: CheckPod[][] = [];
  const restricted: CheckPod[][] = [];
  for (let minor = 0; minor <= maxMinor; minor++) {
    const inEffect = ordered.flatMap((check) => {
      const revision = revisionAt(check, minor);
      return revision === undefined ? [] : [{ check, revision }];
    });
    const overridden = new Set(
      inEffect.filter((e) => e.check.level === 'restricted').flatMap((e) => e.revision.overrideCheckIDs ?? []),
    );
    baseline[minor] = inEffect.filter((e) => e.check.level === 'baseline').map((e) => e.revision.checkPod);
    restricted[minor] = inEffect
      .filter((e) => e.check.level === 'restricted' || !overridden.has(e.check.id))
      .map((e) => e.revision.checkPod);
  }
  return {
    maxMinor,
    evaluatePod(lv, meta, spec) {
      if (lv.level === 'privileged') return [];
      const minor = lv.version.latest ? maxMinor : Math.min(lv.version.minor, maxMinor);
      const fns = lv.level === 'baseline' ? baseline[minor] : restricted[minor];
      return fns.map((check) => check(meta, spec));
    },
  };
}

export interface AggregateResult {
  readonly allowed: boolean;
  readonly forbiddenReasons: readonly string[];
  readonly forbiddenDetails: readonly string[];
}

export function aggregateCheckResults(results: readonly CheckResult[]): AggregateResult {
  const forbidden = results.filter((r) => !r.allowed);
  return {
    allowed: forbidden.length === 0,
    forbiddenReasons: forbidden.map((r) => r.forbiddenReason || 'unknown forbidden reason'),
    forbiddenDetails: forbidden.map((r) => r.forbiddenDetail ?? ''),
  };
}

/** `host ports (8080, 9090), privileged containers, ...`: each reason with its detail in parentheses. */
export function forbiddenDetail(result: AggregateResult): string {
  return result.forbiddenReasons
    .map((reason, i) => (result.forbiddenDetails[i] ? `${reason} (${result.forbiddenDetails[i]})` : reason))
    .join(', ');
}

/** `host ports, privileged containers`: the reasons alone. */
export function forbiddenReason(result: AggregateResult): string {
  return result.forbiddenReasons.join(', ');
}
