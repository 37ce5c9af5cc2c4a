// A ResourceQuota as quota evaluation reads it, and what an object consumes. lib/state stores
// both (its LearnedQuota and Charge are these types) but this folder never imports it: the
// evaluation is pure, for the ResourceQuota webhook and `npm run sync` alike.
import type { KubeObject } from '../admission/types.js';

/** The scope facts of an object (BestEffort, Terminating, PriorityClass...): see usage.ts. */
export type ScopeFacts = Readonly<Record<string, string | boolean>>;

/** What one object consumes (upstream's evaluators' Usage), and the facts scopes match against. */
export interface Usage {
  /** resource name (`pods`, `requests.cpu`, `count/deployments.apps`) → quantity as a string. */
  readonly usage: Readonly<Record<string, string>>;
  readonly facts: ScopeFacts;
}

/** A ResourceQuota: only what admission needs. */
export interface Quota {
  readonly namespace: string;
  readonly name: string;
  /** spec.hard, quantities as written. */
  readonly hard: Readonly<Record<string, string>>;
  readonly scopes: readonly string[];
  /** spec.scopeSelector as written (matchExpressions). */
  readonly scopeSelector?: unknown;
}

/** The quota a ResourceQuota object states: spec.hard, scopes, scopeSelector. */
export function quotaOf(object: KubeObject, namespace: string, name: string): Quota {
  const spec = (object.spec ?? {}) as { hard?: Record<string, unknown>; scopes?: unknown; scopeSelector?: unknown };
  const hard = Object.fromEntries(Object.entries(spec.hard ?? {}).map(([k, v]) => [k, String(v)]));
  return {
    namespace,
    name,
    hard,
    scopes: Array.isArray(spec.scopes) ? spec.scopes.map(String) : [],
    ...(spec.scopeSelector !== undefined && { scopeSelector: spec.scopeSelector }),
  };
}
