// Kubernetes' CEL lists and regex libraries (k8s.io/apiserver/pkg/cel/library/{lists,regex}.go),
// cel-go's sets extension and cel-go's lists extension (version 3). Elements arrive as CEL values:
// bigint (int), CelUint, number (double), string, durations and timestamps (protobuf messages)...
// find/findAll run on RE2 (regex.ts).
import { create } from '@bufbuild/protobuf';
import { DurationSchema, TimestampSchema } from '@bufbuild/protobuf/wkt';
import {
  CelScalar,
  celFunc,
  celList,
  celMethod,
  celUint,
  isCelList,
  isCelMap,
  isCelUint,
  listType,
  objectType,
} from '@bufbuild/cel';
import type { CelFunc, CelList, CelType, CelValue } from '@bufbuild/cel';
import { compilePattern, findAll } from './regex.js';

const { BOOL, INT, STRING, DYN } = CelScalar;
const LIST = listType(DYN);
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const isNumber = (v: unknown): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';

type TimeMessage = { desc: { typeName: string }; message: { seconds: bigint; nanos: number } };
/** A google.protobuf.Duration or Timestamp as @bufbuild/cel holds it, or undefined. */
function timeOf(v: unknown): { kind: 'duration' | 'timestamp'; nanos: bigint } | undefined {
  const name = (v as TimeMessage | null)?.desc?.typeName;
  if (name !== 'google.protobuf.Duration' && name !== 'google.protobuf.Timestamp') return undefined;
  const { seconds, nanos } = (v as TimeMessage).message;
  return {
    kind: name === 'google.protobuf.Duration' ? 'duration' : 'timestamp',
    nanos: BigInt(seconds) * 1_000_000_000n + BigInt(nanos),
  };
}
const unsigned = (v: unknown): bigint | undefined => (isCelUint(v) ? v.value : undefined);

/** CEL equality for the values lists hold (numbers compare by value across int, uint and double). */
export function celEquals(a: CelValue, b: CelValue): boolean {
  const ua = unsigned(a) ?? a;
  const ub = unsigned(b) ?? b;
  if (isNumber(ua) && isNumber(ub)) return typeof ua === typeof ub ? ua === ub : Number(ua) === Number(ub);
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    let i = 0;
    for (const x of a) {
      const y = b.get(i++);
      if (y === undefined || !celEquals(x, y)) return false;
    }
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) {
      const w = b.get(k);
      if (w === undefined || !celEquals(v, w)) return false;
    }
    return true;
  }
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta || tb) return ta !== undefined && tb !== undefined && ta.kind === tb.kind && ta.nanos === tb.nanos;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  return a === b;
}

/** Ordering of comparable values of one type: numbers, strings, bools, bytes, durations, timestamps. */
export function compare(a: CelValue, b: CelValue): number {
  const order = comparison(a, b);
  if (order === undefined) throw new Error('no such overload');
  return order;
}

/**
 * cel-go's Compare: numbers across int, uint and double; otherwise two values of one comparable
 * type. Undefined where cel-go answers with an error value (which lists.go's min, max and isSorted
 * pass over, as they only look for the preferred result).
 */
function comparison(a: CelValue, b: CelValue): number | undefined {
  const ua = unsigned(a) ?? a;
  const ub = unsigned(b) ?? b;
  if (isNumber(ua) && isNumber(ub)) return ua < ub ? -1 : ua > ub ? 1 : 0;
  if ((typeof a === 'string' && typeof b === 'string') || (typeof a === 'boolean' && typeof b === 'boolean'))
    return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta && tb && ta.kind === tb.kind) return ta.nanos < tb.nanos ? -1 : ta.nanos > tb.nanos ? 1 : 0;
  return undefined;
}

/** Whether cel-go's value implements traits.Comparer. */
const comparable = (v: CelValue) =>
  isNumber(v) ||
  isCelUint(v) ||
  typeof v === 'string' ||
  typeof v === 'boolean' ||
  v instanceof Uint8Array ||
  timeOf(v) !== undefined;

