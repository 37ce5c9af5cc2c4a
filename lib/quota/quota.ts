// A ResourceQuota as quota evaluation reads it, and what an object consumes: the ports' own
// LearnedQuota and Charge (lib/admission/ports.ts), which lib/state stores. The evaluation is
// pure, for the ResourceQuota webhook and `npm run sync` alike, and never imports lib/state.
import type { Charge, LearnedQuota } from '../admission/ports.js';

/** The scope facts of an object (BestEffort, Terminating, PriorityClass...): see usage.ts. */
export type ScopeFacts = Readonly<Record<string, string | boolean>>;

/** What one object consumes (upstream's evaluators' Usage), and the facts scopes match against. */
export type Usage = Charge;

/** A ResourceQuota: only what admission needs. */
export type Quota = LearnedQuota;

/**
 * The quota a ResourceQuota object states: spec.hard, scopes, scopeSelector. Learning reads it
 * (lib/admission/learning.ts, where it lives so that lib/admission never imports lib/quota), and
 * so does `npm run sync`.
 */
export { learnedQuotaOf as quotaOf } from '../admission/learning.js';
