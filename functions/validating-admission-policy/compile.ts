// Compiles one CEL expression of a policy, once, at start. @bufbuild/cel parses and plans but has no
// type checker, so the checks cel-go's compiler would make on dyn-typed inputs are made here on the
// syntax tree: unknown variables and functions, `variables.<name>` not declared before, the
// unsupported `authorizer`. Errors read like cel-go's (`ERROR: <input>:1:7: ...` and a caret line).
//
// The tree is also rewritten: every comprehension step is charged to the cost meter (cel-env.ts),
// and escaped property names (`x__dash__prop`) select the property they stand for, as upstream.
import { parse, plan, isCelError } from '@bufbuild/cel';
import type { CelValue } from '@bufbuild/cel';
import { COST_LIMIT_EXCEEDED, CostMeter, FUNCTION_NAMES, ITERATION_TICK, PER_EXPRESSION_COST_LIMIT, VARIABLE_NAMES, metered, policyEnv } from './cel-env.js';

type ParsedExpr = ReturnType<typeof parse>;
type Expr = ParsedExpr['expr'];

export class CelCompileError extends Error {
  override readonly name = 'CelCompileError';
}

export type EvalOutcome = { readonly value: CelValue; readonly cost: number } | { readonly error: string; readonly cost: number; readonly outOfBudget?: boolean };

export interface CompiledExpression {
  readonly text: string;
  /** Evaluates with these bindings, charging at most `budget` (cel-go's per-call limit at most). */
  evaluate(bindings: Readonly<Record<string, unknown>>, budget: number): EvalOutcome;
}

export interface CompileScope {
  /** Names of `variables.<name>` this expression may use (those declared before it). */
  readonly variables: ReadonlySet<string>;
}

