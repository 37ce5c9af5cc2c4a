// Kubernetes' CEL lists and regex libraries (k8s.io/apiserver/pkg/cel/library/{lists,regex}.go),
// cel-go's sets extension and cel-go's lists extension (version 3). Elements arrive as CEL values:
// bigint (int), CelUint, number (double), string, durations and timestamps (protobuf messages)...
// find/findAll run on RE2 (regex.ts).
import { create } from '@bufbuild/protobuf';
import { DurationSchema } from '@bufbuild/protobuf/wkt';
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
} from '@bufbuild/cel';
import type { CelFunc, CelList, CelValue } from '@bufbuild/cel';
import { findAll } from './regex.js';

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
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i)!, b.get(i)!)) return false;
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v, b.get(k)!)) return false;
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
  const ua = unsigned(a) ?? a;
  const ub = unsigned(b) ?? b;
  if (isNumber(ua) && isNumber(ub)) return ua < ub ? -1 : ua > ub ? 1 : 0;
  if ((typeof a === 'string' && typeof b === 'string') || (typeof a === 'boolean' && typeof b === 'boolean'))
    return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta && tb && ta.kind === tb.kind) return ta.nanos < tb.nanos ? -1 : ta.nanos > tb.nanos ? 1 : 0;
  throw new Error('no such overload');
}

function sum(list: CelList): CelValue {
  let total: bigint | number = 0n;
  let duration: bigint | undefined;
  for (const v of list) {
    const time = timeOf(v);
    if (time?.kind === 'duration') {
      duration = (duration ?? 0n) + time.nanos;
      continue;
    }
    const n = unsigned(v) ?? v;
    if (!isNumber(n)) throw new Error('no such overload');
    if (typeof n === 'number' || typeof total === 'number') total = Number(total) + Number(n);
    else {
      total += n;
      if (total > INT64_MAX || total < INT64_MIN) throw new Error('integer overflow');
    }
  }
  if (duration !== undefined)
    return create(DurationSchema, {
      seconds: duration / 1_000_000_000n,
      nanos: Number(duration % 1_000_000_000n),
    }) as never;
  if (list.size > 0 && isCelUint(list.get(0))) return celUint(total as bigint);
  return total;
}

function extreme(list: CelList, name: string, sign: 1 | -1): CelValue {
  let best: CelValue | undefined;
  for (const v of list) if (best === undefined || compare(v, best) * sign > 0) best = v;
  if (best === undefined) throw new Error(`${name} called on empty list`);
  return best;
}

function indexOf(list: CelList, value: CelValue, last: boolean): bigint {
  let found = -1;
  for (let i = 0; i < list.size; i++)
    if (celEquals(list.get(i)!, value)) {
      found = i;
      if (!last) break;
    }
  return BigInt(found);
}

export const listsLibrary: CelFunc[] = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    for (let i = 1; i < this.size; i++) if (compare(this.get(i - 1)!, this.get(i)!) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () {
    return sum(this) as never;
  }),
  celMethod('min', LIST, [], DYN, function () {
    return extreme(this, 'min', -1) as never;
  }),
  celMethod('max', LIST, [], DYN, function () {
    return extreme(this, 'max', 1) as never;
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (v) {
    return indexOf(this, v, false);
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (v) {
    return indexOf(this, v, true);
  }),
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

export const regexLibrary: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (pattern) {
    return findAll(this, pattern, 1)[0] ?? '';
  }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (pattern) {
    return findAll(this, pattern, -1);
  }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (pattern, limit) {
    return findAll(this, pattern, limit < 0n ? -1 : Number(limit));
  }),
];
