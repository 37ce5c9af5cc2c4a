// Kubernetes' CEL quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go): resource
// quantities such as `1.5Gi` or `500m`, compared and added exactly. A value is held as a whole
// number of nano-units (the finest precision Kubernetes keeps), so `quantity('1Gi') ==
// quantity('1024Mi')` holds, as it does upstream.
import { CelScalar, celFunc, celMethod } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import { QUANTITY, opaqueText } from './types.js';

const { BOOL, INT, DOUBLE, STRING } = CelScalar;
const NANO = 1_000_000_000n;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const SUFFIX: Record<string, [base: bigint, exponent: bigint]> = {
  Ki: [2n, 10n], Mi: [2n, 20n], Gi: [2n, 30n], Ti: [2n, 40n], Pi: [2n, 50n], Ei: [2n, 60n],
  n: [10n, -9n], u: [10n, -6n], m: [10n, -3n], '': [10n, 0n], k: [10n, 3n], M: [10n, 6n], G: [10n, 9n], T: [10n, 12n], P: [10n, 15n], E: [10n, 18n],
};
const FORMAT = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const PARSE_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Ceiling division for a positive divisor (Kubernetes rounds up what it cannot hold). */
function divideUp(numerator: bigint, divisor: bigint): bigint {
  const q = numerator / divisor;
  return numerator % divisor > 0n ? q + 1n : q;
}

/** The quantity in nano-units, or undefined when `text` is not a quantity. */
export function parseQuantity(text: string): bigint | undefined {
  const match = FORMAT.exec(text.trim() === text ? text : '');
  if (!match) return undefined;
  const [, number, suffix = ''] = match;
  const negative = number.startsWith('-');
  const digits = number.replace(/^[+-]/, '');
  const [whole, fraction = ''] = digits.split('.');
  let numerator = BigInt((whole || '0') + fraction);
  let exponent = -BigInt(fraction.length);
  let multiplier = 1n;
  if (/^[eE]/.test(suffix)) exponent += BigInt(suffix.slice(1));
  else {
    const [base, power] = SUFFIX[suffix];
    if (base === 2n) multiplier = 1n << power;
    else exponent += power;
  }
  // value = numerator * multiplier * 10^exponent; in nanos: * 10^9.
  exponent += 9n;
  if (exponent > 60n) return undefined; // far beyond what Kubernetes can represent
  numerator *= multiplier;
  const nanos = exponent >= 0n ? numerator * 10n ** exponent : divideUp(numerator, 10n ** -exponent);
  return negative ? -nanos : nanos;
}

const nanosOf = (value: unknown): bigint => BigInt(opaqueText(value));
const wrap = (nanos: bigint) => QUANTITY.wrap(nanos.toString()) as never;

function quantityOf(text: string) {
  const nanos = parseQuantity(text);
  if (nanos === undefined) throw new Error(PARSE_ERROR);
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
  celMethod('sign', QUANTITY.type, [], INT, function () { return compare(nanosOf(this), 0n); }),
  celMethod('isInteger', QUANTITY.type, [], BOOL, function () { return nanosOf(this) % NANO === 0n; }),
  celMethod('asInteger', QUANTITY.type, [], INT, function () { return asInteger(nanosOf(this)); }),
  celMethod('asApproximateFloat', QUANTITY.type, [], DOUBLE, function () { return Number(nanosOf(this)) / 1e9; }),
  celMethod('add', QUANTITY.type, [QUANTITY.type], QUANTITY.type, function (other) { return wrap(nanosOf(this) + nanosOf(other)); }),
  celMethod('add', QUANTITY.type, [INT], QUANTITY.type, function (other) { return wrap(nanosOf(this) + other * NANO); }),
  celMethod('sub', QUANTITY.type, [QUANTITY.type], QUANTITY.type, function (other) { return wrap(nanosOf(this) - nanosOf(other)); }),
  celMethod('sub', QUANTITY.type, [INT], QUANTITY.type, function (other) { return wrap(nanosOf(this) - other * NANO); }),
  celMethod('isGreaterThan', QUANTITY.type, [QUANTITY.type], BOOL, function (other) { return nanosOf(this) > nanosOf(other); }),
  celMethod('isLessThan', QUANTITY.type, [QUANTITY.type], BOOL, function (other) { return nanosOf(this) < nanosOf(other); }),
  celMethod('compareTo', QUANTITY.type, [QUANTITY.type], INT, function (other) { return compare(nanosOf(this), nanosOf(other)); }),
];
