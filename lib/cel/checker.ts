// The checks cel-go's compiler makes when the apiserver creates a policy, on the parsed tree:
// undeclared references, overload resolution against the environment's declarations (so
// `42.charAt(2)` and `quantity('1').sign()` are refused, `sign` being a global function), the
// typed `request` and `namespaceObject` variables, the result type each field requires
// (`must evaluate to bool but got dyn`), and the validators Kubernetes enables: homogeneous list and
// map literals, and duration, timestamp and regex literals that must parse.
//
// Types are inferred bottom-up; `object`, `oldObject` and `params` are dyn (no OpenAPI schemas), and
// dyn is accepted wherever a type is expected, as in cel-go.
import { celUint, isCelError } from '@bufbuild/cel';
import type { CelFunc, CelType, CelValue } from '@bufbuild/cel';
import { RE2JS } from '@bufbuild/re2';
import { CostMeter } from './cel-env.js';
import type { PolicyEnvironment } from './cel-env.js';
import { JSONPATCH_FUNCTIONS } from './library/jsonpatch.js';
import type { Node } from './parser.js';

export type Type =
  /**
   * `param`: a type parameter cel-go has not bound yet (the element type of `[]` and `{}`, the value
   * type of `optional.none()`), which takes its type from the siblings it is joined with.
   */
  | { readonly kind: 'dyn'; readonly param?: true }
  | { readonly kind: 'prim'; readonly name: string }
  | { readonly kind: 'list'; readonly elem: Type }
  | { readonly kind: 'map'; readonly key: Type; readonly value: Type }
  | { readonly kind: 'opt'; readonly inner: Type }
  | { readonly kind: 'type'; readonly of: Type }
  | {
      readonly kind: 'object';
      readonly name: string;
      readonly fields: Readonly<Record<string, Type>>;
      /** Any field may be set and read, as dyn: MAP's `Object...` types (no schemas here). */
      readonly open?: boolean;
    };

export type ExpressionRole =
  | 'validation'
  | 'messageExpression'
  | 'matchCondition'
  | 'auditAnnotation'
  | 'variable'
  | 'jsonPatch'
  | 'applyConfiguration'
  | 'any';

export const DYN: Type = { kind: 'dyn' };
/** An unbound type parameter: dyn wherever it stays unbound. */
const PARAM: Type = { kind: 'dyn', param: true };
const isParam = (t: Type) => t.kind === 'dyn' && t.param === true;
const prim = (name: string): Type => ({ kind: 'prim', name });
const INT = prim('int');
const UINT = prim('uint');
const DOUBLE = prim('double');
const BOOL = prim('bool');
const STRING = prim('string');
const BYTES = prim('bytes');
const NULL = prim('null_type');
const TIMESTAMP = prim('google.protobuf.Timestamp');
const list = (elem: Type): Type => ({ kind: 'list', elem });
const map = (key: Type, value: Type): Type => ({ kind: 'map', key, value });
const object = (name: string, fields: Record<string, Type>): Type => ({ kind: 'object', name, fields });

/** Upstream's BuildRequestType (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go). */
const GVK = object('kubernetes.GroupVersionKind', { group: STRING, version: STRING, kind: STRING });
const GVR = object('kubernetes.GroupVersionResource', { group: STRING, version: STRING, resource: STRING });
const REQUEST = object('kubernetes.AdmissionRequest', {
  kind: GVK,
  resource: GVR,
  subResource: STRING,
  requestKind: GVK,
  requestResource: GVR,
  requestSubResource: STRING,
  name: STRING,
  namespace: STRING,
  operation: STRING,
  userInfo: object('kubernetes.UserInfo', {
    username: STRING,
    uid: STRING,
    groups: list(STRING),
    extra: map(STRING, list(STRING)),
  }),
  dryRun: BOOL,
  options: DYN,
});
/** Upstream's BuildNamespaceType. */
const NAMESPACE = object('kubernetes.Namespace', {
  metadata: object('kubernetes.NamespaceMetadata', {
    name: STRING,
    generateName: STRING,
    namespace: STRING,
    labels: map(STRING, STRING),
    annotations: map(STRING, STRING),
    UID: STRING,
    creationTimestamp: TIMESTAMP,
    deletionGracePeriodSeconds: INT,
    deletionTimestamp: TIMESTAMP,
    generation: INT,
    resourceVersion: STRING,
    finalizers: list(STRING),
  }),
  spec: object('kubernetes.NamespaceSpec', { finalizers: list(STRING) }),
  status: object('kubernetes.NamespaceStatus', {
    conditions: list(
      object('kubernetes.NamespaceCondition', {
        status: STRING,
        type: STRING,
        lastTransitionTime: TIMESTAMP,
        message: STRING,
        reason: STRING,
      }),
    ),
    phase: STRING,
  }),
});

