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

// apimachinery keeps a parsed quantity either as an int64 amount (value × 10^scale, the fast path of
// ParseQuantity) or as an arbitrary-precision decimal, and AsInt64, which isInteger and asInteger
// call, answers only for an int64 amount of scale >= 0 that fits: `quantity('1000m')` (1000 × 10^-3)
// and `quantity('1.5Gi')` (a decimal) are not integers there although their values are whole. The
// form travels beside the value (keyed by it), as add and sub carry it on.
interface Int64Amount {
  readonly value: bigint;
  readonly scale: number;
}
type Form = Int64Amount | 'decimal';
const forms = new WeakMap<object, Form>();

const fitsInt64 = (n: bigint) => n <= INT64_MAX && n >= INT64_MIN;
const DECIMAL_SUFFIX: Record<string, number> = { '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18, m: -3, u: -6, n: -9 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** ParseQuantity's fast path: the int64 amount, or 'decimal' where it falls back to inf.Dec. */
function parsedForm(text: string): Form {
  if (text === '0') return { value: 0n, scale: 0 };
  const match = /^([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(text);
  if (!match) return 'decimal';
  const [, sign, digits, denom = '', suffix] = match;
  const num = digits === '' ? '0' : digits;
  let exponent: number;
  let mantissa = 1n;
  let precision: number;
  if (suffix in BINARY_SUFFIX) {
    exponent = BINARY_SUFFIX[suffix];
    if (denom !== '') return 'decimal';
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    exponent = 0;
  } else {
    exponent = suffix in DECIMAL_SUFFIX ? DECIMAL_SUFFIX[suffix] : Number(suffix.slice(1));
    precision = 18 - (num.length + denom.length);
  }
  if (precision < 0) return 'decimal';
  const scale = exponent - denom.length;
  if (scale < -9) return 'decimal';
  const value = BigInt(num + denom) * mantissa;
  if (!fitsInt64(value)) return 'decimal';
  return { value: sign === '-' ? -value : value, scale };
}

/** int64Amount.Add (false in Go, 'decimal' here, where the sum leaves int64). */
function addForms(a: Form, b: Form): Form {
  if (a === 'decimal' || b === 'decimal') return 'decimal';
  if (b.value === 0n) return a;
  if (a.value === 0n) return b;
  const scale = Math.min(a.scale, b.scale);
  const left = a.value * 10n ** BigInt(a.scale - scale);
  const right = b.value * 10n ** BigInt(b.scale - scale);
  if (!fitsInt64(left) || !fitsInt64(right) || !fitsInt64(left + right)) return 'decimal';
  return { value: left + right, scale };
}

const negated = (f: Form): Form => (f === 'decimal' ? f : { value: -f.value, scale: f.scale });

/** Quantity.AsInt64. */
function asInt64(form: Form): bigint | undefined {
  if (form === 'decimal' || form.scale < 0) return undefined;
  const value = form.value * 10n ** BigInt(form.scale);
  return fitsInt64(value) ? value : undefined;
}

/** The protobuf message inside a CEL value (@bufbuild/cel wraps what a function returns). */
const messageOf = (value: unknown): object | undefined =>
  value !== null && typeof value === 'object' ? ((value as { message?: object }).message ?? value) : undefined;

function formOf(value: unknown): Form {
  const key = messageOf(value);
  const form = key ? forms.get(key) : undefined;
  if (form) return form;
  // Not made here (never expected): the whole value, exact when integral.
  const nanos = nanosOf(value);
  return nanos % NANO === 0n && fitsInt64(nanos / NANO) ? { value: nanos / NANO, scale: 0 } : 'decimal';
}

function withForm(nanos: bigint, form: Form): unknown {
  const value = wrap(nanos);
  const key = messageOf(value);
  if (key) forms.set(key, form);
  return value;
}

function quantityOf(text: string) {
  const nanos = parseQuantity(text);
  if (nanos === undefined) {
    // apimachinery's ErrFormatWrong when the shape is wrong, ErrSuffix when only the suffix is.
    throw new Error(
      /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/.test(text) ? "unable to parse quantity's suffix" : PARSE_ERROR,
    );
  }
  return withForm(nanos, parsedForm(text)) as never;
}

function asInteger(quantity: unknown): bigint {
  const value = asInt64(formOf(quantity));
  if (value === undefined) throw new Error('cannot convert value to integer');
  return value;
}

const compare = (a: bigint, b: bigint): bigint => (a < b ? -1n : a > b ? 1n : 0n);

export const quantityLibrary: CelFunc[] = [
  celFunc('quantity', [STRING], QUANTITY.type, quantityOf),
  celFunc('isQuantity', [STRING], BOOL, (text) => parseQuantity(text) !== undefined),
  // A global function upstream (`sign(q)`), so `q.sign()` does not compile.
  celFunc('sign', [QUANTITY.type], INT, (q) => compare(nanosOf(q), 0n)),
  // Upstream's AsInt64 (see Form above).
  celMethod('isInteger', QUANTITY.type, [], BOOL, function () {
    return asInt64(formOf(this)) !== undefined;
  }),
  celMethod('asInteger', QUANTITY.type, [], INT, function () {
    return asInteger(this);
  }),
  celMethod('asApproximateFloat', QUANTITY.type, [], DOUBLE, function () {
    return Number(nanosOf(this)) / 1e9;
  }),
  celMethod('add', QUANTITY.type, [QUANTITY.type], QUANTITY.type, function (other) {
    return withForm(nanosOf(this) + nanosOf(other), addForms(formOf(this), formOf(other))) as never;
  }),
  celMethod('add', QUANTITY.type, [INT], QUANTITY.type, function (other) {
    return withForm(nanosOf(this) + other * NANO, addForms(formOf(this), { value: other, scale: 0 })) as never;
  }),
  celMethod('sub', QUANTITY.type, [QUANTITY.type], QUANTITY.type, function (other) {
    return withForm(nanosOf(this) - nanosOf(other), addForms(formOf(this), negated(formOf(other)))) as never;
  }),
  celMethod('sub', QUANTITY.type, [INT], QUANTITY.type, function (other) {
    return withForm(nanosOf(this) - other * NANO, addForms(formOf(this), { value: -other, scale: 0 })) as never;
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
