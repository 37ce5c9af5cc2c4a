// A metav1.LabelSelector: one module that reads it strictly (the apiserver's
// ValidateLabelSelector), matches labels with it (LabelSelectorAsSelector) and negates it for the
// emitted webhook selectors. Used by the per-plugin exemptions (lib/config/enforcement.ts).

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export const SELECTOR_OPERATORS: readonly SelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** validation.IsQualifiedName's verdict on a label key, or undefined when it is one. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? ['', key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (slash >= 0 && (prefix === '' || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return 'prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters';
  if (name === '' || name.length > 63 || !NAME.test(name))
    return "name part must consist of at most 63 alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  return undefined;
}

/** validation.IsValidLabelValue's verdict, or undefined when `value` is one. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && NAME.test(value))) return undefined;
  return "a valid label must be an empty string or consist of at most 63 alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
}

/** Every requirement of the selector, matchLabels first (as `key In [value]`). */
export function requirementsOf(selector: LabelSelector): LabelSelectorRequirement[] {
  return [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
      key,
      operator: 'In' as const,
      values: [value],
    })),
    ...(selector.matchExpressions ?? []),
  ];
}

/** An empty selector (no requirement): as an exemption, it exempts nothing. */
export const isEmptySelector = (selector: LabelSelector): boolean => requirementsOf(selector).length === 0;

/** LabelSelectorAsSelector(selector).Matches(labels): every requirement holds. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return requirementsOf(selector).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        return has && values.includes(labels[key]);
      case 'NotIn':
        return !has || !values.includes(labels[key]);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        return false;
    }
  });
}

const OPPOSITE: Record<SelectorOperator, SelectorOperator> = {
  In: 'NotIn',
  NotIn: 'In',
  Exists: 'DoesNotExist',
  DoesNotExist: 'Exists',
};

/**
 * The requirement that holds exactly where the selector does not, when one exists: a selector of
 * one requirement. A conjunction of several has a disjunction as its negation, which no label
 * selector can say (undefined).
 */
export function negatedRequirement(selector: LabelSelector): LabelSelectorRequirement | undefined {
  const all = requirementsOf(selector);
  if (all.length !== 1) return undefined;
  const [only] = all;
  return {
    key: only.key,
    operator: OPPOSITE[only.operator],
    ...(only.values !== undefined && only.values.length > 0 && { values: [...only.values] }),
  };
}
