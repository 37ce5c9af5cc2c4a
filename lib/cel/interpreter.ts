// Turns a parsed expression (parser.ts) into a closure over its bindings. Values are
// @bufbuild/cel's (bigint ints, CelUint, CelList, CelMap, protobuf timestamps...), and every
// function call goes through its function registry (cel-env.ts), so the standard library and the
// Kubernetes libraries are shared; what is evaluated here is what cel-go's interpreter does itself:
// variables, field selection and indexing (with upstream's `no such key` errors), optional
// selection, `&&`/`||` absorbing errors, `?:`, list and map literals, and the comprehensions.
import {
  CelScalar,
  celError,
  celList,
  celMap,
  celUint,
  isCelError,
  isCelList,
  isCelMap,
  isCelUint,
  listType,
  mapType,
  objectType,
} from '@bufbuild/cel';
import { DurationSchema, TimestampSchema } from '@bufbuild/protobuf/wkt';
import type { CelValue } from '@bufbuild/cel';
import type { Node } from './parser.js';
import { NONE, isOptional, optionalOf, optionalValue } from './library/optional.js';

/** What the interpreter needs from the environment. */
export interface Runtime {
  /** The overloads of a function: undefined result when none applies. */
  find(name: string): { call(id: number, target: CelValue | undefined, args: CelValue[]): unknown } | undefined;
  /** A type name as a value (`int`, `net.IP`...), or undefined. */
  typeValue(name: string): CelValue | undefined;
  /** Charged once per comprehension iteration; false stops the evaluation (cost exceeded). */
  iterate(): boolean;
  readonly costError: string;
}

interface Frame {
  readonly bindings: Readonly<Record<string, unknown>>;
  readonly slots: unknown[];
  /**
   * The bindings as CEL values, converted on first use: asCel builds a new map of a plain object's
   * entries, which an expression that names `object` or `variables` ten times would otherwise do ten times.
   */
  readonly variables: unknown[];
}

type Eval = (frame: Frame) => unknown;

export type CelErr = ReturnType<typeof celError>;

/** Plain JSON (and Maps, such as the lazy `variables`) as CEL values; CEL values unchanged. */
export function asCel(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value === undefined ? null : value;
  if (Array.isArray(value)) return celList(value);
  if (value instanceof Map) return celMap(value);
  if (value.constructor === Object && !('$typeName' in value)) return celMap(new Map(Object.entries(value)));
  return value;
}

const err = (message: string, pos: number) => celError(message, pos);

/** cel-go's type name of a value in error messages. */
export function typeNameOf(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    default:
      break;
  }
  if (value === null) return 'null_type';
  if (value instanceof Uint8Array) return 'bytes';
  if (isCelUint(value)) return 'uint';
  if (isCelList(value)) return 'list';
  if (isCelMap(value)) return 'map';
  const name =
    (value as { desc?: { typeName?: string }; $typeName?: string }).desc?.typeName ??
    (value as { $typeName?: string }).$typeName;
  if (name === 'google.protobuf.Timestamp') return 'google.protobuf.Timestamp';
  if (name === 'google.protobuf.Duration') return 'google.protobuf.Duration';
  return name ?? 'type';
}

function keyText(key: unknown): string {
  if (isCelUint(key)) return String(key.value);
  return String(key);
}

/** @bufbuild/cel's wording of the standard library's errors, as cel-go words them. */
const UPSTREAM_MESSAGES: readonly [RegExp, string][] = [
  [/^u?int divide by zero$/, 'division by zero'],
  [/^u?int modulus by zero$/, 'modulus by zero'],
  [/^int overflow during .*$/, 'integer overflow'],
  [/^uint overflow during .*$/, 'unsigned integer overflow'],
  [/^index (-?\d+) out of bounds \[0, \d+\)$/, 'index out of range: $1'],
  // time.LoadLocation's error, which cel-go's timestamp getters return for an unknown zone.
  [/^Invalid time zone specified: (.*)$/, 'unknown time zone $1'],
  // String.ConvertToType: a text time.Parse accepts but outside years 1 to 9999, else any failure.
  [/^Failed to parse timestamp: .*must be from 0001-01-01.*$/, 'timestamp overflow'],
  [/^Failed to parse timestamp: .*$/, "type conversion error from 'string' to 'google.protobuf.Timestamp'"],
  [/^Failed to parse duration: .*$/, "type conversion error from 'string' to 'google.protobuf.Duration'"],
  [/^duration out of range$/, "type conversion error from 'string' to 'google.protobuf.Duration'"],
];

