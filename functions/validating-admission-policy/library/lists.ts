// Kubernetes' CEL lists and regex libraries (k8s.io/apiserver/pkg/cel/library/{lists,regex}.go) and
// cel-go's sets extension. Elements arrive as CEL values: bigint (int), number (double), string...
import { CelScalar, celFunc, celMethod, isCelList, isCelMap, listType } from '@bufbuild/cel';
import type { CelFunc, CelList, CelValue } from '@bufbuild/cel';
import { findAll } from './regex.js';

const { BOOL, INT, STRING, DYN } = CelScalar;
const LIST = listType(DYN);
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const isNumber = (v: unknown): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';

/** CEL equality for the values a list of JSON can hold (heterogeneous numbers compare by value). */
export function celEquals(a: CelValue, b: CelValue): boolean {
  if (isNumber(a) && isNumber(b)) return typeof a === typeof b ? a === b : Number(a) === Number(b);
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
  return a === b;
}

function compare(a: CelValue, b: CelValue): number {
  if (isNumber(a) && isNumber(b)) return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'string' && typeof b === 'string') || (typeof a === 'boolean' && typeof b === 'boolean')) return a < b ? -1 : a > b ? 1 : 0;
  throw new Error(`no such overload: comparison of ${typeof a} and ${typeof b}`);
}

function sum(list: CelList): CelValue {
  let total: bigint | number = 0n;
  for (const v of list) {
    if (!isNumber(v)) throw new Error('no such overload: sum of non-numbers');
    if (typeof v === 'number' || typeof total === 'number') total = Number(total) + Number(v);
    else {
      total += v;
      if (total > INT64_MAX || total < INT64_MIN) throw new Error('integer overflow');
    }
  }
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
  for (let i = 0; i < list.size; i++) if (celEquals(list.get(i)!, value)) { found = i; if (!last) break; }
  return BigInt(found);
}

export const listsLibrary: CelFunc[] = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    for (let i = 1; i < this.size; i++) if (compare(this.get(i - 1)!, this.get(i)!) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () { return sum(this) as never; }),
  celMethod('min', LIST, [], DYN, function () { return extreme(this, 'min', -1) as never; }),
  celMethod('max', LIST, [], DYN, function () { return extreme(this, 'max', 1) as never; }),
  celMethod('indexOf', LIST, [DYN], INT, function (v) { return indexOf(this, v, false); }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (v) { return indexOf(this, v, true); }),
];

const containsAll = (a: CelList, b: CelList) => [...b].every((x) => [...a].some((y) => celEquals(x, y)));
export const setsLibrary: CelFunc[] = [
  celFunc('sets.contains', [LIST, LIST], BOOL, (a, b) => containsAll(a, b)),
  celFunc('sets.equivalent', [LIST, LIST], BOOL, (a, b) => containsAll(a, b) && containsAll(b, a)),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a, b) => [...a].some((x) => [...b].some((y) => celEquals(x, y)))),
];

export const regexLibrary: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (pattern) { return findAll(this, pattern, 1)[0] ?? ''; }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (pattern) { return findAll(this, pattern, -1); }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (pattern, limit) { return findAll(this, pattern, limit < 0n ? -1 : Number(limit)); }),
];
