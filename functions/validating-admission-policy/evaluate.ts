// One policy, one binding, one param: upstream's validator.Validate. Match conditions first, then
// the validations (sharing one cost budget), then the audit annotations; every outcome becomes a
// decision that the binding's validationActions turn into a denial, a warning or an audit record.
import { isCelList, isCelMap } from '@bufbuild/cel';
import { EVALUATION_COST_BUDGET, PER_EXPRESSION_COST_LIMIT } from './cel-env.js';
import type { CompiledExpression, EvalOutcome } from './compile.js';
import type { CompiledPolicy } from './config.js';

export interface Decision {
  readonly action: 'deny' | 'admit';
  readonly message: string;
  readonly reason?: string;
  readonly fieldPath?: string;
}

export interface AuditAnnotationResult {
  readonly key: string;
  readonly value?: string;
  /** An error under failurePolicy Fail: becomes a denial. */
  readonly error?: string;
}

export interface ValidateResult {
  readonly decisions: readonly Decision[];
  readonly auditAnnotations: readonly AuditAnnotationResult[];
}

export interface Bindings {
  readonly object: unknown;
  readonly oldObject: unknown;
  readonly request: unknown;
  readonly params: unknown;
  readonly namespaceObject: unknown;
}

/** Kubernetes' celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

const failed = (expression: CompiledExpression, error: string) =>
  `expression '${expression.text}' resulted in error: ${error}`;

/**
 * `variables`: each one evaluated on first use, once, as upstream's lazy composition does. A Map,
 * because @bufbuild/cel reads a Map's entries through get() when asked, where it would copy every
 * property of a plain object (and so evaluate every variable) on first access.
 */
class LazyVariables extends Map<string, unknown> {
  private readonly outcomes = new Map<string, EvalOutcome>();

  constructor(
    private readonly policy: CompiledPolicy,
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
function matchConditions(
  policy: CompiledPolicy,
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

function messageOf(
  validation: CompiledPolicy['validations'][number],
  context: Record<string, unknown>,
  budget: number,
): string {
  if (validation.messageExpression) {
    const outcome = validation.messageExpression.evaluate(context, Math.max(budget, 0));
    if ('value' in outcome && typeof outcome.value === 'string') {
      const message = outcome.value.trim();
      if (message !== '' && Buffer.byteLength(message) <= MAX_MESSAGE_BYTES && !message.includes('\n')) return message;
    }
  }
  if (validation.message.trim() !== '') return validation.message.trim();
  return `failed expression: ${validation.expression.text.trim()}`;
}

const typeName = (v: unknown) =>
  isCelList(v)
    ? 'list'
    : isCelMap(v)
      ? 'map'
      : typeof v === 'bigint'
        ? 'int'
        : typeof v === 'number'
          ? 'double'
          : typeof v === 'boolean'
            ? 'bool'
            : typeof v;

export function validate(policy: CompiledPolicy, bindings: Bindings): ValidateResult {
  const onError = policy.failurePolicy === 'Ignore' ? 'admit' : 'deny';
  let budget = EVALUATION_COST_BUDGET;
  const context: Record<string, unknown> = { ...bindings };
  context.variables = new LazyVariables(policy, context, (cost) => void (budget -= cost));

  const matched = matchConditions(policy, context);
  if (matched === 'skip') return { decisions: [], auditAnnotations: [] };
  if (matched !== 'match') return { decisions: [{ action: onError, message: matched.error }], auditAnnotations: [] };

  const decisions: Decision[] = [];
  for (const validation of policy.validations) {
    const outcome = validation.expression.evaluate(context, Math.min(budget, PER_EXPRESSION_COST_LIMIT));
    budget -= outcome.cost;
    if ('outOfBudget' in outcome && outcome.outOfBudget)
      return { decisions: [{ action: onError, message: outcome.error }], auditAnnotations: [] };
    if ('error' in outcome) decisions.push({ action: onError, message: failed(validation.expression, outcome.error) });
    else if (outcome.value !== true) {
      decisions.push({
        action: 'deny',
        message: messageOf(validation, context, budget),
        reason: validation.reason,
        fieldPath: validation.fieldPath,
      });
    } else decisions.push({ action: 'admit', message: '' });
  }

  const auditAnnotations: AuditAnnotationResult[] = [];
  for (const { key, expression } of policy.auditAnnotations) {
    const outcome = expression.evaluate(context, PER_EXPRESSION_COST_LIMIT);
    if ('error' in outcome) {
      if (onError === 'deny') auditAnnotations.push({ key, error: failed(expression, outcome.error) });
    } else if (typeof outcome.value === 'string') {
      if (outcome.value.trim() !== '') auditAnnotations.push({ key, value: outcome.value.trim() });
    } else if (outcome.value !== null) {
      auditAnnotations.push({
        key,
        error: `valueExpression '${expression.text}' resulted in unsupported return type: ${typeName(outcome.value)}. Return type must be either string or null.`,
      });
    }
  }
  return { decisions, auditAnnotations };
}