const UINT64_MAX = (1n << 64n) - 1n;
const DURATION_MAX = INT64_MAX;

/**
 * lists.go sum: one overload per summable type, chosen at run time by the first element (cel-go's
 * dynamic dispatch), then the zero of that type plus each element with that type's `+`.
 */
function sum(list: CelList): CelValue {
  if (list.size === 0) return 0n;
  const first = list.get(0);
  const time = timeOf(first);
  if (time?.kind === 'duration') {
    let total = 0n;
    for (const v of list) {
      const t = timeOf(v);
      if (t?.kind !== 'duration') throw new Error('no such overload');
      total += t.nanos;
      if (total > DURATION_MAX || total < INT64_MIN) throw new Error('integer overflow');
    }
    return create(DurationSchema, {
      seconds: total / 1_000_000_000n,
      nanos: Number(total % 1_000_000_000n),
    }) as never;
  }
  if (typeof first === 'number') {
    let total = 0;
    for (const v of list) {
      if (typeof v !== 'number') throw new Error('no such overload');
      total += v;
    }
    return total;
  }
  if (isCelUint(first)) {
    let total = 0n;
    for (const v of list) {
      if (!isCelUint(v)) throw new Error('no such overload');
      total += v.value;
      if (total > UINT64_MAX) throw new Error('unsigned integer overflow');
    }
    return celUint(total);
  }
  if (typeof first !== 'bigint') throw new Error('no such overload');
  let total = 0n;
  for (const v of list) {
    if (typeof v !== 'bigint') throw new Error('no such overload');
    total += v;
    if (total > INT64_MAX || total < INT64_MIN) throw new Error('integer overflow');
  }
  return total;
}

/** lists.go cmp: keeps the element the comparison prefers; min or max of an empty list is an error. */
function extreme(list: CelList, name: string, sign: 1 | -1): CelValue {
  let best: CelValue | undefined;
  for (const v of list) {
    if (!comparable(v)) throw new Error('no such overload');
    if (best === undefined || comparison(best, v) === sign) best = v;
  }
  if (best === undefined) throw new Error(`${name} called on empty list`);
  return best;
}

function isSorted(list: CelList): boolean {
  let previous: CelValue | undefined;
  for (const v of list) {
    if (!comparable(v)) throw new Error('no such overload');
    if (previous !== undefined && comparison(previous, v) === 1) return false;
    previous = v;
  }
  return true;
}

function indexOf(list: CelList, value: CelValue, last: boolean): bigint {
  let found = -1;
  for (const [i, v] of [...list].entries())
    if (celEquals(v, value)) {
      found = i;
      if (!last) break;
    }
  return BigInt(found);
}

export const listsLibrary: CelFunc[] = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    return isSorted(this);
  }),
  celMethod('sum', LIST, [], DYN, function () {
    return sum(this) as never;
  }),
  celMethod('min', LIST, [], DYN, function () {
    return extreme(this, 'min', 1) as never;
  }),
  celMethod('max', LIST, [], DYN, function () {
    return extreme(this, 'max', -1) as never;
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (v) {
    return indexOf(this, v, false);
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (v) {
    return indexOf(this, v, true);
  }),
];

const SUMMABLE: readonly CelType[] = [INT, CelScalar.UINT, CelScalar.DOUBLE, objectType(DurationSchema)];
const COMPARABLE: readonly CelType[] = [...SUMMABLE, BOOL, objectType(TimestampSchema), STRING, CelScalar.BYTES];
const declaredOnly = () => {
  throw new Error('no such overload');
};

/**
 * lists.go's overloads as the checker sees them: `list(T).sum()` for each summable T, `min`, `max`
 * and `isSorted` for each comparable T, so `['a'].sum()` and `[[1]].min()` are refused when the
 * policy is created. Evaluation goes through listsLibrary, which dispatches as cel-go does.
 */
export const listsSignatures: CelFunc[] = [
  ...SUMMABLE.map((t) => celMethod('sum', listType(t), [], t, declaredOnly)),
  ...COMPARABLE.flatMap((t) => [
    celMethod('min', listType(t), [], t, declaredOnly),
    celMethod('max', listType(t), [], t, declaredOnly),
    celMethod('isSorted', listType(t), [], BOOL, declaredOnly),
  ]),
];

const containsAll = (a: CelList, b: CelList) => [...b].every((x) => [...a].some((y) => celEquals(x, y)));
export const setsLibrary: CelFunc[] = [
  celFunc('sets.contains', [LIST, LIST], BOOL, (a, b) => containsAll(a, b)),
  celFunc('sets.equivalent', [LIST, LIST], BOOL, (a, b) => containsAll(a, b) && containsAll(b, a)),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a, b) => [...a].some((x) => [...b].some((y) => celEquals(x, y)))),
];