function upstreamError(error: CelErr, pos: number): CelErr {
  for (const [pattern, message] of UPSTREAM_MESSAGES)
    if (pattern.test(error.message)) return err(error.message.replace(pattern, message), pos);
  return error;
}

/** m.f / m[k] when present; undefined when absent; an error when the operand cannot be indexed. */
function lookup(operand: unknown, key: unknown, pos: number, select: boolean): unknown {
  if (isCelMap(operand)) {
    if (typeof key === 'number' && !Number.isInteger(key)) return undefined;
    if (key !== null && typeof key === 'object' && !isCelUint(key))
      return err(`unsupported key type: ${typeNameOf(key)}`, pos);
    return operand.get(key as never);
  }
  if (isCelList(operand) && !select) {
    let index: number;
    if (typeof key === 'bigint') index = Number(key);
    else if (isCelUint(key)) index = Number(key.value);
    else if (typeof key === 'number') index = Number.isInteger(key) ? key : NaN;
    else return err(`unsupported index type '${typeNameOf(key)}' in list`, pos);
    return index >= 0 && index < operand.size ? operand.get(index) : undefined;
  }
  // cel-go's refQualify: a list takes a field name as an index it cannot use; anything else that is
  // neither a map nor a list (null params, a string, a number, a message) has no such key.
  if (select) return isCelList(operand) ? listFieldError(pos) : err(`no such key: ${String(key)}`, pos);
  return err(`no such overload: ${typeNameOf(operand)}[${typeNameOf(key)}]`, pos);
}

const listFieldError = (pos: number) => err(`unsupported index type 'string' in list`, pos);

/**
 * Whether an optional qualification can look into the value: cel-go's refQualify answers "absent"
 * (so `.?f` and `[?k]` give optional.none()) for anything that is neither a map, a list nor a message.
 */
function qualifiable(operand: unknown): boolean {
  if (isCelMap(operand) || isCelList(operand)) return true;
  return (operand as { desc?: { fields?: unknown } } | null)?.desc?.fields !== undefined;
}

function missing(operand: unknown, key: unknown, pos: number): CelErr {
  if (isCelList(operand)) {
    if (typeof key === 'number' && !Number.isInteger(key)) return err(`unsupported index value ${key} in list`, pos);
    return err(`index '${keyText(key)}' out of range in list size '${operand.size}'`, pos);
  }
  return err(`no such key: ${keyText(key)}`, pos);
}

/** Applies one qualifier: plain, optional (`.?`, `[?]`), or on an optional value (then optional too). */
function qualify(operand: unknown, key: unknown, pos: number, select: boolean, optional: boolean): unknown {
  if (isOptional(operand)) {
    const inner = optionalValue(operand);
    if (inner === undefined || !qualifiable(inner)) return NONE;
    const found = lookup(inner, key, pos, select);
    return isCelError(found) ? found : optionalOf(found as CelValue | undefined);
  }
  if (optional && !qualifiable(operand)) return NONE;
  const found = lookup(operand, key, pos, select);
  if (optional) return isCelError(found) ? found : optionalOf(found as CelValue | undefined);
  if (found === undefined) return missing(operand, key, pos);
  return found;
}

/** A qualified name (`net.IP`, `optional.of`) when the expression is only identifiers and selections. */
function qualifiedName(node: Node): string | undefined {
  if (node.kind === 'ident') return node.name;
  if (node.kind === 'select' && !node.optional && !node.test) {
    const operand = qualifiedName(node.operand);
    return operand === undefined ? undefined : `${operand}.${node.field}`;
  }
  return undefined;
}