/** upstream's JSONPatch type (k8s.io/apiserver/pkg/cel/mutation/jsonpatch.go). */
export const JSONPATCH_TYPE = object('JSONPatch', { op: STRING, path: STRING, from: STRING, value: DYN });
/** The root of an apply configuration: `Object{spec: Object.spec{...}}`. */
const APPLY_CONFIGURATION_TYPE: Type = { kind: 'object', name: 'Object', fields: {}, open: true };

/** A type name MAP's dynamic type resolver knows: `Object` and every `Object.<field path>`. */
export const isObjectTypeName = (name: string): boolean => name === 'Object' || name.startsWith('Object.');

export const VARIABLE_TYPES: Readonly<Record<string, Type>> = {
  object: DYN,
  oldObject: DYN,
  params: DYN,
  request: REQUEST,
  namespaceObject: NAMESPACE,
  variables: DYN,
  authorizer: DYN,
};

export function formatType(t: Type): string {
  switch (t.kind) {
    case 'dyn':
      return 'dyn';
    case 'prim':
    case 'object':
      return t.name;
    case 'list':
      return `list(${formatType(t.elem)})`;
    case 'map':
      return `map(${formatType(t.key)}, ${formatType(t.value)})`;
    case 'opt':
      return `optional_type(${formatType(t.inner)})`;
    case 'type':
      return `type(${formatType(t.of)})`;
  }
}

function fromCel(t: CelType): Type {
  switch (t.kind) {
    case 'scalar':
      if (t.scalar === 'dyn') return DYN;
      if (t.scalar === 'type') return { kind: 'type', of: DYN };
      return prim(t.scalar);
    case 'list':
      return list(fromCel(t.element));
    case 'map':
      return map(fromCel(t.key), fromCel(t.value));
    case 'object':
      return t.name === 'optional_type' ? { kind: 'opt', inner: DYN } : prim(t.name);
    default:
      return DYN;
  }
}

/** Whether a value of type `arg` may be passed where `param` is declared (dyn both ways). */
function assignable(param: Type, arg: Type): boolean {
  if (param.kind === 'dyn' || arg.kind === 'dyn') return true;
  switch (param.kind) {
    case 'prim':
      return (
        (arg.kind === 'prim' && arg.name === param.name) ||
        (param.name === 'null_type' && arg.kind === 'prim' && arg.name === 'null_type')
      );
    case 'list':
      return arg.kind === 'list' && assignable(param.elem, arg.elem);
    case 'map':
      return (
        (arg.kind === 'map' && assignable(param.key, arg.key) && assignable(param.value, arg.value)) ||
        (arg.kind === 'object' && assignable(param.key, STRING))
      );
    case 'opt':
      return arg.kind === 'opt' && assignable(param.inner, arg.inner);
    case 'type':
      return arg.kind === 'type';
    case 'object':
      return arg.kind === 'object' && arg.name === param.name;
  }
}

/** cel-go's IsEquivalentType once type parameters are substituted: an unbound one fits anything. */
function equivalent(a: Type, b: Type): boolean {
  if (isParam(a) || isParam(b)) return true;
  if (a.kind === 'list' && b.kind === 'list') return equivalent(a.elem, b.elem);
  if (a.kind === 'map' && b.kind === 'map') return equivalent(a.key, b.key) && equivalent(a.value, b.value);
  if (a.kind === 'opt' && b.kind === 'opt') return equivalent(a.inner, b.inner);
  return formatType(a) === formatType(b);
}

/** The type with its unbound parameters substituted by dyn, as cel-go reports a checked type. */
function settled(t: Type): Type {
  switch (t.kind) {
    case 'dyn':
      return t.param ? DYN : t;
    case 'list':
      return list(settled(t.elem));
    case 'map':
      return map(settled(t.key), settled(t.value));
    case 'opt':
      return { kind: 'opt', inner: settled(t.inner) };
    default:
      return t;
  }
}

const isDyn = (t: Type) => t.kind === 'dyn';

/** The more specific of two types a value may have (dyn when they disagree). */
function join(a: Type, b: Type): Type {
  if (isParam(a)) return b;
  if (isParam(b)) return a;
  if (formatType(a) === formatType(b)) return a;
  if (a.kind === 'list' && b.kind === 'list') return list(join(a.elem, b.elem));
  if (a.kind === 'map' && b.kind === 'map') return map(join(a.key, b.key), join(a.value, b.value));
  if (a.kind === 'opt' && b.kind === 'opt') return { kind: 'opt', inner: join(a.inner, b.inner) };
  return DYN;
}

