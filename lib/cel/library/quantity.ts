// Kubernetes' CEL quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go): resource
// quantities such as `1.5Gi` or `500m`, compared and added exactly. A value is held as a whole
// number of nano-units (the finest precision Kubernetes keeps), so `quantity('1Gi') ==
// quantity('1024Mi')` holds, as it does upstream.
import { CelScalar, celFunc, celMethod } from '@bufbuild/cel';
import { Quantity, QuantityError } from '../../kube/quantity.js';
import type { CelFunc } from '@bufbuild/cel';
import { QUANTITY, opaqueText } from './types.js';

const { BOOL, INT, DOUBLE, STRING } = CelScalar;
const NANO = 1_000_000_000n;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const PARSE_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** The quantity in nano-units, or undefined when `text` is not a quantity (lib/kube parses). */
export function parseQuantity(text: string): bigint | undefined {
  try {
    return Quantity.parse(text).nano;
  } catch (error) {
    if (error instanceof QuantityError) return undefined;
    throw error;
  }
}

const nanosOf = (value: unknown): bigint => BigInt(opaqueText(value));
const wrap = (nanos: bigint) => QUANTITY.wrap(nanos.toString()) as never;

function quantityOf(text: string) {
  const nanos = parseQuantity(text);
  if (nanos === undefined) {
    // apimachinery's ErrFormatWrong when the shape is wrong, ErrSuffix when only the suffix is.
    throw new Error(
      /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/.test(text) ? "unable to parse quantity's suffix" : PARSE_ERROR,
    );
  }
  return wrap(nanos);
}

function asInteger(nanos: bigint): bigint {
  if (nanos % NANO !== 0n) throw new Error('cannot convert value to integer');
  const value = nanos / NANO;
  if (value > INT64_MAX || value < INT64_MIN) throw new Error('cannot convert value to integer');
  return value;
}

const compare = (a: bigint, b: bigint): bigint => (a < b ? -1n : a > b ? 1n : 0n);

export const quantityLibrary: CelFunc[] = [
  celFunc('quantity', [STRING], QUANTITY.type, quantityOf),
  celFunc('isQuantity', [STRING], BOOL, (text) => parseQuantity(text) !== undefined),
  // A global function upstream (`sign(q)`), so `q.sign()` does not compile.
  celFunc('sign', [QUANTITY.type], INT, (q) => compare(nanosOf(q), 0n)),
  // Upstream's AsInt64: integral and within int64.
  celMethod('isInteger', QUANTITY.type, [], BOOL, function () {
    const n = nanosOf(this);
    return n % NANO === 0n && n / NANO <= INT64_MAX && n / NANO >= INT64_MIN;
  }),
  celMethod('asInteger', QUANTITY.type, [], INT, function () {
    return asInteger(nanosOf(this));
  }),
  celMethod('asApproximateFloat', QUANTITY.type, [], DOUBLE, function () {
    return Number(nanosOf(this)) / 1e9;
  }),
  celMethod('add', QUANTITY.type, [QUANTITY.type], QUANTITY.type, function (other) {
    return wrap(nanosOf(this) + nanosOf(other));
  }),
  celMethod('add', QUANTITY.type, [INT], QUANTITY.type, function (other) {
    return wrap(nanosOf(this) + other * NANO);
  }),
  celMethod('sub', QUANTITY.type, [QUANTITY.type], QUANTITY.type, function (other) {
    return wrap(nanosOf(this) - nanosOf(other));
  }),
  celMethod('sub', QUANTITY.type, [INT], QUANTITY.type, function (other) {
    return wrap(nanosOf(this) - other * NANO);
  }),
  celMethod('isGreaterThan', QUANTITY.type, [QUANTITY.type], BOOL, function (other) {
    return nanosOf(this) > nanosOf(other);
  }),
  celMethod('isLessThan', QUANTITY.type, [QUANTITY.type], BOOL, function (other) {
    return nanosOf(this) < nanosOf(other);
  }),
  celMethod('compareTo', QUANTITY.type, [QUANTITY.type], INT, function (other) {
    return compare(nanosOf(this), nanosOf(other));
  }),
];
