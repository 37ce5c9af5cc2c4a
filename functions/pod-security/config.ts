// The plugin's configuration: upstream's PodSecurityConfiguration
// (pod-security.admission.config.k8s.io/v1, v1beta1 or v1alpha1), read strictly (an unknown field fails the
// start with the closest known name) and validated as upstream's admission/api/validation does.
import type { FieldError } from '../../lib/admission/field.js';
import { aggregateMessage, fieldErrorMessage, FieldPath, invalid, required } from '../../lib/admission/field.js';
import { ConfigError } from '../../lib/config/errors.js';
import { ConfigFields, validationError } from '../../lib/config/fields.js';
import type { Level, Mode, Policy, Version } from './api.js';
import { LATEST, parseLevel, parseVersion } from './api.js';

export const UPSTREAM_NAME = 'PodSecurity';
const GROUP = 'pod-security.admission.config.k8s.io';
/** The versions upstream's scheme decodes; they differ in defaulting only, and read the same here. */
export const CONFIGURATION_VERSIONS = [`${GROUP}/v1`, `${GROUP}/v1beta1`, `${GROUP}/v1alpha1`] as const;

export interface PodSecurityConfig {
  readonly defaults: Policy;
  readonly exemptions: {
    readonly usernames: ReadonlySet<string>;
    readonly runtimeClasses: ReadonlySet<string>;
    readonly namespaces: ReadonlySet<string>;
  };
}

/** No entry: every default `privileged:latest` (upstream's defaulting), no exemptions. */
export const DEFAULT_CONFIG: PodSecurityConfig = {
  defaults: {
    enforce: { level: 'privileged', version: LATEST },
    audit: { level: 'privileged', version: LATEST },
    warn: { level: 'privileged', version: LATEST },
  },
  exemptions: { usernames: new Set(), runtimeClasses: new Set(), namespaces: new Set() },
};

const DEFAULTS_FIELDS = ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'];
const EXEMPTIONS_FIELDS = ['usernames', 'runtimeClasses', 'namespaces'];
const TOP_FIELDS = ['apiVersion', 'kind', 'defaults', 'exemptions'];

// --- upstream's validation ---

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** ValidateNamespaceName: a DNS-1123 label. */
function namespaceNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.length > 63) errors.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(name)) {
    errors.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an " +
        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errors;
}

/** NameIsDNSSubdomain: a DNS-1123 subdomain. */
function subdomainErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.length > 253) errors.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name)) {
    errors.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end " +
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return errors;
}

function duplicate(path: FieldPath, value: string): FieldError {
  return { type: 'Duplicate value', field: String(path), badValue: value, detail: '' };
}

function validateList(values: readonly string[], path: FieldPath, check: (value: string) => string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  values.forEach((value, i) => {
    const problems = check(value);
    if (problems.length > 0) errors.push(invalid(path.index(i), value, problems.join(', ')));
    else if (seen.has(value)) errors.push(duplicate(path.index(i), value));
    else seen.add(value);
  });
  return errors;
}

/** Parses and validates the entry's configuration; throws a ConfigError naming the field. */
export function parsePodSecurityConfiguration(raw: unknown): PodSecurityConfig {
  if (raw === undefined || raw === null) return DEFAULT_CONFIG;
  const top = ConfigFields.of(UPSTREAM_NAME, raw)
    .allow(...TOP_FIELDS)
    .typeMeta(CONFIGURATION_VERSIONS, ['PodSecurityConfiguration'], true);
  const defaults = top.object('defaults').allow(...DEFAULTS_FIELDS);
  const exemptions = top.object('exemptions').allow(...EXEMPTIONS_FIELDS);

  const errors: FieldError[] = [];
  const policy = {} as Record<Mode, { level: Level; version: Version }>;
  // Upstream validates enforce, warn, audit in this order.
  for (const mode of ['enforce', 'warn', 'audit'] as const) {
    const levelPath = FieldPath.of('defaults', mode);
    const versionPath = FieldPath.of('defaults', `${mode}-version`);
    const levelValue = defaults.string(mode) ?? 'privileged';
    const versionValue = defaults.string(`${mode}-version`) ?? 'latest';
    let level: Level = 'privileged';
    let version: Version = LATEST;
    try {
      level = parseLevel(levelValue);
    } catch (error) {
      errors.push(invalid(levelPath, levelValue, (error as Error).message));
    }
    try {
      version = parseVersion(versionValue);
    } catch (error) {
      errors.push(invalid(versionPath, versionValue, (error as Error).message));
    }
    policy[mode] = { level, version };
  }
  const namespaces = exemptions.strings('namespaces');
  const runtimeClasses = exemptions.strings('runtimeClasses');
  const usernames = exemptions.strings('usernames');
  errors.push(...validateList(namespaces, FieldPath.of('exemptions', 'namespaces'), namespaceNameErrors));
  errors.push(...validateList(runtimeClasses, FieldPath.of('exemptions', 'runtimeClasses'), subdomainErrors));
  const seenUsers = new Set<string>();
  usernames.forEach((name, i) => {
    const path = FieldPath.of('exemptions', 'usernames').index(i);
    if (name === '') errors.push(required(path, ''));
    else if (seenUsers.has(name)) errors.push(duplicate(path, name));
    else seenUsers.add(name);
  });
  // Several errors in upstream's aggregate form ([a, b]); one at its own field.
  if (errors.length > 1) throw new ConfigError(UPSTREAM_NAME, '', aggregateMessage(errors.map(fieldErrorMessage)));
  const invalidConfiguration = validationError(UPSTREAM_NAME, errors);
  if (invalidConfiguration) throw invalidConfiguration;
  return {
    defaults: { enforce: policy.enforce, audit: policy.audit, warn: policy.warn },
    exemptions: {
      usernames: new Set(usernames),
      runtimeClasses: new Set(runtimeClasses),
      namespaces: new Set(namespaces),
    },
  };
}