export interface CheckContext {
  readonly env: PolicyEnvironment;
  /** Root variables in scope (without `params` when the policy has no paramKind). */
  readonly variables: ReadonlySet<string>;
  /** `variables.<name>` declared before this expression, with their result types when known. */
  readonly declared: ReadonlySet<string> | ReadonlyMap<string, Type>;
  readonly role: ExpressionRole;
  /** A mutation of a MutatingAdmissionPolicy: JSONPatch, Object types and the jsonpatch library. */
  readonly patchTypes?: boolean;
  /** `authorizer` is declared (an apiserver's authorizer is installed: library/authorizer.ts). */
  readonly authorizer?: boolean;
}

export interface CheckError {
  readonly pos: number;
  readonly message: string;
}

const RETURN_TYPES: Record<ExpressionRole, readonly Type[] | undefined> = {
  validation: [BOOL],
  matchCondition: [BOOL],
  messageExpression: [STRING],
  auditAnnotation: [STRING, NULL],
  variable: undefined,
  // Stricter than nothing, looser than cel-go: a list(dyn) or dyn result is checked when evaluated.
  jsonPatch: [list(JSONPATCH_TYPE), list(DYN), DYN],
  applyConfiguration: [APPLY_CONFIGURATION_TYPE, DYN],
  any: undefined,
};

interface Overloads {
  readonly global: readonly CelFunc[];
  readonly member: readonly CelFunc[];
}

const overloadCache = new WeakMap<PolicyEnvironment, Map<string, Overloads>>();

function overloadsOf(env: PolicyEnvironment, name: string): Overloads | undefined {
  let cache = overloadCache.get(env);
  if (!cache) {
    cache = new Map();
    for (const f of env.declarations) {
      const entry = cache.get(f.name) ?? { global: [], member: [] };
      (f.target ? (entry.member as CelFunc[]) : (entry.global as CelFunc[])).push(f);
      cache.set(f.name, entry);
    }
    overloadCache.set(env, cache);
  }
  return cache.get(name);
}

const OPERATOR_DISPLAY = new Set([
  '_+_',
  '_-_',
  '_*_',
  '_/_',
  '_%_',
  '_<_',
  '_<=_',
  '_>_',
  '_>=_',
  '_==_',
  '_!=_',
  '!_',
  '-_',
  '@in',
  '_&&_',
  '_||_',
  '_?_:_',
  '_[_]',
]);

const STRING_CLAUSE =
  'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps';
const HEX_CLAUSE = 'only integers, byte buffers, and strings can be formatted as hex';
const STRING_KINDS = [
  'list',
  'map',
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'google.protobuf.Timestamp',
  'bytes',
  'google.protobuf.Duration',
  'type',
  'null_type',
];

/** cel-go's Type.TypeName(): the kind's name for parameterized types (`list`, not `list(int)`). */
function kindOf(t: Type): string {
  switch (t.kind) {
    case 'list':
    case 'map':
    case 'dyn':
    case 'type':
      return t.kind;
    case 'opt':
      return 'optional_type';
    default:
      return t.name;
  }
}

const agree = (a: Type, b: Type) => assignable(a, b) || assignable(b, a);
const elementOf = (t: Type | undefined): Type => (t?.kind === 'list' ? t.elem : DYN);

/**
 * The overloads declared with a type parameter, which the declarations here hold as dyn: lists.go's
 * `list(A).indexOf(A)` and cel-go's `sets.contains(list(T), list(T))` need their element types to
 * agree (cel-go binds A or T to the first and checks the second against it).
 */
function typeParametersAgree(name: string, target: Type | undefined, args: readonly Type[]): boolean {
  switch (name) {
    case 'indexOf':
    case 'lastIndexOf':
      return target?.kind !== 'list' || args.length !== 1 || agree(target.elem, args[0]);
    case 'sets.contains':
    case 'sets.equivalent':
    case 'sets.intersects':
      return agree(elementOf(args[0]), elementOf(args[1]));
    default:
      return true;
  }
}

class Checker {
  readonly errors: CheckError[] = [];
  private readonly scopes: Map<string, Type>[] = [];
  private authorizerReported = false;

  constructor(private readonly ctx: CheckContext) {}

  fail(pos: number, message: string): Type {
    this.errors.push({ pos, message });
    return DYN;
  }

