// OpenShift plugins let a user through when the authorizer allows a verb on a pseudo-resource
// (`create services/externalips`, `create endpoints/restricted`, `create pods/binding`). A webhook
// has no authorizer to ask, so the configuration names those users and groups instead, beside
// OpenShift's own fields: `allowedUsers` (default none) and `allowedGroups` (default
// system:masters, whom every authorizer allows everything).
import type { UserInfo } from '../admission/types.js';
import { ConfigError } from './errors.js';

export interface AuthorizerAllowlist {
  readonly users: ReadonlySet<string>;
  readonly groups: ReadonlySet<string>;
}

export const ALLOWLIST_FIELDS = ['allowedUsers', 'allowedGroups'] as const;

export const EMPTY_ALLOWLIST: AuthorizerAllowlist = { users: new Set(), groups: new Set() };

/** A list of non-empty strings; `fallback` when the field is absent or null. */
export function stringListField(
  plugin: string,
  entry: Record<string, unknown>,
  field: string,
  fallback: string[],
): string[] {
  const value = entry[field];
  if (value === undefined || value === null) return fallback;
  if (!Array.isArray(value)) throw new ConfigError(plugin, field, 'must be a list of strings');
  value.forEach((item, i) => {
    if (typeof item !== 'string' || item === '')
      throw new ConfigError(plugin, `${field}[${i}]`, `must be a non-empty string, got ${JSON.stringify(item)}`);
  });
  return value as string[];
}

/** `defaultUsers`: whom the cluster's default roles already grant the verb (used when allowedUsers is absent). */
export function readAllowlist(
  plugin: string,
  entry: Record<string, unknown>,
  defaultUsers: string[] = [],
): AuthorizerAllowlist {
  return {
    users: new Set(stringListField(plugin, entry, 'allowedUsers', defaultUsers)),
    groups: new Set(stringListField(plugin, entry, 'allowedGroups', ['system:masters'])),
  };
}

/** Stands in for the authorizer's "allow". */
export function isAllowlisted(allowlist: AuthorizerAllowlist, user: Readonly<UserInfo>): boolean {
  if (allowlist.users.has(user.username ?? '')) return true;
  return (user.groups ?? []).some((group) => allowlist.groups.has(group));
}
