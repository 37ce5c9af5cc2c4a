// Compiles one CEL expression of a policy, once, at start: parse (parser.ts), check as cel-go's
// compiler would for the apiserver (checker.ts: undeclared references, overloads, result types,
// the literal validators), then build the closure that evaluates it (interpreter.ts). Errors read
// like cel-go's (`ERROR: <input>:1:7: ...` and a caret line).
import { isCelError } from '@bufbuild/cel';
import type { CelValue } from '@bufbuild/cel';
import {
  COST_LIMIT_EXCEEDED,
  CostMeter,
  PER_EXPRESSION_COST_LIMIT,
  VARIABLE_NAMES,
  policyEnvironment,
} from './cel-env.js';
import type { EnvironmentVersion } from './cel-env.js';
import { checkExpression } from './checker.js';
import type { ExpressionRole, Type } from './checker.js';
import { Compiler } from './interpreter.js';
import { authorizerDeclared } from './library/authorizer.js';
import { CelSyntaxError, parseCel, RESERVED } from './parser.js';
import { ProgramPlanningError, planProgram } from './planner.js';

export class CelCompileError extends Error {
  override readonly name = 'CelCompileError';
  /** The apiserver's field error detail: `compilation failed: ERROR: ...`, or the result type's. */
  readonly detail: string;
  constructor(
    message: string,
    detail?: string,
    /** cel's ErrorTypeInternal (program instantiation), which the apiserver reports as an internal error. */
    readonly internal = false,
  ) {
    super(message);
    this.detail = detail ?? `compilation failed: ${message}`;
  }

  /**
   * The body of the apiserver's field error for the expression `text` (convertCELErrorToValidationError):
   * `Invalid value: "<text>": <detail>`, or `Internal error: <detail>` for a program that cannot be planned.
   */
  fieldError(text: string): string {
    return this.internal ? `Internal error: ${this.detail}` : `Invalid value: ${JSON.stringify(text)}: ${this.detail}`;
  }
}

export type EvalOutcome =
  | { readonly value: CelValue; readonly cost: number }
  | { readonly error: string; readonly cost: number; readonly outOfBudget?: boolean };

export interface CompiledExpression {
  readonly text: string;
  /** The result type the checker inferred (a variable's type for the expressions after it). */
  readonly type: Type;
  /** Evaluates with these bindings, charging at most `budget` (cel-go's per-call limit at most). */
  evaluate(bindings: Readonly<Record<string, unknown>>, budget: number): EvalOutcome;
}

export interface CompileScope {
  /** `variables.<name>` this expression may use (those declared before it), with their types when known. */
  readonly variables: ReadonlySet<string> | ReadonlyMap<string, Type>;
  /** What the expression is for: decides the result type the apiserver requires. */
  readonly role?: ExpressionRole;
  /** False when the policy has no paramKind: `params` is then undeclared. */
  readonly params?: boolean;
  /** The apiserver version whose environment compiles the expression (default: the newest). */
  readonly environment?: EnvironmentVersion;
  /** A MutatingAdmissionPolicy mutation: JSONPatch and Object types, `jsonpatch.escapeKey`. */
  readonly patchTypes?: boolean;
}

/** cel-go's caret display: the line, then dots up to the column. */
export function located(text: string, offset: number, message: string): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = [...text.slice(lineStart, offset)].length;
  const source = text.slice(lineStart).split('\n')[0];
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${source}\n | ${'.'.repeat(column)}^`;
}

/** What upstream escapes in property names: the literals, `in`, and CEL's reserved words. */
const KEYWORDS = new Set(['true', 'false', 'null', 'in', ...RESERVED]);

const ESCAPED: Readonly<Record<string, string>> = { underscores: '__', dot: '.', dash: '-', slash: '/' };

/** Upstream's property-name escaping, undone: `__dash__` → `-`, `__namespace__` → `namespace`... */
export function unescapeProperty(name: string): string {
  const keyword = /^__([a-z]+)__$/.exec(name);
  if (keyword && KEYWORDS.has(keyword[1])) return keyword[1];
  return name.replace(/__(underscores|dot|dash|slash)__/g, (escaped, word: string) => ESCAPED[word] ?? escaped);
}

export function compileExpression(text: string, scope: CompileScope): CompiledExpression {
  if (text.trim() === '') throw new CelCompileError('expression must not be empty');
  const env = policyEnvironment(scope.environment);
  let tree;
  try {
    tree = parseCel(text, env.parse, unescapeProperty);
  } catch (error) {
    if (!(error instanceof CelSyntaxError)) throw error;
    throw new CelCompileError(located(text, error.pos, error.message));
  }
  const variables = new Set<string>(VARIABLE_NAMES);
  if (scope.params === false) variables.delete('params');
  const checked = checkExpression(tree, {
    env,
    variables,
    declared: scope.variables,
    role: scope.role ?? 'any',
    patchTypes: scope.patchTypes,
    authorizer: authorizerDeclared(),
  });
  if (checked.errors.length > 0)
    throw new CelCompileError(checked.errors.map((e) => located(text, e.pos, e.message)).join('\n'));
  if (checked.typeError) throw new CelCompileError(checked.typeError, checked.typeError);
  let constants;
  try {
    constants = planProgram(tree, env, variables, scope.patchTypes);
  } catch (error) {
    if (!(error instanceof ProgramPlanningError)) throw error;
    throw new CelCompileError(error.message, `program instantiation failed: ${error.message}`, true);
  }
  const program = new Compiler(env, variables, scope.patchTypes, constants).program(tree);
  return {
    text,
    type: checked.type,
    evaluate(bindings, budget) {
      const meter = new CostMeter(Math.min(budget, PER_EXPRESSION_COST_LIMIT));
      const result = env.run(meter, () => program(bindings));
      if (meter.exceeded) {
        return budget < PER_EXPRESSION_COST_LIMIT
          ? {
              error: 'validation failed due to running out of cost budget, no further validation rules will be run',
              cost: meter.used,
              outOfBudget: true,
            }
          : { error: COST_LIMIT_EXCEEDED, cost: meter.used };
      }
      if (isCelError(result)) return { error: result.message, cost: meter.used };
      return { value: result as CelValue, cost: meter.used };
    },
  };
}
