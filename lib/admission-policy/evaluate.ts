// What every admission policy evaluates before its own expressions: the lazily evaluated
// `variables` and the matchConditions (upstream's CompositedCompiler and matchconditions.Matcher).
import { PER_EXPRESSION_COST_LIMIT } from '../cel/cel-env.js';
import type { CompiledExpression, EvalOutcome } from '../cel/compile.js';
import type { PolicyCommon } from './spec.js';

/** The bindings every policy expression sees. */
export interface Bindings {
  readonly object: unknown;
  readonly oldObject: unknown;
  readonly request: unknown;
  readonly params: unknown;
  readonly namespaceObject: unknown;
}

/** upstream's wording for an expression that failed to evaluate. */
export const failed = (expression: CompiledExpression, error: string): string =>
  `expression '${expression.text}' resulted in error: ${error}`;

/**
 * `variables`: each one evaluated on first use, once, as upstream's lazy composition does. A Map,
 * because @bufbuild/cel reads a Map's entries through get() when asked, where it would copy every
 * property of a plain object (and so evaluate every variable) on first access.
 */
export class LazyVariables extends Map<string, unknown> {
  private readonly outcomes = new Map<string, EvalOutcome>();

  constructor(
    private readonly policy: Pick<PolicyCommon, 'variables'>,
    private readonly context: Record<string, unknown>,
    private readonly spend: (cost: number) => void,
  ) {
    super(policy.variables.map(({ name }) => [name, null]));
  }

  override get(name: string): unknown {
    const variable = this.policy.variables.find((v) => v.name === name);
    if (!variable) return undefined;
    let outcome = this.outcomes.get(name);
    if (!outcome) {
      outcome = variable.expression.evaluate(this.context, PER_EXPRESSION_COST_LIMIT);
      this.outcomes.set(name, outcome);
      this.spend(outcome.cost);
    }
    if ('error' in outcome)
      throw new Error(`composited variable "${name}" fails to evaluate: ${failed(variable.expression, outcome.error)}`);
    return outcome.value;
  }

  override *entries(): MapIterator<[string, unknown]> {
    for (const name of this.keys()) yield [name, this.get(name)];
  }

  override *values(): MapIterator<unknown> {
    for (const name of this.keys()) yield this.get(name);
  }

  override forEach(callback: (value: unknown, key: string, map: Map<string, unknown>) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }
}

/** matchConditions: any false skips the policy; errors alone decide under failurePolicy. */
export function matchConditions(
  policy: Pick<PolicyCommon, 'matchConditions' | 'failurePolicy'>,
  context: Record<string, unknown>,
): 'match' | 'skip' | { error: string } {
  const errors: string[] = [];
  for (const { expression } of policy.matchConditions) {
    const outcome = expression.evaluate(context, PER_EXPRESSION_COST_LIMIT);
    if ('error' in outcome) errors.push(failed(expression, outcome.error));
    else if (outcome.value === false) return 'skip';
  }
  if (errors.length === 0) return 'match';
  if (policy.failurePolicy === 'Ignore') return 'skip';
  const unique = [...new Set(errors)];
  return { error: unique.length === 1 ? unique[0] : `[${unique.join(', ')}]` };
}