const TYPE_CONSTANTS: Record<string, CelValue> = {
  int: CelScalar.INT,
  uint: CelScalar.UINT,
  double: CelScalar.DOUBLE,
  bool: CelScalar.BOOL,
  string: CelScalar.STRING,
  bytes: CelScalar.BYTES,
  null_type: CelScalar.NULL,
  type: CelScalar.TYPE,
  dyn: CelScalar.DYN,
  list: listType(CelScalar.DYN),
  map: mapType(CelScalar.DYN, CelScalar.DYN),
  'google.protobuf.Timestamp': objectType(TimestampSchema),
  'google.protobuf.Duration': objectType(DurationSchema),
};

/** The type names of constructed messages (`JSONPatch`, `Object.spec`...), which are maps here. */
const constructedTypes = new WeakMap<object, string>();

function constructed(fields: Map<string, unknown>, type: string): unknown {
  const value = celMap(fields as never);
  constructedTypes.set(value, type);
  return value;
}

/** The type name a value was constructed with (`JSONPatch`, `Object.spec`), else undefined. */
export function constructedTypeName(value: unknown): string | undefined {
  return value !== null && typeof value === 'object' ? constructedTypes.get(value) : undefined;
}

export class Compiler {
  private readonly scopes: Map<string, number>[] = [];
  private slotCount = 0;
  /** The frame's index of each variable the expression names. */
  private readonly variableIndexes = new Map<string, number>();

  constructor(
    private readonly runtime: Runtime,
    private readonly variables: ReadonlySet<string>,
    /** MAP mutations: `JSONPatch{...}` and `Object...{...}` construct values. */
    private readonly patchTypes = false,
    /** Nodes planning folded to constants (planner.ts): evaluated once, when the policy was created. */
    private readonly constants?: ReadonlyMap<Node, unknown>,
  ) {}

  /** The closure, and how many comprehension variable slots a frame needs. */
  program(node: Node): (bindings: Readonly<Record<string, unknown>>) => unknown {
    const run = this.compile(node);
    const slots = this.slotCount;
    const variables = this.variableIndexes.size;
    return (bindings) => run({ bindings, slots: new Array(slots), variables: new Array(variables) });
  }

  /** Reads a binding once per evaluation (asCel never answers undefined, so undefined means unread). */
  private variable(name: string): Eval {
    let index = this.variableIndexes.get(name);
    if (index === undefined) {
      index = this.variableIndexes.size;
      this.variableIndexes.set(name, index);
    }
    const at = index;
    return (f) => {
      let value = f.variables[at];
      if (value === undefined) {
        value = asCel(f.bindings[name]);
        f.variables[at] = value;
      }
      return value;
    };
  }