function flatten(list: CelList, depth: bigint): CelValue[] {
  if (depth < 0n) throw new Error('level must be non-negative');
  const out: CelValue[] = [];
  for (const v of list) {
    if (isCelList(v) && depth > 0n) out.push(...flatten(v, depth - 1n));
    else out.push(v);
  }
  return out;
}

function sorted(values: CelValue[], keys: CelValue[] = values): CelValue[] {
  const order = values.map((_, i) => i);
  order.sort((a, b) => {
    try {
      return compare(keys[a], keys[b]) || a - b;
    } catch {
      throw new Error('list elements must have the same type');
    }
  });
  return order.map((i) => values[i]);
}

function slice(list: CelList, start: bigint, end: bigint): CelValue[] {
  if (start < 0n || end < 0n) throw new Error(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end)
    throw new Error(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (end > BigInt(list.size)) throw new Error(`cannot slice(${start}, ${end}), list is length ${list.size}`);
  return [...list].slice(Number(start), Number(end));
}

/** The name the `sortBy` macro calls with the list and the keys it computed. */
export const SORT_BY_KEYS = '@sortByAssociatedKeys';

/** cel-go's lists extension (ext.Lists, version 3), offered to new policies from Kubernetes 1.35. */
export const listsExtension: CelFunc[] = [
  celMethod('slice', LIST, [INT, INT], LIST, function (start, end) {
    return celList(slice(this, start, end));
  }),
  celMethod('flatten', LIST, [], LIST, function () {
    return celList(flatten(this, 1n));
  }),
  celMethod('flatten', LIST, [INT], LIST, function (depth) {
    return celList(flatten(this, depth));
  }),
  celFunc('lists.range', [INT], listType(INT), (n) =>
    celList(Array.from({ length: n > 0n ? Number(n) : 0 }, (_, i) => BigInt(i))),
  ),
  celMethod('distinct', LIST, [], LIST, function () {
    const out: CelValue[] = [];
    for (const v of this) if (!out.some((o) => celEquals(o, v))) out.push(v);
    return celList(out);
  }),
  celMethod('reverse', LIST, [], LIST, function () {
    return celList([...this].reverse());
  }),
  celMethod('sort', LIST, [], LIST, function () {
    return celList(sorted([...this]));
  }),
  celFunc(SORT_BY_KEYS, [LIST, LIST], LIST, (list, keys) => celList(sorted([...list], [...keys]))),
];

/** regex.go's find and findAll: a pattern RE2 refuses is `Illegal regex: <error>` when evaluated. */
function matchesOf(text: string, pattern: string, limit: number): string[] {
  try {
    compilePattern(pattern);
  } catch (error) {
    throw new Error(`Illegal regex: ${(error as Error).message}`);
  }
  return findAll(text, pattern, limit);
}

export const regexLibrary: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (pattern) {
    return matchesOf(this, pattern, 1)[0] ?? '';
  }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (pattern) {
    return matchesOf(this, pattern, -1);
  }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (pattern, limit) {
    return matchesOf(this, pattern, limit < 0n ? -1 : Number(limit));
  }),
];