  private local(name: string): Type | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const t = this.scopes[i].get(name);
      if (t !== undefined) return t;
    }
    return undefined;
  }

  private isVariable(name: string): boolean {
    return this.local(name) !== undefined || this.ctx.variables.has(name);
  }

  private qualified(node: Node): string | undefined {
    if (node.kind === 'ident') return node.name;
    if (node.kind === 'select' && !node.optional && !node.test) {
      const operand = this.qualified(node.operand);
      return operand === undefined ? undefined : `${operand}.${node.field}`;
    }
    return undefined;
  }

  private typeConstant(name: string): Type | undefined {
    const builtin: Record<string, Type> = {
      int: INT,
      uint: UINT,
      double: DOUBLE,
      bool: BOOL,
      string: STRING,
      bytes: BYTES,
      null_type: NULL,
      type: { kind: 'type', of: DYN },
      dyn: DYN,
      list: list(DYN),
      map: map(DYN, DYN),
      'google.protobuf.Timestamp': TIMESTAMP,
      'google.protobuf.Duration': prim('google.protobuf.Duration'),
    };
    if (name in builtin) return { kind: 'type', of: builtin[name] };
    if (this.ctx.env.typeValue(name) !== undefined) return { kind: 'type', of: prim(name) };
    return undefined;
  }

  /** The type each node was given, as cel-go's type map keeps it. */
  readonly types = new Map<Node, Type>();

  /**
   * How many `format` calls enclose the node being checked. cel-go's homogeneous-literal validator
   * exempts a list or map literal with a `format` call among its ancestors, at any depth: the literal
   * `[1, 2, [3.0, 4]]` in `'%s'.format([[1, 2, [3.0, 4]]].size()])` is list(dyn) and accepted.
   */
  private formatCalls = 0;

  check(node: Node): Type {
    const format = node.kind === 'call' && node.fn === 'format';
    if (format) this.formatCalls++;
    try {
      const type = this.infer(node);
      this.types.set(node, type);
      return type;
    } finally {
      if (format) this.formatCalls--;
    }
  }

  private infer(node: Node): Type {
    switch (node.kind) {
      case 'literal':
        return node.value.type === 'null' ? NULL : prim(node.value.type);
      case 'ident': {
        const local = node.absolute ? undefined : this.local(node.name);
        if (local) return local;
        if (node.name === 'authorizer' && this.ctx.authorizer) return prim('kubernetes.authorization.Authorizer');
        if (node.name === 'authorizer') {
          if (!this.authorizerReported)
            this.fail(
              node.pos,
              "undeclared reference to 'authorizer': authorization checks are not supported by this webhook",
            );
          this.authorizerReported = true;
          return DYN;
        }
        if (this.ctx.variables.has(node.name)) return VARIABLE_TYPES[node.name] ?? DYN;
        const type = this.typeConstant(node.name);
        if (type) return type;
        const name = node.absolute ? `.${node.name}` : node.name;
        return this.fail(node.pos, `undeclared reference to '${name}' (in container '')`);
      }
      case 'select':
        return this.select(node);
      case 'index': {
        const operand = this.check(node.operand);
        const index = this.check(node.index);
        const inner = operand.kind === 'opt' ? operand.inner : operand;
        let result: Type;
        if (isDyn(inner)) result = DYN;
        else if (
          inner.kind === 'list' &&
          (isDyn(index) || (index.kind === 'prim' && ['int', 'uint', 'double'].includes(index.name)))
        )
          result = inner.elem;
        else if (inner.kind === 'map' && assignable(inner.key, index)) result = inner.value;
        else if (inner.kind === 'object' && assignable(STRING, index)) result = DYN;
        else
          return this.fail(
            node.pos,
            `found no matching overload for '${node.optional ? '_[?_]' : '_[_]'}' applied to '(${formatType(operand)}, ${formatType(index)})'`,
          );
        return node.optional || operand.kind === 'opt' ? { kind: 'opt', inner: result } : result;
      }
      case 'list': {
        const exempt = this.formatCalls > 0;
        let elem: Type | undefined;
        let mismatch = false;
        node.elements.forEach((e, i) => {
          let t = this.check(e);
          if (node.optional[i]) {
            if (t.kind === 'opt') t = t.inner;
            else if (!isDyn(t))
              this.fail(e.pos, `expected type 'optional_type(${formatType(t)})' but found '${formatType(t)}'`);
          }
          if (elem === undefined) elem = t;
          else {
            // cel-go types a mixed literal list(dyn); the homogeneous-literal validator then refuses it.
            if (!mismatch && !exempt && !equivalent(elem, t)) {
              mismatch = true;
              this.fail(e.pos, `expected type '${formatType(elem)}' but found '${formatType(t)}'`);
            }
            elem = join(elem, t);
          }
        });
        return list(elem ?? PARAM);
      }
      case 'map': {
        const exempt = this.formatCalls > 0;
        let key: Type | undefined;
        let value: Type | undefined;
        for (const entry of node.entries) {
          const k = this.check(entry.key);
          let v = this.check(entry.value);
          if (entry.optional) {
            if (v.kind === 'opt') v = v.inner;
            else if (!isDyn(v))
              this.fail(
                entry.value.pos,
                `expected type 'optional_type(${formatType(v)})' but found '${formatType(v)}'`,
              );
          }
          if (!(isDyn(k) || (k.kind === 'prim' && ['int', 'uint', 'bool', 'string'].includes(k.name))))
            this.fail(entry.key.pos, `unsupported map key type: ${formatType(k)}`);
          if (key === undefined || value === undefined) {
            key = k;
            value = v;
            continue;
          }
          if (!exempt && !equivalent(key, k))
            this.fail(entry.key.pos, `expected type '${formatType(key)}' but found '${formatType(k)}'`);
          if (!exempt && !equivalent(value, v))
            this.fail(entry.value.pos, `expected type '${formatType(value)}' but found '${formatType(v)}'`);
          key = join(key, k);
          value = join(value, v);
        }
        return map(key ?? PARAM, value ?? PARAM);
      }
      case 'object':
        return this.construction(node);
      case 'call':
        return this.call(node);
      case 'comprehension':
        return this.comprehension(node);
    }
  }

  /** `JSONPatch{...}` and `Object.<path>{...}`, the only messages a policy can construct. */
  private construction(node: Extract<Node, { kind: 'object' }>): Type {
    const fields = node.fields.map((f) => ({ field: f, type: this.check(f.value) }));
    if (!this.ctx.patchTypes || (node.type !== 'JSONPatch' && !isObjectTypeName(node.type)))
      return this.fail(node.pos, `undeclared reference to '${node.type}' (in container '')`);
    if (isObjectTypeName(node.type)) return { kind: 'object', name: node.type, fields: {}, open: true };
    const declared = (JSONPATCH_TYPE as Extract<Type, { kind: 'object' }>).fields;
    for (const { field, type } of fields) {
      const expected = declared[field.name];
      let provided = type;
      if (field.optional && provided.kind === 'opt') provided = provided.inner;
      if (expected === undefined) this.fail(field.value.pos, `undefined field '${field.name}'`);
      else if (!assignable(expected, provided))
        this.fail(
          field.value.pos,
          `expected type of field '${field.name}' is '${formatType(expected)}' but provided type is '${formatType(provided)}'`,
        );
    }
    return JSONPATCH_TYPE;
  }

  private select(node: Extract<Node, { kind: 'select' }>): Type {
    const name = this.qualified(node);
    if (name !== undefined && !this.isVariable(name.split('.')[0]) && name.split('.')[0] !== 'authorizer') {
      const type = this.typeConstant(name);
      if (type) return type;
    }
    const { operand: operandNode, field } = node;
    if (this.ctx.authorizer && name === 'authorizer.requestResource' && this.local('authorizer') === undefined)
      return prim('kubernetes.authorization.ResourceCheck');
    if (operandNode.kind === 'ident' && operandNode.name === 'variables' && this.local('variables') === undefined) {
      const declared = this.ctx.declared;
      if (!declared.has(field)) return this.fail(node.pos, `undefined field '${field}'`);
      const t = declared instanceof Map ? (declared.get(field) ?? DYN) : DYN;
      return node.test ? BOOL : node.optional ? { kind: 'opt', inner: t } : t;
    }
    const operand = this.check(operandNode);
    const inner = operand.kind === 'opt' ? operand.inner : operand;
    let result: Type;
    if (isDyn(inner)) result = DYN;
    else if (inner.kind === 'map') {
      if (!assignable(inner.key, STRING))
        return this.fail(node.pos, `type '${formatType(inner)}' does not support field selection`);
      result = inner.value;
    } else if (inner.kind === 'object' && inner.open) result = DYN;
    else if (inner.kind === 'object') {
      const t = inner.fields[field];
      if (t === undefined) return this.fail(node.pos, `undefined field '${field}'`);
      result = t;
    } else if (node.test) return this.fail(node.pos, `invalid argument to has() macro`);
    else return this.fail(node.pos, `type '${formatType(inner)}' does not support field selection`);
    if (node.test) return BOOL;
    return node.optional || operand.kind === 'opt' ? { kind: 'opt', inner: result } : result;
  }

  private signature(target: Type | undefined, args: readonly Type[]): string {
    return `${target ? `${formatType(target)}.` : ''}(${args.map(formatType).join(', ')})`;
  }

  private call(node: Extract<Node, { kind: 'call' }>): Type {
    const { fn, pos } = node;
    if (fn === '_&&_' || fn === '_||_') {
      const args = node.args.map((a) => this.check(a));
      if (args.some((t) => !isDyn(t) && !(t.kind === 'prim' && t.name === 'bool')))
        return this.fail(pos, `found no matching overload for '${fn}' applied to '${this.signature(undefined, args)}'`);
      return BOOL;
    }
    if (fn === '_?_:_') {
      const [c, a, b] = node.args.map((x) => this.check(x));
      if (!isDyn(c) && !(c.kind === 'prim' && c.name === 'bool'))
        return this.fail(
          pos,
          `found no matching overload for '_?_:_' applied to '${this.signature(undefined, [c, a, b])}'`,
        );
      if (isDyn(a) || isDyn(b)) return DYN;
      if (assignable(a, b) && assignable(b, a)) return join(a, b);
      if (a.kind === 'prim' && a.name === 'null_type') return b;
      if (b.kind === 'prim' && b.name === 'null_type') return a;
      return this.fail(
        pos,
        `found no matching overload for '_?_:_' applied to '${this.signature(undefined, [c, a, b])}'`,
      );
    }
    // A namespaced function: `optional.of(x)`, `sets.contains(a, b)`, `ip.isCanonical(s)`.
    if (node.target) {
      const name = this.qualified(node.target);
      if (name !== undefined && !this.isVariable(name.split('.')[0]) && overloadsOf(this.ctx.env, `${name}.${fn}`)) {
        return this.resolve(
          `${name}.${fn}`,
          pos,
          undefined,
          node.args.map((a) => this.check(a)),
          node,
        );
      }
    }
    const target = node.target && this.check(node.target);
    const args = node.args.map((a) => this.check(a));
    if (fn === 'format' && target?.kind === 'prim' && target.name === 'string') this.validateFormat(node);
    if (target && (fn === 'or' || fn === 'orValue') && args.length === 1) {
      if (isDyn(target)) return DYN;
      if (target.kind !== 'opt')
        return this.fail(pos, `found no matching overload for '${fn}' applied to '${this.signature(target, args)}'`);
      if (fn === 'or') {
        if (!isDyn(args[0]) && args[0].kind !== 'opt')
          return this.fail(pos, `found no matching overload for 'or' applied to '${this.signature(target, args)}'`);
        return join(target, args[0]);
      }
      return isDyn(args[0]) ? DYN : isDyn(target.inner) ? args[0] : join(target.inner, args[0]);
    }
    if (fn === '_==_' || fn === '_!=_') {
      // cel-go declares `_==_(A, A)`: `1 == 1.0` is refused (only `<` and friends compare across
      // numeric types); null beside a message type, an optional or dyn.
      const [a, b] = args;
      const isNull = (t: Type) => t.kind === 'prim' && t.name === 'null_type';
      const nullable = (t: Type) => t.kind === 'object' || t.kind === 'opt' || isDyn(t) || isNull(t);
      const nullPair = (isNull(a) && nullable(b)) || (isNull(b) && nullable(a));
      if (!nullPair && !(assignable(a, b) && assignable(b, a))) {
        return this.fail(pos, `found no matching overload for '${fn}' applied to '${this.signature(undefined, args)}'`);
      }
      return BOOL;
    }
    if (fn === 'optional.of' || fn === 'optional.ofNonZeroValue') return { kind: 'opt', inner: args[0] ?? DYN };
    return this.resolve(fn, pos, target, args, node);
  }

  /**
   * ext/formatting.go's stringFormatValidator: a literal format string applied to a list literal is
   * checked clause by clause against the arguments' types when the policy is created.
   */
  private validateFormat(node: Extract<Node, { kind: 'call' }>): void {
    const template =
      node.target?.kind === 'literal' && node.target.value.type === 'string' ? node.target.value.value : undefined;
    const argument = node.args.length === 1 ? node.args[0] : undefined;
    if (template === undefined || argument?.kind !== 'list') return;
    const elements = argument.elements;
    const typeOf = (n: Node) => this.types.get(n) ?? DYN;
    const clauseError = (at: Node, clause: string, kinds: readonly string[]): boolean => {
      const t = typeOf(at);
      if (isDyn(t) || kinds.includes(kindOf(t))) return false;
      this.fail(at.pos, `error during formatting: ${clause}, was given ${kindOf(t)}`);
      return true;
    };
    /** verifyString: a list or map literal is checked element by element. */
    const stringable = (at: Node): boolean => {
      if (clauseError(at, STRING_CLAUSE, STRING_KINDS)) return false;
      if (at.kind === 'list') return at.elements.every(stringable);
      if (at.kind === 'map') return at.entries.every((e) => stringable(e.key) && stringable(e.value));
      return true;
    };
    let requested = 0;
    for (let i = 0; i < template.length; i++) {
      if (template[i] !== '%') continue;
      if (template[i + 1] === '%') {
        i++;
        continue;
      }
      const index = requested++;
      if (i + 1 >= template.length) return void this.fail(node.pos, 'unexpected end of string');
      if (index >= elements.length) return void this.fail(node.pos, `index ${index} out of range`);
      let j = i + 1;
      if (template[j] === '.') {
        const digits = /^[0-9]*/.exec(template.slice(j + 1))?.[0] ?? '';
        j += 1 + digits.length;
        const precision = 'could not parse formatting clause: error while parsing precision';
        if (j >= template.length)
          return void this.fail(node.pos, `${precision}: could not find end of precision specifier`);
        if (digits === '')
          return void this.fail(
            node.pos,
            `${precision}: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax`,
          );
      }
      const verb = template[j];
      const arg = elements[index];
      const checks: Record<string, () => boolean> = {
        s: () => stringable(arg),
        d: () => !clauseError(arg, 'decimal clause can only be used on integers', ['int', 'uint']),
        f: () => !clauseError(arg, 'fixed-point clause can only be used on doubles', ['double', 'string']),
        e: () => !clauseError(arg, 'scientific clause can only be used on doubles', ['double', 'string']),
        b: () => !clauseError(arg, 'only integers and bools can be formatted as binary', ['int', 'uint', 'bool']),
        o: () => !clauseError(arg, 'octal clause can only be used on integers', ['int', 'uint']),
        x: () => !clauseError(arg, HEX_CLAUSE, ['int', 'uint', 'string', 'bytes']),
        X: () => !clauseError(arg, HEX_CLAUSE, ['int', 'uint', 'string', 'bytes']),
      };
      const check = checks[verb];
      if (!check)
        return void this.fail(node.pos, `could not parse formatting clause: unrecognized formatting clause "${verb}"`);
      if (!check()) return;
      i = j;
    }
    if (elements.length > requested)
      this.fail(
        node.pos,
        `too many arguments supplied to string.format (expected ${requested}, got ${elements.length})`,
      );
  }

  /** Overload resolution against the declarations; the result type when one result type fits. */
  private resolve(
    name: string,
    pos: number,
    target: Type | undefined,
    args: readonly Type[],
    node: Extract<Node, { kind: 'call' }>,
  ): Type {
    const overloads =
      JSONPATCH_FUNCTIONS.has(name) && !this.ctx.patchTypes ? undefined : overloadsOf(this.ctx.env, name);
    if (!overloads) {
      return this.fail(pos, `undeclared reference to '${name}' (in container '')`);
    }
    const candidates = (target ? overloads.member : overloads.global).filter(
      (f) =>
        f.arguments.length === args.length &&
        (!target || (f.target !== undefined && assignable(fromCel(f.target), target))) &&
        f.arguments.every((p, i) => assignable(fromCel(p), args[i])),
    );
    if (candidates.length === 0 || !typeParametersAgree(name, target, args)) {
      return this.fail(pos, `found no matching overload for '${name}' applied to '${this.signature(target, args)}'`);
    }
    this.literalValidators(name, node);
    let result: Type | undefined;
    for (const c of candidates) {
      const t = fromCel(c.result);
      result = result === undefined ? t : join(result, t);
    }
    if (result && result.kind === 'opt' && name === 'optional.of') return { kind: 'opt', inner: args[0] };
    if (name === 'optional.none') return { kind: 'opt', inner: PARAM };
    // cel-go's optional library (version 2): `list(T).first()`, `.last()` and the unwrapping of a
    // list of optionals.
    if ((name === 'first' || name === 'last') && target?.kind === 'list') return { kind: 'opt', inner: target.elem };
    if (name === 'unwrapOpt' || name === 'optional.unwrap') {
      const listed = name === 'unwrapOpt' ? target : args[0];
      const inner = listed?.kind === 'list' ? listed.elem : DYN;
      if (inner.kind === 'opt') return list(inner.inner);
      if (!isDyn(inner))
        return this.fail(pos, `found no matching overload for '${name}' applied to '${this.signature(target, args)}'`);
      return list(DYN);
    }
    if (name === 'value' && target?.kind === 'opt') return target.inner;
    if (name === 'validate' && target?.kind === 'prim' && target.name === 'kubernetes.NamedFormat')
      return { kind: 'opt', inner: list(STRING) };
    if (name === 'format.named') return { kind: 'opt', inner: prim('kubernetes.NamedFormat') };
    if (['distinct', 'reverse', 'sort', 'slice'].includes(name) && target?.kind === 'list') return target;
    if ((name === 'min' || name === 'max') && target?.kind === 'list') return target.elem;
    if (name === 'dyn') return DYN;
    if (name === 'type') return { kind: 'type', of: args[0] ?? DYN };
    if (
      result?.kind === 'list' &&
      isDyn(result.elem) &&
      name === '_+_' &&
      args[0]?.kind === 'list' &&
      args[1]?.kind === 'list'
    )
      return list(join(args[0].elem, args[1].elem));
    if (OPERATOR_DISPLAY.has(name) && isDyn(result ?? DYN)) return DYN;
    return result ?? DYN;
  }

  /** cel-go's duration, timestamp and regex literal validators (Kubernetes 1.29 on). */
  private literalValidators(name: string, node: Extract<Node, { kind: 'call' }>): void {
    if (name !== 'matches' && name !== 'duration' && name !== 'timestamp') return;
    // cel-go's formatValidator looks at the first argument of the call (the receiver is not one),
    // whatever the literal's type: `timestamp(253402300800)` is refused as `timestamp('x')` is.
    const literal = node.args[0];
    if (literal?.kind !== 'literal') return;
    const value = literal.value.type === 'uint' ? celUint(literal.value.value) : literal.value.value;
    if (name === 'matches') {
      try {
        if (typeof value === 'string') RE2JS.compile(value);
      } catch {
        this.fail(literal.pos, 'invalid matches argument');
      }
      return;
    }
    const group = this.ctx.env.find(name);
    const result = this.ctx.env.run(new CostMeter(Infinity), () => group?.call(0, undefined, [value as CelValue]));
    if (result === undefined || isCelError(result)) this.fail(literal.pos, `invalid ${name} argument`);
  }

  private comprehension(node: Extract<Node, { kind: 'comprehension' }>): Type {
    const range = this.check(node.range);
    const { macro } = node;
    if (macro === 'optMap' || macro === 'optFlatMap') {
      if (!isDyn(range) && range.kind !== 'opt')
        return this.fail(node.pos, `found no matching overload for '${macro}' applied to '${formatType(range)}'`);
      const inner = range.kind === 'opt' ? range.inner : DYN;
      this.scopes.push(new Map([[node.vars[0], inner]]));
      const body = this.check(node.args[0]);
      this.scopes.pop();
      if (macro === 'optMap') return { kind: 'opt', inner: body };
      if (!isDyn(body) && body.kind !== 'opt')
        return this.fail(
          node.args[0].pos,
          `found no matching overload for 'optFlatMap' applied to '${formatType(body)}'`,
        );
      return body;
    }
    if (macro === 'sortBy') {
      if (!isDyn(range) && range.kind !== 'list')
        return this.fail(node.pos, `found no matching overload for 'sortBy' applied to '${formatType(range)}'`);
      this.scopes.push(new Map([[node.vars[0], range.kind === 'list' ? range.elem : DYN]]));
      this.check(node.args[0]);
      this.scopes.pop();
      return range;
    }
    let first: Type = DYN;
    let second: Type = DYN;
    if (range.kind === 'list') {
      if (node.vars.length === 2) {
        first = INT;
        second = range.elem;
      } else first = range.elem;
    } else if (range.kind === 'map') {
      first = range.key;
      second = range.value;
    } else if (!isDyn(range)) {
      return this.fail(
        node.range.pos,
        `expression of type '${formatType(range)}' cannot be range of a comprehension (must be list, map, or dynamic)`,
      );
    }
    const scope = new Map<string, Type>([[node.vars[0], first]]);
    if (node.vars.length === 2) scope.set(node.vars[1], second);
    this.scopes.push(scope);
    const bodies = node.args.map((a) => this.check(a));
    this.scopes.pop();
    const isBool = (t: Type) => isDyn(t) || (t.kind === 'prim' && t.name === 'bool');
    const predicateOf = (i: number) => {
      if (!isBool(bodies[i]))
        this.fail(
          node.args[i].pos,
          `found no matching overload for '_&&_' applied to '(bool, ${formatType(bodies[i])})'`,
        );
    };
    switch (macro) {
      case 'all':
      case 'all2':
      case 'exists':
      case 'exists2':
      case 'exists_one':
      case 'existsOne2':
        predicateOf(0);
        return BOOL;
      case 'filter':
        predicateOf(0);
        return list(node.vars.length === 2 ? second : first);
      case 'map':
      case 'transformList':
        if (bodies.length === 2) predicateOf(0);
        return list(bodies[bodies.length - 1]);
      case 'transformMap':
        if (bodies.length === 2) predicateOf(0);
        return map(first, bodies[bodies.length - 1]);
      case 'transformMapEntry': {
        if (bodies.length === 2) predicateOf(0);
        const entry = bodies[bodies.length - 1];
        if (!isDyn(entry) && entry.kind !== 'map')
          return this.fail(
            node.args[node.args.length - 1].pos,
            `found no matching overload for 'transformMapEntry' applied to '${formatType(entry)}'`,
          );
        return entry.kind === 'map' ? entry : map(DYN, DYN);
      }
    }
  }
}

/** The errors cel-go's compiler would report, sorted by position, and the result type check. */
export function checkExpression(
  tree: Node,
  ctx: CheckContext,
): { errors: CheckError[]; type: Type; typeError?: string } {
  const checker = new Checker(ctx);
  const type = settled(checker.check(tree));
  const errors = checker.errors.sort((a, b) => a.pos - b.pos);
  if (errors.length > 0) return { errors, type };
  const expected = RETURN_TYPES[ctx.role];
  if (expected && !expected.some((t) => equivalent(t, type))) {
    // A mutation's result is named by its one declared type; the looser ones are ours (see RETURN_TYPES).
    const typeError =
      expected.length === 1 || ctx.role === 'jsonPatch' || ctx.role === 'applyConfiguration'
        ? `must evaluate to ${formatType(expected[0])} but got ${formatType(type)}`
        : `must evaluate to one of [${expected.map(formatType).join(' ')}] but got ${formatType(type)}`;
    return { errors, type, typeError };
  }
  return { errors, type };
}
