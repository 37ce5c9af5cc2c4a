// Which policies and bindings apply to a request: upstream's policy/matching and webhook
// predicates (rules, namespace and object selectors), and an index so that a request no policy
// names costs the same with 1 or 1,000 policies loaded.
import type { LabelSelectorRequirement } from '../admission/label-selector.js';
import { isEmptySelector, selectorMatches } from '../admission/label-selector.js';
import type { WebhookRule } from '../admission/plugin.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { Operation } from '../admission/types.js';

export interface NamedRule {
  readonly operations: readonly (Operation | '*')[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly scope: 'Cluster' | 'Namespaced' | '*';
  readonly resourceNames: readonly string[];
}

export type LabelPredicate = (labels: Readonly<Record<string, string>>) => boolean;

export interface Selector {
  /** An empty selector selects everything without looking at labels. */
  readonly empty: boolean;
  readonly matches: LabelPredicate;
}

export interface MatchResources {
  readonly namespaceSelector: Selector;
  readonly objectSelector: Selector;
  readonly resourceRules: readonly NamedRule[];
  readonly excludeResourceRules: readonly NamedRule[];
  readonly matchPolicy: 'Exact' | 'Equivalent';
}

export type SelectorRequirement = LabelSelectorRequirement & { readonly values: readonly string[] };

/** metav1.LabelSelectorAsSelector, as every other selector of the project matches it (lib/admission). */
export function labelSelector(
  matchLabels: Readonly<Record<string, string>>,
  requirements: readonly SelectorRequirement[],
): Selector {
  const selector = { matchLabels, matchExpressions: requirements };
  return { empty: isEmptySelector(selector), matches: (labels) => selectorMatches(selector, labels) };
}

export const EVERYTHING: Selector = { empty: true, matches: () => true };

const contains = (list: readonly string[], value: string) => list.includes('*') || list.includes(value);

/** webhook/predicates/rules.Matcher, plus resourceNames as policy matching adds them. */
function ruleMatches(rule: NamedRule, request: AdmissionRequest): boolean {
  const { group, version, resource } = request.resource;
  const isNamespace = group === '' && version === 'v1' && resource === 'namespaces';
  if (rule.scope === 'Namespaced' && (isNamespace || request.namespace === '')) return false;
  if (rule.scope === 'Cluster' && !(isNamespace || request.namespace === '')) return false;
  if (!contains(rule.operations, request.operation)) return false;
  if (!contains(rule.apiGroups, group) || !contains(rule.apiVersions, version)) return false;
  const resourceMatches = rule.resources.some((entry) => {
    const slash = entry.indexOf('/');
    const [res, sub] = slash < 0 ? [entry, ''] : [entry.slice(0, slash), entry.slice(slash + 1)];
    return (res === '*' || res === resource) && (sub === '*' || sub === request.subResource);
  });
  if (!resourceMatches) return false;
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(request.name);
}

/**
 * The resource rules of policy matching. The webhook is registered with matchPolicy Equivalent and
 * the union of the policies' rules, so the apiserver already sends each request in a version some
 * rule names: matching the request as received gives Equivalent's answer. Exact is matched the same
 * way, a difference docs/plugins/validating-admission-policy.md lists.
 */
export function rulesMatch(rules: readonly NamedRule[], request: AdmissionRequest): boolean {
  return rules.some((rule) => ruleMatches(rule, request));
}

/** A never-seen namespace under unknownNamespace Skip: no selector that reads its labels matches. */
export const SKIP_UNKNOWN = Symbol('skip never-seen namespace');

/**
 * `labels` of the request's namespace, asked for only when a selector reads them; for a never-seen
 * one, null (unknownNamespace Fail) or SKIP_UNKNOWN (Skip).
 */
export type NamespaceLabels = () => Promise<Readonly<Record<string, string>> | null | typeof SKIP_UNKNOWN>;

export class UnknownNamespaceError extends Error {
  override readonly name = 'UnknownNamespaceError';
}

/** upstream namespace.Matcher: cluster-scoped requests (other than namespaces) always match. */
async function namespaceMatches(
  selector: Selector,
  request: AdmissionRequest,
  labels: NamespaceLabels,
): Promise<boolean> {
  if (selector.empty) return true;
  if (request.namespace === '' && request.resource.resource !== 'namespaces') return true;
  const known = await labels();
  if (known === SKIP_UNKNOWN) return false;
  if (known === null)
    throw new UnknownNamespaceError(
      `namespace ${JSON.stringify(request.namespace)} has never been seen by this webhook (unknownNamespace: Fail)`,
    );
  return selector.matches(known);
}

/** upstream object.Matcher: the new or the old object's labels. */
function objectMatches(selector: Selector, request: AdmissionRequest): boolean {
  if (selector.empty) return true;
  return [request.object, request.oldObject].some((o) => o !== null && selector.matches(o.metadata?.labels ?? {}));
}

/** policy/matching.Matcher.Matches. Throws UnknownNamespaceError (unknownNamespace: Fail). */
export async function resourcesMatch(
  match: MatchResources,
  request: AdmissionRequest,
  labels: NamespaceLabels,
): Promise<boolean> {
  if (!objectMatches(match.objectSelector, request)) return false;
  if (rulesMatch(match.excludeResourceRules, request)) return false;
  if (match.resourceRules.length > 0 && !rulesMatch(match.resourceRules, request)) return false;
  return namespaceMatches(match.namespaceSelector, request, labels);
}

/**
 * Policies by (group, resource) of their matchConstraints rules, `*` kept as its own key. A lookup
 * reads four buckets whatever the number of policies, and keeps the configuration's order.
 */
export class PolicyIndex<P extends { readonly order: number; readonly matchConstraints: MatchResources }> {
  private readonly buckets = new Map<string, P[]>();

