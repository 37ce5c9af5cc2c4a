// Levels, policy versions, and how a namespace's labels and the configured defaults resolve to the
// policy a request is judged by. Upstream: staging/src/k8s.io/pod-security-admission/api.
import type { FieldError } from '../../lib/admission/field.js';
import { FieldPath, invalid } from '../../lib/admission/field.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: `latest`, or v1.<minor>. */
export interface NumberedVersion {
  readonly latest: false;
  readonly minor: number;
}
export type Version = { readonly latest: true } | NumberedVersion;
export const LATEST: Version = { latest: true };
export const v1 = (minor: number): NumberedVersion => ({ latest: false, minor });

export interface LevelVersion {
  readonly level: Level;
  readonly version: Version;
}

export interface Policy {
  readonly enforce: LevelVersion;
  readonly audit: LevelVersion;
  readonly warn: LevelVersion;
}

export const MODES = ['enforce', 'audit', 'warn'] as const;
export type Mode = (typeof MODES)[number];

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const levelLabel = (mode: Mode) => `${LABEL_PREFIX}${mode}`;
export const versionLabel = (mode: Mode) => `${LABEL_PREFIX}${mode}-version`;

export function versionString(version: Version): string {
  return version.latest ? 'latest' : `v1.${version.minor}`;
}

/** `restricted:latest`, `baseline:v1.24`: how upstream prints a level and version in its messages. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function sameVersion(a: Version, b: Version): boolean {
  return a.latest ? b.latest : !b.latest && a.minor === b.minor;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && sameVersion(a.version, b.version);
}

/** Version.Older: latest is newer than every numbered version. */
export function older(a: Version, b: Version): boolean {
  if (a.latest) return false;
  if (b.latest) return true;
  return a.minor < b.minor;
}

export class ParseError extends Error {}

/** api.ParseLevel: the error text is upstream's. */
export function parseLevel(value: string): Level {
  if ((LEVELS as readonly string[]).includes(value)) return value as Level;
  throw new ParseError(`must be one of ${LEVELS.join(', ')}`);
}

const VERSION = /^v1\.([0-9]|[1-9][0-9]*)$/;

/** api.ParseVersion: `latest` or `v1.<minor>` without leading zeros. */
export function parseVersion(value: string): Version {
  if (value === 'latest') return LATEST;
  const match = VERSION.exec(value);
  const minor = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(minor)) throw new ParseError('must be "latest" or "v1.x"');
  return v1(minor);
}

const labelsPath = FieldPath.of('metadata', 'labels');

/**
 * api.PolicyToEvaluate: the namespace's labels override the defaults mode by mode. A label that
 * does not parse yields an error and `restricted`/`latest` for enforce, `privileged` for audit and
 * warn (they fail open), as upstream. Since Kubernetes 1.26 a namespace that sets a valid enforce
 * level but no warn level warns at the enforce level when that is stricter (with the enforce
 * version unless a warn version is set): enforce is never applied to pod controllers, so this is
 * what gives a Deployment whose template the enforce level would refuse its warning.
 */
export function policyToEvaluate(
  labels: Readonly<Record<string, string>>,
  defaults: Policy,
): { policy: Policy; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const resolved: Record<Mode, LevelVersion> = {
    enforce: defaults.enforce,
    audit: defaults.audit,
    warn: defaults.warn,
  };
  let validEnforceLevel = false;
  // Upstream's order: enforce, audit, warn; level before version.
  for (const mode of MODES) {
    let { level, version } = resolved[mode];
    const levelValue = labels[levelLabel(mode)];
    if (levelValue !== undefined) {
      try {
        level = parseLevel(levelValue);
        if (mode === 'enforce') validEnforceLevel = true;
      } catch (error) {
        errors.push(invalid(labelsPath.key(levelLabel(mode)), levelValue, (error as Error).message));
        level = mode === 'enforce' ? 'restricted' : 'privileged';
      }
    }
    const versionValue = labels[versionLabel(mode)];
    if (versionValue !== undefined) {
      try {
        version = parseVersion(versionValue);
      } catch (error) {
        errors.push(invalid(labelsPath.key(versionLabel(mode)), versionValue, (error as Error).message));
        version = LATEST;
      }
    }
    resolved[mode] = { level, version };
  }
  const { enforce, warn } = resolved;
  if (validEnforceLevel && labels[levelLabel('warn')] === undefined && compareLevels(enforce.level, warn.level) > 0)
    resolved.warn = {
      level: enforce.level,
      version: labels[versionLabel('warn')] === undefined ? enforce.version : warn.version,
    };
  return { policy: resolved, errors };
}

export function fullyPrivileged(policy: Policy): boolean {
  return MODES.every((mode) => policy[mode].level === 'privileged');
}

/** LevelVersion.Equivalent: both privileged, or the same level and version. */
function equivalentLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
}

export function equivalentPolicy(a: Policy, b: Policy): boolean {
  return MODES.every((mode) => equivalentLevelVersion(a[mode], b[mode]));
}

/**
 * The policy as exemptNamespaceWarning prints it: `enforce=restricted:latest, warn=baseline:v1.24`,
 * only the non-privileged modes the namespace's own labels set (level or version), in upstream's
 * order. A warn level that only follows the enforce label is not printed.
 */
export function explicitPolicyString(policy: Policy, labels: Readonly<Record<string, string>>): string {
  return MODES.filter(
    (mode) =>
      policy[mode].level !== 'privileged' &&
      (labels[levelLabel(mode)] !== undefined || labels[versionLabel(mode)] !== undefined),
  )
    .map((mode) => `${mode}=${levelVersionString(policy[mode])}`)
    .join(', ');
}

/** api.CompareLevels: -1 when a is less strict than b, 0 when equal, 1 when stricter. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}