  private slot(name: string): number | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const slot = this.scopes[i].get(name);
      if (slot !== undefined) return slot;
    }
    return undefined;
  }

  private isVariable(name: string): boolean {
    return this.slot(name) !== undefined || this.variables.has(name);
  }

  compile(node: Node): Eval {
    if (this.constants?.has(node)) {
      const value = this.constants.get(node);
      return () => value;
    }
    switch (node.kind) {
      case 'literal': {
        const literal = node.value;
        const value = literal.type === 'uint' ? celUint(literal.value) : literal.value;
        return () => value;
      }
      case 'ident': {
        const slot = node.absolute ? undefined : this.slot(node.name);
        if (slot !== undefined) return (f) => f.slots[slot];
        if (this.variables.has(node.name)) return this.variable(node.name);
        const type = TYPE_CONSTANTS[node.name] ?? this.runtime.typeValue(node.name);
        if (type !== undefined) return () => type;
        const pos = node.pos;
        return () => err(`undeclared reference to '${node.name}'`, pos);
      }
      case 'select': {
        const name = qualifiedName(node);
        if (name !== undefined && !this.isVariable(name.split('.')[0])) {
          const type = TYPE_CONSTANTS[name] ?? this.runtime.typeValue(name);
          if (type !== undefined) return () => type;
        }
        // cel-go declares it as one qualified variable (library/authorizer.ts binds it).
        if (name === 'authorizer.requestResource' && this.slot('authorizer') === undefined) return this.variable(name);
        const operand = this.compile(node.operand);
        const { field, pos, optional } = node;
        if (node.test) {
          return (f) => {
            const v = operand(f);
            if (isCelError(v)) return v;
            if (isCelMap(v)) return v.has(field);
            if (isOptional(v)) {
              const inner = optionalValue(v);
              return inner !== undefined && isCelMap(inner) && inner.has(field);
            }
            // cel-go's refQualify, as a presence test: a list refuses the field name as an index, and
            // anything else (null params, a string) has no field, so has() is false, not an error.
            return isCelList(v) ? listFieldError(pos) : false;
          };
        }
        return (f) => {
          const v = operand(f);
          if (isCelError(v)) return v;
          if (!optional && isCelMap(v)) {
            const found = v.get(field);
            return found === undefined ? err(`no such key: ${field}`, pos) : found;
          }
          return qualify(v, field, pos, true, optional);
        };
      }
      case 'index': {
        const operand = this.compile(node.operand);
        const index = this.compile(node.index);
        const { pos, optional } = node;
        return (f) => {
          const v = operand(f);
          if (isCelError(v)) return v;
          const k = index(f);
          if (isCelError(k)) return k;
          return qualify(v, k, pos, false, optional);
        };
      }
      case 'list': {
        const elements = node.elements.map((e) => this.compile(e));
        const optionals = node.optional;
        const pos = node.pos;
        if (!optionals.some(Boolean)) {
          return (f) => {
            const out: unknown[] = new Array(elements.length);
            for (let i = 0; i < elements.length; i++) {
              const v = elements[i](f);
              if (isCelError(v)) return v;
              out[i] = v;
            }
            return celList(out as CelValue[]);
          };
        }
        return (f) => {
          const out: unknown[] = [];
          for (let i = 0; i < elements.length; i++) {
            const v = elements[i](f);
            if (isCelError(v)) return v;
            if (!optionals[i]) out.push(v);
            else if (!isOptional(v))
              return err(`no such overload: optional list element of type '${typeNameOf(v)}'`, pos);
            else if (optionalValue(v) !== undefined) out.push(optionalValue(v));
          }
          return celList(out as CelValue[]);
        };
      }
      case 'map': {
        const entries = node.entries.map((e) => ({
          key: this.compile(e.key),
          value: this.compile(e.value),
          optional: e.optional,
          pos: e.key.pos,
        }));
        return (f) => {
          const out = new Map<unknown, unknown>();
          for (const entry of entries) {
            let key = entry.key(f);
            if (isCelError(key)) return key;
            if (isCelUint(key)) key = key.value;
            else if (typeof key !== 'string' && typeof key !== 'bigint' && typeof key !== 'boolean')
              return err(`unsupported key type: ${typeNameOf(key)}`, entry.pos);
            let value = entry.value(f);
            if (isCelError(value)) return value;
            if (entry.optional) {
              if (!isOptional(value))
                return err(`no such overload: optional map entry of type '${typeNameOf(value)}'`, entry.pos);
              value = optionalValue(value);
              if (value === undefined) continue;
            }
            // cel-go builds the literal into a Go map: a repeated key keeps the last value.
            out.set(key, value);
          }
          return celMap(out as never);
        };
      }
      case 'object': {
        const { pos, type } = node;
        if (!this.patchTypes || (type !== 'JSONPatch' && type !== 'Object' && !type.startsWith('Object.')))
          return () => err(`unknown type: ${type}`, pos);
        const fields = node.fields.map((f) => ({ name: f.name, value: this.compile(f.value), optional: f.optional }));
        return (f) => {
          const out = new Map<string, unknown>();
          for (const field of fields) {
            let value = field.value(f);
            if (isCelError(value)) return value;
            if (field.optional) {
              if (!isOptional(value))
                return err(`no such overload: optional field of type '${typeNameOf(value)}'`, pos);
              value = optionalValue(value);
              if (value === undefined) continue;
            }
            out.set(field.name, value);
          }
          return constructed(out, type);
        };
      }
      case 'call':
        return this.call(node);
      case 'comprehension':
        return this.comprehension(node);
    }
  }

  private call(node: Extract<Node, { kind: 'call' }>): Eval {
    const { fn, pos } = node;
    switch (fn) {
      case '_&&_':
      case '_||_': {
        const [left, right] = node.args.map((a) => this.compile(a));
        const decisive = fn === '_||_';
        return (f) => {
          const l = left(f);
          if (l === decisive) return decisive;
          const r = right(f);
          if (r === decisive) return decisive;
          if (isCelError(l)) return l;
          if (typeof l !== 'boolean')
            return err(`no such overload: ${typeNameOf(l)} ${decisive ? '||' : '&&'} ${typeNameOf(r)}`, pos);
          if (isCelError(r)) return r;
          if (typeof r !== 'boolean')
            return err(`no such overload: ${typeNameOf(l)} ${decisive ? '||' : '&&'} ${typeNameOf(r)}`, pos);
          return !decisive;
        };
      }
      case '_?_:_': {
        const [condition, then, otherwise] = node.args.map((a) => this.compile(a));
        return (f) => {
          const c = condition(f);
          if (c === true) return then(f);
          if (c === false) return otherwise(f);
          if (isCelError(c)) return c;
          return err(`no such overload: ${typeNameOf(c)} ? _ : _`, pos);
        };
      }
      default:
        break;
    }
    // `optional.of(x)`, `sets.contains(a, b)`: a namespaced function rather than a method.
    if (node.target) {
      const name = qualifiedName(node.target);
      if (name !== undefined && !this.isVariable(name.split('.')[0]) && this.runtime.find(`${name}.${fn}`)) {
        return this.invoke(
          `${name}.${fn}`,
          pos,
          undefined,
          node.args.map((a) => this.compile(a)),
        );
      }
    }
    const target = node.target && this.compile(node.target);
    const args = node.args.map((a) => this.compile(a));
    if (target && (fn === 'or' || fn === 'orValue') && args.length === 1) {
      const alternative = args[0];
      const unwrap = fn === 'orValue';
      return (f) => {
        const t = target(f);
        if (isCelError(t)) return t;
        if (!isOptional(t)) return err(`no such overload: ${typeNameOf(t)}.${fn}(_)`, pos);
        const value = optionalValue(t);
        if (value !== undefined) return unwrap ? value : t;
        const other = alternative(f);
        if (!unwrap && !isCelError(other) && !isOptional(other))
          return err(`no such overload: optional_type.or(${typeNameOf(other)})`, pos);
        return other;
      };
    }
    if (fn === '_==_' || fn === '_!=_') {
      const equal = this.invoke('_==_', pos, undefined, args);
      const [left, right] = args;
      const negate = fn === '_!=_';
      return (f) => {
        const l = left(f);
        if (isCelError(l)) return l;
        const r = right(f);
        if (isCelError(r)) return r;
        if (isOptional(l) || isOptional(r)) {
          if (!isOptional(l) || !isOptional(r)) return negate;
          const a = optionalValue(l);
          const b = optionalValue(r);
          if (a === undefined || b === undefined) return (a === b) !== negate;
          const inner = equal({ bindings: {}, slots: [], variables: [] }, [a, b]);
          return isCelError(inner) ? inner : inner !== negate;
        }
        const result = equal(f, [l, r]);
        return negate && typeof result === 'boolean' ? !result : result;
      };
    }
    return this.invoke(fn, pos, target, args);
  }

  /** A call through the function registry, arguments evaluated left to right, errors first. */
  private invoke(
    name: string,
    pos: number,
    target: Eval | undefined,
    args: Eval[],
  ): Eval & ((f: Frame, values?: unknown[]) => unknown) {
    const group = this.runtime.find(name);
    const display = name;
    return (f: Frame, values?: unknown[]) => {
      let t: unknown;
      if (target) {
        t = target(f);
        if (isCelError(t)) return t;
      }
      let vals = values;
      if (!vals) {
        vals = new Array(args.length);
        for (let i = 0; i < args.length; i++) {
          const v = args[i](f);
          if (isCelError(v)) return v;
          vals[i] = v;
        }
      }
      if (!group) return err(`no such overload: ${display}`, pos);
      const result = group.call(pos, t as CelValue | undefined, vals as CelValue[]);
      if (isCelError(result)) return upstreamError(result, pos);
      if (result !== undefined) return result;
      const signature = (vals as unknown[]).map(typeNameOf).join(', ');
      return err(`no such overload: ${t === undefined ? '' : `${typeNameOf(t)}.`}${display}(${signature})`, pos);
    };
  }

  private bind<T>(names: readonly string[], body: (slots: number[]) => T): T {
    const scope = new Map<string, number>();
    const slots = names.map((n) => {
      const s = this.slotCount++;
      scope.set(n, s);
      return s;
    });
    this.scopes.push(scope);
    try {
      return body(slots);
    } finally {
      this.scopes.pop();
    }
  }

  private comprehension(node: Extract<Node, { kind: 'comprehension' }>): Eval {
    const range = this.compile(node.range);
    const { macro, pos } = node;
    const runtime = this.runtime;
    const costError = () => err(runtime.costError, pos);

    if (macro === 'optMap' || macro === 'optFlatMap') {
      return this.bind(node.vars, ([slot]) => {
        const body = this.compile(node.args[0]);
        return (f) => {
          const o = range(f);
          if (isCelError(o)) return o;
          if (!isOptional(o)) return err(`no such overload: ${typeNameOf(o)}.${macro}(_, _)`, pos);
          const value = optionalValue(o);
          if (value === undefined) return NONE;
          f.slots[slot] = value;
          const r = body(f);
          if (isCelError(r) || macro === 'optFlatMap') {
            if (!isCelError(r) && !isOptional(r))
              return err(`no such overload: optFlatMap result of type '${typeNameOf(r)}'`, pos);
            return r;
          }
          return optionalOf(r as CelValue);
        };
      });
    }

    if (macro === 'sortBy') {
      // cel-go's expansion: the keys computed per element, then one call sorts by them.
      const sortByKeys = this.runtime.find('@sortByAssociatedKeys');
      return this.bind(node.vars, ([slot]) => {
        const key = this.compile(node.args[0]);
        return (f) => {
          const iterable = range(f);
          if (isCelError(iterable)) return iterable;
          if (!isCelList(iterable)) return err(`no such overload: ${typeNameOf(iterable)}.sortBy(_, _)`, pos);
          const keys: unknown[] = [];
          for (const element of iterable) {
            if (!runtime.iterate()) return costError();
            f.slots[slot] = element;
            const k = key(f);
            if (isCelError(k)) return k;
            keys.push(k);
          }
          return (
            sortByKeys?.call(pos, undefined, [iterable, celList(keys as CelValue[])]) ??
            err('no such overload: sortBy', pos)
          );
        };
      });
    }

    const two = node.vars.length === 2;
    return this.bind(node.vars, (slots) => {
      const bodies = node.args.map((a) => this.compile(a));
      const [first, second] = slots;
      /** Calls `visit` per element with the variables bound; stops when it returns false. */
      const each = (f: Frame, iterable: unknown, visit: () => boolean | CelErr): CelErr | undefined => {
        if (isCelList(iterable)) {
          for (let i = 0; i < iterable.size; i++) {
            if (!runtime.iterate()) return costError();
            if (two) {
              f.slots[first] = BigInt(i);
              f.slots[second] = iterable.get(i);
            } else f.slots[first] = iterable.get(i);
            const go = visit();
            if (go !== true) return go === false ? undefined : go;
          }
          return undefined;
        }
        if (isCelMap(iterable)) {
          for (const key of iterable.keys()) {
            if (!runtime.iterate()) return costError();
            f.slots[first] = key;
            if (two) f.slots[second] = iterable.get(key);
            const go = visit();
            if (go !== true) return go === false ? undefined : go;
          }
          return undefined;
        }
        return err(
          `expression of type '${typeNameOf(iterable)}' cannot be range of a comprehension (must be list, map, or dynamic)`,
          pos,
        );
      };

      switch (macro) {
        case 'all':
        case 'all2':
        case 'exists':
        case 'exists2': {
          const [predicate] = bodies;
          const decisive = macro === 'exists' || macro === 'exists2';
          return (f) => {
            const iterable = range(f);
            if (isCelError(iterable)) return iterable;
            let firstError: CelErr | undefined;
            let decided = false;
            const failure = each(f, iterable, () => {
              const r = predicate(f);
              if (r === decisive) {
                decided = true;
                return false;
              }
              if (r !== !decisive && !firstError)
                firstError = isCelError(r)
                  ? r
                  : err(`no such overload: ${typeNameOf(r)} ${decisive ? '||' : '&&'} bool`, pos);
              return true;
            });
            if (failure) return failure;
            if (decided) return decisive;
            return firstError ?? !decisive;
          };
        }
        case 'exists_one':
        case 'existsOne2': {
          const [predicate] = bodies;
          return (f) => {
            const iterable = range(f);
            if (isCelError(iterable)) return iterable;
            let count = 0;
            let error: CelErr | undefined;
            const failure = each(f, iterable, () => {
              const r = predicate(f);
              if (r === true) count++;
              else if (r !== false) {
                error = isCelError(r) ? r : err(`no such overload: ${typeNameOf(r)} ? _ : _`, pos);
                return error;
              }
              return true;
            });
            return failure ?? error ?? count === 1;
          };
        }
        case 'map':
        case 'filter':
        case 'transformList': {
          const predicate = macro === 'filter' ? bodies[0] : bodies.length === 2 ? bodies[0] : undefined;
          const transform = macro === 'filter' ? undefined : bodies[bodies.length - 1];
          return (f) => {
            const iterable = range(f);
            if (isCelError(iterable)) return iterable;
            const out: unknown[] = [];
            const failure = each(f, iterable, () => {
              if (predicate) {
                const keep = predicate(f);
                if (isCelError(keep)) return keep;
                if (typeof keep !== 'boolean') return err(`no such overload: ${typeNameOf(keep)} ? _ : _`, pos);
                if (!keep) return true;
              }
              if (!transform) {
                out.push(f.slots[two ? second : first]);
                return true;
              }
              const v = transform(f);
              if (isCelError(v)) return v;
              out.push(v);
              return true;
            });
            return failure ?? celList(out as CelValue[]);
          };
        }
        case 'transformMap':
        case 'transformMapEntry': {
          const predicate = bodies.length === 2 ? bodies[0] : undefined;
          const transform = bodies[bodies.length - 1];
          const entry = macro === 'transformMapEntry';
          return (f) => {
            const iterable = range(f);
            if (isCelError(iterable)) return iterable;
            const out = new Map<unknown, unknown>();
            const failure = each(f, iterable, () => {
              if (predicate) {
                const keep = predicate(f);
                if (isCelError(keep)) return keep;
                if (typeof keep !== 'boolean') return err(`no such overload: ${typeNameOf(keep)} ? _ : _`, pos);
                if (!keep) return true;
              }
              const v = transform(f);
              if (isCelError(v)) return v;
              if (!entry) {
                const key = f.slots[first];
                out.set(isCelUint(key) ? key.value : key, v);
                return true;
              }
              if (!isCelMap(v))
                return err(`no such overload: transformMapEntry result of type '${typeNameOf(v)}'`, pos);
              for (const [k, value] of v) {
                const key = isCelUint(k) ? k.value : k;
                if (out.has(key)) return err(`insert failed: key ${keyText(key)} already exists`, pos);
                out.set(key, value);
              }
              return true;
            });
            return failure ?? celMap(out as never);
          };
        }
        default:
          return () => err(`unsupported macro ${macro}`, pos);
      }
    });
  }
}