  constructor(policies: readonly P[]) {
    for (const policy of policies) {
      const keys = new Set<string>();
      for (const rule of policy.matchConstraints.resourceRules) {
        for (const group of rule.apiGroups)
          for (const entry of rule.resources) keys.add(`${group}\u0000${entry.split('/')[0]}`);
      }
      for (const key of keys) {
        const bucket = this.buckets.get(key) ?? [];
        bucket.push(policy);
        this.buckets.set(key, bucket);
      }
    }
  }

  candidates(request: AdmissionRequest): P[] {
    const { group, resource } = request.resource;
    const found = new Set<P>();
    for (const key of [`${group}\u0000${resource}`, `${group}\u0000*`, `*\u0000${resource}`, '*\u0000*']) {
      const bucket = this.buckets.get(key);
      if (bucket) for (const p of bucket) found.add(p);
    }
    return found.size > 1 ? [...found].sort((a, b) => a.order - b.order) : [...found];
  }
}

/** The union of the policies' matchConstraints rules, as webhook rules (resourceNames dropped). */
export function webhookRulesFor(policies: readonly { readonly matchConstraints: MatchResources }[]): WebhookRule[] {
  const rules = new Map<string, WebhookRule>();
  for (const policy of policies) {
    for (const { operations, apiGroups, apiVersions, resources, scope } of policy.matchConstraints.resourceRules) {
      const rule: WebhookRule = { operations, apiGroups, apiVersions, resources, scope };
      rules.set(JSON.stringify(rule), rule);
    }
  }
  return [...rules.values()];
}

const shares = (a: readonly string[], b: readonly string[]) =>
  a.includes('*') || b.includes('*') || a.some((x) => b.includes(x));

/**
 * True when some request could match both rules. Conservative: resources are compared by their
 * main resource, so `pods` and `pods/status` count as overlapping.
 */
export function webhookRulesOverlap(a: WebhookRule, b: WebhookRule): boolean {
  const main = (resources: readonly string[]) => resources.map((r) => r.split('/')[0]);
  const scopes = [a.scope ?? '*', b.scope ?? '*'];
  return (
    shares(a.operations, b.operations) &&
    shares(a.apiGroups, b.apiGroups) &&
    shares(a.apiVersions, b.apiVersions) &&
    shares(main(a.resources), main(b.resources)) &&
    (scopes.includes('*') || scopes[0] === scopes[1])
  );
}
