// A small IAM policy evaluator for the subset the project's policies use, so that tests can ask
// "would this policy let the deployer do X on Y?" without an AWS call: Allow and Deny statements,
// Action and Resource with `*` and `?` wildcards (actions case-insensitively), policy variables
// (`${aws:PrincipalAccount}`) in resources and condition values, and the condition operators
// StringEquals, StringNotEquals, StringLike, StringNotLike, ArnEquals, ArnNotEquals, ArnLike and
// ArnNotLike, each optionally with ForAllValues:/ForAnyValue: and ...IfExists. Evaluation is
// AWS's for one identity policy: an explicit Deny wins, else any Allow, else the implicit deny.
// Anything outside the subset throws, so a policy that grows past it cannot pass by accident.

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | readonly string[];
  readonly Resource: string | readonly string[];
  readonly Condition?: Record<string, Record<string, string | readonly string[]>>;
}

export interface PolicyDocument {
  readonly Version: string;
  readonly Statement: readonly PolicyStatement[];
}

/** One request: the action, the resource ARN, and the request context's keys (absent when undefined). */
export interface IamRequest {
  readonly action: string;
  readonly resource: string;
  readonly context?: Readonly<Record<string, string | readonly string[] | undefined>>;
}

export type IamDecision = 'allowed' | 'explicitly denied' | 'implicitly denied';

const list = <T>(value: T | readonly T[]): readonly T[] => (Array.isArray(value) ? value : [value as T]);

/** `*` any run of characters, `?` one character; everything else literal. */
function wildcard(pattern: string, flags = ''): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`));
  return new RegExp(`^${body}$`, `s${flags}`);
}

/** Replaces `${key}` policy variables with the context's single value; an absent key matches nothing. */
function substitute(value: string, context: IamRequest['context']): string | undefined {
  let missing = false;
  const out = value.replace(/\$\{([^}]+)\}/g, (_, key: string) => {
    const v = context?.[key];
    if (typeof v !== 'string') {
      missing = true;
      return '';
    }
    return v;
  });
  return missing ? undefined : out;
}

/** An ARN comparison: ArnLike matches each of the six colon-separated parts on its own. */
function arnLike(pattern: string, value: string): boolean {
  const p = pattern.split(':');
  const v = value.split(':');
  if (p.length < 6 || v.length < 6) return false;
  const head = (parts: string[]) => [...parts.slice(0, 5), parts.slice(5).join(':')];
  const [hp, hv] = [head(p), head(v)];
  return hp.every((part, i) => wildcard(part).test(hv[i]!));
}

const BASE_OPERATORS: Record<string, (policy: string, value: string) => boolean> = {
  StringEquals: (p, v) => p === v,
  StringLike: (p, v) => wildcard(p).test(v),
  ArnEquals: (p, v) => p === v,
  ArnLike: arnLike,
};
const NEGATED: Record<string, string> = {
  StringNotEquals: 'StringEquals',
  StringNotLike: 'StringLike',
  ArnNotEquals: 'ArnEquals',
  ArnNotLike: 'ArnLike',
};

function conditionHolds(
  operatorName: string,
  key: string,
  policyValues: readonly string[],
  context: IamRequest['context'],
): boolean {
  let name = operatorName;
  let set: 'ForAllValues' | 'ForAnyValue' | undefined;
  const qualifier = /^(ForAllValues|ForAnyValue):(.+)$/.exec(name);
  if (qualifier) {
    set = qualifier[1] as 'ForAllValues' | 'ForAnyValue';
    name = qualifier[2]!;
  }
  const ifExists = name.endsWith('IfExists');
  if (ifExists) name = name.slice(0, -'IfExists'.length);
  const negated = name in NEGATED;
  const base = BASE_OPERATORS[negated ? NEGATED[name]! : name];
  if (!base) throw new Error(`condition operator ${operatorName} is outside the evaluator's subset`);
  const raw = context?.[key];
  const values = raw === undefined ? [] : list(raw);
  const patterns = policyValues.flatMap((p) => substitute(p, context) ?? []);
  const matches = (value: string) => patterns.some((p) => base(p, value));
  if (set === 'ForAllValues') {
    // True for an absent or empty key: nothing in the request falls outside the set.
    const all = values.every(matches);
    return negated ? values.every((v) => !matches(v)) : all;
  }
  if (set === 'ForAnyValue') {
    const any = values.some(matches);
    return negated ? values.some((v) => !matches(v)) : any;
  }
  if (raw === undefined) return ifExists || negated;
  if (values.length !== 1) throw new Error(`${key} has several values: use ForAllValues or ForAnyValue`);
  return negated ? !matches(values[0]!) : matches(values[0]!);
}

function applies(statement: PolicyStatement, request: IamRequest): boolean {
  for (const key of Object.keys(statement))
    if (!['Sid', 'Effect', 'Action', 'Resource', 'Condition'].includes(key))
      throw new Error(`statement element ${key} is outside the evaluator's subset`);
  if (!list(statement.Action).some((a) => wildcard(a, 'i').test(request.action))) return false;
  const resources = list(statement.Resource).flatMap((r) => substitute(r, request.context) ?? []);
  if (!resources.some((r) => wildcard(r).test(request.resource))) return false;
  for (const [operator, keys] of Object.entries(statement.Condition ?? {}))
    for (const [key, value] of Object.entries(keys))
      if (!conditionHolds(operator, key, list(value), request.context)) return false;
  return true;
}

/** AWS's evaluation of one identity-based policy for one request. */
export function evaluate(policy: PolicyDocument, request: IamRequest): IamDecision {
  const matching = policy.Statement.filter((s) => applies(s, request));
  if (matching.some((s) => s.Effect === 'Deny')) return 'explicitly denied';
  if (matching.some((s) => s.Effect === 'Allow')) return 'allowed';
  return 'implicitly denied';
}

/** Several policies together (an identity policy and a permissions boundary): both must allow. */
export function evaluateIntersection(policies: readonly PolicyDocument[], request: IamRequest): IamDecision {
  const decisions = policies.map((p) => evaluate(p, request));
  if (decisions.includes('explicitly denied')) return 'explicitly denied';
  return decisions.every((d) => d === 'allowed') ? 'allowed' : 'implicitly denied';
}
