// A ResourceQuota as quota evaluation reads it, and what an object consumes: the ports' own
// LearnedQuota and Charge (lib/admission/ports.ts), which lib/state stores. The evaluation is
// pure, for the ResourceQuota webhook and `npm run sync` alike, and never imports lib/state.
import type { Charge, LearnedQuota } from '../admission/ports.js';
import type { KubeObject } from '../admission/types.js';

/** The scope facts of an object (BestEffort, Terminating, PriorityClass...): see usage.ts. */
export type ScopeFacts = Readonly<Record<string, string | boolean>>;

/** What one object consumes (upstream's evaluators' Usage), and the facts scopes match against. */
export type Usage = Charge;

/** A ResourceQuota: only what admission needs. */
export type Quota = LearnedQuota;

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
