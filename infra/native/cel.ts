// CEL pieces several compilers share: the version that has the ip and cidr libraries, a configured
// network as a `cidr()` literal, the project's allowlist as a condition on the request's user, Go's
// `%v` of a string list and the message of several field errors.
import type { AuthorizerAllowlist } from '../../lib/config/allowlist.js';
import type { IPNet } from '../../lib/kube/net.js';
import type { Requirement } from './policy.js';
import { atLeast, celStrings } from './policy.js';

/** Policies that judge addresses need CEL's ip and cidr libraries. */
export const ipLibrariesUnavailable: Requirement = (version) =>
  atLeast(version, '1.31')
    ? undefined
    : "it needs CEL's ip and cidr libraries, which policies get from Kubernetes 1.31";

/** The network as canonical CIDR text CEL's cidr() parses (Go's ParseCIDRSloppy already read it). */
export function cidrText(net: IPNet): string {
  if (net.v4) return `${[...net.ip.slice(12)].join('.')}/${net.bits}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((net.ip[2 * i] << 8) | net.ip[2 * i + 1]).toString(16));
  return `${groups.join(':')}/${net.bits}`;
}

/** The request's user is named by the allowlist (the project's stand-in for the authorizer). */
export function allowlisted(allowlist: AuthorizerAllowlist): string {
  const terms: string[] = [];
  if (allowlist.users.size > 0) terms.push(`request.userInfo.?username.orValue('') in ${celStrings(allowlist.users)}`);
  if (allowlist.groups.size > 0)
    terms.push(`request.userInfo.?groups.orValue([]).exists(g, g in ${celStrings(allowlist.groups)})`);
  return terms.length === 0 ? 'false' : terms.join(' || ');
}

/**
 * An address a loose parser (Go's ParseIPSloppy) reads but CEL's ip() refuses: IPv4 with leading
 * zeros (`010.1.2.3`), IPv4-mapped IPv6. The policies refuse such an address where the plugin
 * would look it up in its networks: the strict answer, listed as a difference.
 */
export const looseAddress = (text: string): string =>
  `(!isIP(${text}) && (${text}.matches('^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$') || ${text}.contains(':')))`;

/** Go's `%v` of a []string, from a CEL list of strings. */
export const goList = (list: string): string => `'[' + ${list}.join(' ') + ']'`;

/** One message for one or several field errors (a CEL list of strings), as utilerrors.Aggregate prints them. */
export const listed = (list: string): string => `size(${list}) == 1 ? ${list}[0] : '[' + ${list}.join(', ') + ']'`;