/** cel-go's caret display: the line, then dots up to the column. */
function located(text: string, offset: number, message: string): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = offset - lineStart;
  const source = text.slice(lineStart).split('\n')[0];
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${source}\n | ${'.'.repeat(column)}^`;
}

const KEYWORDS = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn', 'kubernetes', 'google']);

/** Upstream's property-name escaping, undone: `__dash__` → `-`, `__namespace__` → `namespace`... */
export function unescapeProperty(name: string): string {
  const keyword = /^__([a-z]+)__$/.exec(name);
  if (keyword && KEYWORDS.has(keyword[1])) return keyword[1];
  return name.replace(/__(underscores|dot|dash|slash)__/g, (_, word: string) => ({ underscores: '__', dot: '.', dash: '-', slash: '/' })[word]!);
}

/** `a.b.c` as a name when the expression is only identifiers and selections. */
function qualifiedName(expr: Expr | undefined): string | undefined {
  if (expr?.exprKind.case === 'identExpr') return expr.exprKind.value.name;
  if (expr?.exprKind.case === 'selectExpr' && !expr.exprKind.value.testOnly) {
    const operand = qualifiedName(expr.exprKind.value.operand);
    return operand === undefined ? undefined : `${operand}.${expr.exprKind.value.field}`;
  }
  return undefined;
}

class Checker {
  private readonly errors: { offset: number; message: string }[] = [];
  private readonly scopes: Set<string>[] = [];
  private nextId: bigint;
  private readonly tickTemplate = parse(`${ITERATION_TICK}(x)`).expr;

  constructor(private readonly text: string, private readonly parsed: ParsedExpr, private readonly scope: CompileScope) {
    this.nextId = 1n + [...Object.keys(parsed.sourceInfo?.positions ?? {})].reduce((max, id) => (BigInt(id) > max ? BigInt(id) : max), 0n);
  }

  check(): string[] {
    this.visit(this.parsed.expr);
    const errors = this.errors.sort((a, b) => a.offset - b.offset);
    // A chain on `authorizer` would add an error per method: the first says all there is to say.
    const authorizer = errors.find((e) => e.message.includes("'authorizer'"));
    return (authorizer ? [authorizer] : errors).map((e) => located(this.text, e.offset, e.message));
  }

  private fail(expr: Expr, message: string): void {
    this.errors.push({ offset: this.parsed.sourceInfo?.positions[String(expr.id)] ?? 0, message });
  }

  private declared(name: string): boolean {
    return this.scopes.some((s) => s.has(name)) || (VARIABLE_NAMES as readonly string[]).includes(name) || TYPE_NAMES.has(name);
  }

  private visit(expr: Expr | undefined): void {
    if (!expr) return;
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'identExpr':
        if (kind.value.name === 'authorizer') this.fail(expr, "undeclared reference to 'authorizer': authorization checks are not supported by this webhook");
        else if (!this.declared(kind.value.name)) this.fail(expr, `undeclared reference to '${kind.value.name}' (in container '')`);
        return;
      case 'selectExpr': {
        kind.value.field = unescapeProperty(kind.value.field);
        const operand = kind.value.operand;
        if (operand?.exprKind.case === 'identExpr' && operand.exprKind.value.name === 'variables' && !this.declared('variables.') && !this.scope.variables.has(kind.value.field)) {
          this.fail(expr, `undefined field '${kind.value.field}'`);
        }
        this.visit(operand);
        return;
      }
      case 'callExpr': {
        const qualified = kind.value.target && qualifiedName(kind.value.target);
        if (qualified !== undefined && FUNCTION_NAMES.has(`${qualified}.${kind.value.function}`)) {
          kind.value.args.forEach((a) => this.visit(a));
          return;
        }
        if (!FUNCTION_NAMES.has(kind.value.function) && !kind.value.function.startsWith('_') && !kind.value.function.startsWith('@')) {
          this.fail(expr, `undeclared reference to '${kind.value.function}' (in container '')`);
        }
        this.visit(kind.value.target);
        kind.value.args.forEach((a) => this.visit(a));
        return;
      }
      case 'listExpr':
        kind.value.elements.forEach((e) => this.visit(e));
        return;
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') this.visit(entry.keyKind.value);
          this.visit(entry.value);
        }
        return;
      case 'comprehensionExpr': {
        const c = kind.value;
        this.visit(c.iterRange);
        this.visit(c.accuInit);
        this.scopes.push(new Set([c.iterVar, c.accuVar]));
        this.visit(c.loopCondition);
        this.visit(c.loopStep);
        this.scopes.pop();
        this.scopes.push(new Set([c.accuVar]));
        this.visit(c.result);
        this.scopes.pop();
        c.loopCondition = this.tick(c.loopCondition);
        return;
      }
      default:
        return;
    }
  }

  /** `cond` wrapped in the per-iteration charge, which returns it unchanged. */
  private tick(condition: Expr | undefined): Expr | undefined {
    if (!condition) return condition;
    const call = structuredClone(this.tickTemplate);
    call.id = this.nextId++;
    if (call.exprKind.case === 'callExpr') call.exprKind.value.args = [condition];
    return call;
  }
}

function parseOrThrow(text: string): ParsedExpr {
  try {
    return parse(text);
  } catch (error) {
    const e = error as Error & { location?: { start?: { offset?: number } } };
    const offset = e.location?.start?.offset ?? 0;
    const message = e.message.replace(/^<input>:\d+:\d+: /, '');
    throw new CelCompileError(located(text, offset, `Syntax error: ${message}`));
  }
}

export function compileExpression(text: string, scope: CompileScope): CompiledExpression {
  if (text.trim() === '') throw new CelCompileError('expression must not be empty');
  const parsed = parseOrThrow(text);
  const errors = new Checker(text, parsed, scope).check();
  if (errors.length > 0) throw new CelCompileError(errors.join('\n'));
  const program = plan(policyEnv, parsed) as (bindings: Record<string, unknown>) => unknown;
  return {
    text,
    evaluate(bindings, budget) {
      const meter = new CostMeter(Math.min(budget, PER_EXPRESSION_COST_LIMIT));
      const result = metered(meter, () => program(bindings as Record<string, unknown>));
      if (meter.exceeded) {
        return budget < PER_EXPRESSION_COST_LIMIT
          ? { error: 'validation failed due to running out of cost budget, no further validation rules will be run', cost: meter.used, outOfBudget: true }
          : { error: COST_LIMIT_EXCEEDED, cost: meter.used };
      }
      if (isCelError(result)) return { error: result.message, cost: meter.used };
      return { value: result as CelValue, cost: meter.used };
    },
  };
}
