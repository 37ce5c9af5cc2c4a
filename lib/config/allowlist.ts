// OpenShift plugins let a user through when the authorizer allows a verb on a pseudo-resource
// (`create services/externalips`, `create endpoints/restricted`, `create pods/binding`). A webhook
// has no authorizer to ask, so the configuration names those users and groups instead, beside
// OpenShift's own fields: `allowedUsers` (default none) and `allowedGroups` (default
// system:masters, whom every authorizer allows everything).
import type { UserInfo } from '../admission/types.js';
import type { ConfigFields } from './fields.js';

export interface AuthorizerAllowlist {
  readonly users: ReadonlySet<string>;
  readonly groups: ReadonlySet<string>;
}

export const ALLOWLIST_FIELDS = ['allowedUsers', 'allowedGroups'] as const;

export const EMPTY_ALLOWLIST: AuthorizerAllowlist = { users: new Set(), groups: new Set() };

/** `defaultUsers`: whom the cluster's default roles already grant the verb (used when allowedUsers is absent). */
export function readAllowlist(entry: ConfigFields, defaultUsers: string[] = []): AuthorizerAllowlist {
  return {
    users: new Set(entry.strings('allowedUsers', { fallback: defaultUsers, nonEmpty: true })),
    groups: new Set(entry.strings('allowedGroups', { fallback: ['system:masters'], nonEmpty: true })),
  };
}

/** Stands in for the authorizer's "allow". */
export function isAllowlisted(allowlist: AuthorizerAllowlist, user: Readonly<UserInfo>): boolean {
  if (allowlist.users.has(user.username ?? '')) return true;
  return (user.groups ?? []).some((group) => allowlist.groups.has(group));
}
