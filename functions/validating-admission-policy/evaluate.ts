// One policy, one binding, one param: upstream's validator.Validate. Match conditions first, then
// the validations (sharing one cost budget), then the audit annotations; every outcome becomes a
// decision that the binding's validationActions turn into a denial, a warning or an audit record.
import { isCelList, isCelMap } from '@bufbuild/cel';
import { EVALUATION_COST_BUDGET, PER_EXPRESSION_COST_LIMIT } from '../../lib/cel/cel-env.js';
import { LazyVariables, failed, matchConditions } from '../../lib/admission-policy/evaluate.js';
import type { Bindings } from '../../lib/admission-policy/evaluate.js';
import type { CompiledPolicy } from './config.js';

export type { Bindings };

export interface Decision {
  readonly action: 'deny' | 'admit';
  readonly message: string;
  readonly reason?: string;
  readonly fieldPath?: string;
}

/** An audit annotation's value, or (under failurePolicy Fail) the error that becomes a denial. */
export type AuditAnnotationResult =
  | { readonly key: string; readonly value: string; readonly error?: undefined }
  | { readonly key: string; readonly error: string; readonly value?: undefined };

export interface ValidateResult {
  readonly decisions: readonly Decision[];
  readonly auditAnnotations: readonly AuditAnnotationResult[];
}

/** Kubernetes' celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

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
  context.variables = new LazyVariables(policy, context, (cost) => {
    budget -= cost;
  });

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
