// What cel-go does between checking an expression and running it: env.Program plans the checked
// tree, and Kubernetes' base environment plans with cel.OptOptimize and its regex optimizations
// (k8s.io/apiserver/pkg/cel/environment/base.go, library/regex.go). Planning evaluates what is
// constant, so a constant that must fail fails when the policy is created, with
// `program instantiation failed: <error>` (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go):
//
// - interpreter/decorators.go decOptimize: a type conversion (`int`, `uint`, `double`, `bool`,
//   `bytes`, `string`, `timestamp`, `duration`, `dyn`, `type`) of a constant is evaluated, and its
//   error is the planning error (`int(1e99)`, `bool('maybe')`, `string(b'\xff')`); list and map
//   literals of constants become constants, so `int(dyn([1]))` folds too.
// - decRegexOptimizer: `find`, `findAll` and `matches` compile a constant pattern (`find(')')`).
// - planner.go planCallIndex: a constant index must be a string, int, uint, bool or double
//   (`m[dyn(null)]`: `invalid qualifier type: types.Null`).
//
// The folded values are kept: the interpreter evaluates a folded node as its constant, as cel-go's
// program does, so this work is done once per policy, never per request.
import { celUint, isCelError, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import type { CelValue } from '@bufbuild/cel';
import { CostMeter } from './cel-env.js';
import type { PolicyEnvironment } from './cel-env.js';
import { Compiler } from './interpreter.js';
import { compilePattern } from './library/regex.js';
import type { Node } from './parser.js';

/** A failure cel-go reports from env.Program, before any evaluation. */
export class ProgramPlanningError extends Error {
  override readonly name = 'ProgramPlanningError';
}

/** overloads.IsTypeConversionFunction. */
const CONVERSIONS = new Set([
  'int',
  'uint',
  'double',
  'bool',
  'bytes',
  'string',
  'timestamp',
  'duration',
  'dyn',
  'type',
]);
/** The functions with a regex optimization, the pattern being their second argument (receiver first). */
const REGEX_FUNCTIONS = new Set(['find', 'findAll', 'matches']);

/** Go's %T of a constant that cannot qualify (attributes.go newQualifier's error). */
function goTypeName(value: unknown): string {
  if (value === null) return 'types.Null';
  if (value instanceof Uint8Array) return 'types.Bytes';
  if (isCelList(value)) return '*types.baseList';
  if (isCelMap(value)) return '*types.baseMap';
  const name = (value as { desc?: { typeName?: string } }).desc?.typeName;
  if (name === 'google.protobuf.Timestamp') return 'types.Timestamp';
  if (name === 'google.protobuf.Duration') return 'types.Duration';
  return '*types.Type';
}

const isQualifier = (value: unknown) =>
  typeof value === 'string' ||
  typeof value === 'bigint' ||
  typeof value === 'boolean' ||
  typeof value === 'number' ||
  isCelUint(value);

type Folded = { readonly value: unknown } | undefined;

class Planner {
  readonly constants = new Map<Node, unknown>();
  private readonly scopes: ReadonlySet<string>[] = [];

  constructor(
    private readonly env: PolicyEnvironment,
    private readonly variables: ReadonlySet<string>,
    private readonly patchTypes: boolean | undefined,
  ) {}

  private isVariable(name: string): boolean {
    return this.variables.has(name) || this.scopes.some((s) => s.has(name));
  }

  /** The node's value computed now, as cel-go's evalConst would hold it. */
  private evaluate(node: Node): unknown {
    const program = new Compiler(this.env, new Set(), this.patchTypes).program(node);
    return this.env.run(new CostMeter(Number.POSITIVE_INFINITY), () => program({}));
  }

  private constant(node: Node, value: unknown): Folded {
    this.constants.set(node, value);
    return { value };
  }

  /** Plans the node's children first, as cel-go's planner does; the node's constant value if it has one. */
  plan(node: Node): Folded {
    switch (node.kind) {
      case 'literal':
        return { value: node.value.type === 'uint' ? celUint(node.value.value) : node.value.value };
      case 'ident':
        if (!node.absolute && this.isVariable(node.name)) return undefined;
        return this.typeName(node.name);
      case 'select': {
        const name = qualifiedName(node);
        if (name !== undefined && !this.isVariable(name.split('.')[0])) {
          const type = this.typeName(name);
          if (type) return type;
        }
        this.plan(node.operand);
        return undefined;
      }
      case 'index': {
        this.plan(node.operand);
        const index = this.plan(node.index);
        if (index && !isQualifier(index.value))
          throw new ProgramPlanningError(`invalid qualifier type: ${goTypeName(index.value)}`);
        return undefined;
      }
      case 'list': {
        const elements = node.elements.map((e) => this.plan(e));
        if (elements.every((e) => e !== undefined) && !node.optional.some(Boolean))
          return this.constant(node, this.evaluate(node));
        return undefined;
      }
      case 'map': {
        let constant = true;
        for (const entry of node.entries) {
          const key = this.plan(entry.key);
          const value = this.plan(entry.value);
          constant &&= key !== undefined && value !== undefined && !entry.optional;
        }
        return constant ? this.constant(node, this.evaluate(node)) : undefined;
      }
      case 'object':
        for (const field of node.fields) this.plan(field.value);
        return undefined;
      case 'comprehension':
        this.plan(node.range);
        this.scopes.push(new Set(node.vars));
        for (const arg of node.args) this.plan(arg);
        this.scopes.pop();
        return undefined;
      case 'call':
        return this.call(node);
    }
  }

  private typeName(name: string): Folded {
    const value = this.evaluate({ kind: 'ident', pos: 0, name });
    return isCelError(value) ? undefined : { value };
  }

  private call(node: Extract<Node, { kind: 'call' }>): Folded {
    const namespace = node.target && qualifiedName(node.target);
    const namespaced =
      namespace !== undefined &&
      !this.isVariable(namespace.split('.')[0]) &&
      this.env.find(`${namespace}.${node.fn}`) !== undefined;
    const operands = namespaced || !node.target ? node.args : [node.target, ...node.args];
    const planned = operands.map((o) => this.plan(o));
    if (namespaced) return undefined;
    if (CONVERSIONS.has(node.fn) && planned.length === 1 && planned[0] !== undefined) {
      const value = this.evaluate(node);
      if (isCelError(value)) throw new ProgramPlanningError(value.message);
      return this.constant(node, value);
    }
    const pattern = planned[1]?.value;
    if (REGEX_FUNCTIONS.has(node.fn) && typeof pattern === 'string') {
      try {
        compilePattern(pattern);
      } catch (error) {
        throw new ProgramPlanningError((error as Error).message);
      }
    }
    return undefined;
  }
}

function qualifiedName(node: Node): string | undefined {
  if (node.kind === 'ident') return node.absolute ? undefined : node.name;
  if (node.kind === 'select' && !node.optional && !node.test) {
    const operand = qualifiedName(node.operand);
    return operand === undefined ? undefined : `${operand}.${node.field}`;
  }
  return undefined;
}

/**
 * Plans a checked expression as cel-go's env.Program does; throws ProgramPlanningError where the
 * apiserver answers `program instantiation failed`. Returns the nodes folded to constants.
 */
export function planProgram(
  tree: Node,
  env: PolicyEnvironment,
  variables: ReadonlySet<string>,
  patchTypes?: boolean,
): ReadonlyMap<Node, unknown> {
  const planner = new Planner(env, variables, patchTypes);
  planner.plan(tree);
  return planner.constants as ReadonlyMap<Node, CelValue>;
}
