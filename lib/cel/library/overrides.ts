// Where @bufbuild/cel's functions answer differently from cel-go's, these overloads are tried
// first (cel-env.ts): `duration.getMilliseconds()` is the whole duration in milliseconds in cel-go
// (not the millisecond part); the strings extension counts code points, and `split` and `replace`
// are Go's strings.SplitN and strings.Replace (an empty separator works between code points).
import { create } from '@bufbuild/protobuf';
import {
  CelScalar,
  celFunc,
  celUint,
  celMethod,
  isCelList,
  isCelMap,
  isCelType,
  isCelUint,
  listType,
  objectType,
} from '@bufbuild/cel';
import type { CelFunc, CelList } from '@bufbuild/cel';
import { DurationSchema, TimestampSchema } from '@bufbuild/protobuf/wkt';
import { compiledRegex } from './regex.js';
import {
  durationText,
  goFloat,
  goParseFloat,
  isTimestamp,
  offsetOf,
  rfc3339Offset,
  timestampText,
  withOffset,
} from './time.js';

const { INT, STRING } = CelScalar;
const DURATION = objectType(DurationSchema);
const TIMESTAMP = objectType(TimestampSchema);

/**
 * What happens after @bufbuild/cel's own overload answered: a timestamp made from text, or moved by
 * a duration, keeps the UTC offset it was written with (time.ts).
 */
export const resultHooks: Readonly<Record<string, (result: unknown, args: readonly unknown[]) => void>> = {
  timestamp(result, [text]) {
    if (typeof text === 'string' && isTimestamp(result)) withOffset(result, rfc3339Offset(text));
  },
  '_+_'(result, [a, b]) {
    if (isTimestamp(result)) withOffset(result, offsetOf(isTimestamp(a) ? a : b));
  },
  '_-_'(result, [a]) {
    if (isTimestamp(result)) withOffset(result, offsetOf(a));
  },
};

/** Go's strings.Replace(s, old, new, n) (n < 0: all). */
function goReplace(text: string, search: string, replacement: string, limit: bigint): string {
  if (limit === 0n) return text;
  if (search !== '') {
    const parts = text.split(search);
    if (limit < 0n || BigInt(parts.length - 1) <= limit) return parts.join(replacement);
    const n = Number(limit);
    return parts.slice(0, n + 1).join(replacement) + search + parts.slice(n + 1).join(search);
  }
  const runes = [...text];
  let out = '';
  let done = 0n;
  for (let i = 0; i <= runes.length; i++) {
    if (limit < 0n || done < limit) {
      out += replacement;
      done++;
    }
    if (i < runes.length) out += runes[i];
  }
  return out;
}

/** Go's strings.SplitN (n < 0: all; an empty separator splits into code points). */
function goSplit(text: string, separator: string, limit: bigint): string[] {
  if (limit === 0n) return [];
  const n = limit < 0n ? Number.POSITIVE_INFINITY : Number(limit);
  if (separator === '') {
    const runes = [...text];
    if (runes.length <= n) return runes;
    return [...runes.slice(0, n - 1), runes.slice(n - 1).join('')];
  }
  const parts = text.split(separator);
  if (parts.length <= n) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(separator)];
}

const outOfRange = (index: bigint) => new Error(`index out of range: ${index}`);

/**
 * cel-go's indexOf and lastIndexOf (ext/strings.go): code-point positions; an empty search answers
 * the offset unchecked, a negative offset is an error and one at or past the end answers -1.
 * `lastIndexOf(s)` searches from the last code point, so on an empty text it fails at offset -1.
 */
function runeIndex(text: string, search: string, offset: bigint | undefined, last: boolean): bigint {
  const runes = [...text];
  if (search === '') return offset ?? (last ? BigInt(runes.length) : 0n);
  const from = offset ?? (last ? BigInt(runes.length - 1) : 0n);
  if (from < 0n) throw outOfRange(from);
  if (from >= BigInt(runes.length)) return -1n;
  const sub = [...search];
  const matches = (i: number) => sub.every((r, j) => runes[i + j] === r);
  if (!last) {
    for (let i = Number(from); i < runes.length - (sub.length - 1); i++) if (matches(i)) return BigInt(i);
    return -1n;
  }
  const start = Math.min(Number(from), runes.length - sub.length);
  for (let i = start; i >= 0; i--) if (matches(i)) return BigInt(i);
  return -1n;
}

/** cel-go's substring: the range is checked first, in cel-go's words. */
function substring(text: string, start: bigint, end?: bigint): string {
  const runes = [...text];
  const stop = end ?? BigInt(runes.length);
  if (start > stop && end !== undefined) throw new Error(`invalid substring range. start: ${start}, end: ${end}`);
  if (start < 0n || start > BigInt(runes.length)) throw outOfRange(start);
  if (stop < 0n || stop > BigInt(runes.length)) throw outOfRange(stop);
  return runes.slice(Number(start), Number(stop)).join('');
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;
/** time.Unix's range as cel-go bounds it: years 1 to 9999. */
const MIN_UNIX_SECONDS = -62135596800n;
const MAX_UNIX_SECONDS = 253402300799n;

/** cel-go's String.ConvertToType error: every failed parse reads the same. */
const conversionError = (to: string) => new Error(`type conversion error from 'string' to '${to}'`);

/** strconv.ParseBool's spellings. */
const BOOL_TEXT: Readonly<Record<string, boolean>> = {
  '1': true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const overrides: CelFunc[] = [
  // strconv.ParseInt(s, 10, 64) and ParseUint(s, 10, 64): decimal digits only, a sign for int only.
  celFunc('int', [STRING], INT, (text) => {
    if (!/^[+-]?[0-9]+$/.test(text)) throw conversionError('int');
    const value = BigInt(text);
    if (value > INT64_MAX || value < -INT64_MAX - 1n) throw conversionError('int');
    return value;
  }),
  celFunc('uint', [STRING], CelScalar.UINT, (text) => {
    if (!/^[0-9]+$/.test(text) || BigInt(text) > UINT64_MAX) throw conversionError('uint');
    return celUint(BigInt(text));
  }),
  celFunc('bool', [STRING], CelScalar.BOOL, (text) => {
    const value = BOOL_TEXT[text];
    if (value === undefined) throw conversionError('bool');
    return value;
  }),
  celFunc('string', [CelScalar.BYTES], STRING, (bytes) => {
    try {
      return utf8.decode(bytes);
    } catch {
      throw new Error('invalid UTF-8 in bytes, cannot convert to string');
    }
  }),
  // Int.ConvertToType(TimestampType): seconds since the epoch, within years 1 to 9999.
  celFunc('timestamp', [INT], TIMESTAMP, (seconds) => {
    if (seconds < MIN_UNIX_SECONDS || seconds > MAX_UNIX_SECONDS) throw new Error('timestamp overflow');
    return create(TimestampSchema, { seconds, nanos: 0 }) as never;
  }),
  celFunc('string', [TIMESTAMP], STRING, (t) => timestampText(t as never)),
  celFunc('string', [DURATION], STRING, (d) => durationText(d as never)),
  celFunc('string', [CelScalar.DOUBLE], STRING, goFloat),
  celFunc('double', [STRING], CelScalar.DOUBLE, (text) => {
    const value = goParseFloat(text);
    if (value === undefined) throw new Error("type conversion error from 'string' to 'double'");
    return value;
  }),
  celMethod('getMilliseconds', DURATION, [], INT, function () {
    const { seconds, nanos } = (this as unknown as { message: { seconds: bigint; nanos: number } }).message;
    return BigInt(seconds) * 1000n + BigInt(Math.trunc(nanos / 1_000_000));
  }),
  // The strings extension counts code points, as cel-go's does (JavaScript's methods count UTF-16 units).
  celMethod('substring', STRING, [INT], STRING, function (start) {
    return substring(this, start);
  }),
  celMethod('substring', STRING, [INT, INT], STRING, function (start, end) {
    return substring(this, start, end);
  }),
  celMethod('charAt', STRING, [INT], STRING, function (index) {
    const runes = [...this];
    if (index < 0n || index > BigInt(runes.length)) throw outOfRange(index);
    return runes[Number(index)] ?? '';
  }),
  celMethod('indexOf', STRING, [STRING], INT, function (search) {
    return runeIndex(this, search, undefined, false);
  }),
  celMethod('indexOf', STRING, [STRING, INT], INT, function (search, offset) {
    return runeIndex(this, search, offset, false);
  }),
  celMethod('lastIndexOf', STRING, [STRING], INT, function (search) {
    return runeIndex(this, search, undefined, true);
  }),
  celMethod('lastIndexOf', STRING, [STRING, INT], INT, function (search, offset) {
    return runeIndex(this, search, offset, true);
  }),
  celMethod('split', STRING, [STRING], listType(STRING), function (separator) {
    return goSplit(this, separator, -1n);
  }),
  celMethod('split', STRING, [STRING, INT], listType(STRING), function (separator, limit) {
    return goSplit(this, separator, limit);
  }),
  celMethod('replace', STRING, [STRING, STRING], STRING, function (search, replacement) {
    return goReplace(this, search, replacement, -1n);
  }),
  celMethod('replace', STRING, [STRING, STRING, INT], STRING, function (search, replacement, limit) {
    return goReplace(this, search, replacement, limit);
  }),
];

// cel-go's string.format (ext.Strings version 2, locale en_US), which Kubernetes' policies get:
// `%s` prints values as cel-go's string() does (`+Inf`, `1` for 1.0, `1e+06`), and lists and maps
// as CEL literals (strings quoted, doubles to 6 places, NaN and infinities quoted, map keys sorted);
// `%f` and `%e` print as golang.org/x/text does for en_US (`1,234.568`, `1.234500×10⁰³`, `∞`).
type TimeMessage = { desc?: { typeName?: string }; message?: { seconds: bigint; nanos: number } };
const timeKind = (v: unknown) => (v as TimeMessage | null)?.desc?.typeName;

// %f and %e go through golang.org/x/text's message printer for locale en_US: thousands grouped,
// infinities as ∞, and the exponent as `×10` with superscript digits (at least two, a superscript
// minus before a negative exponent). A v1.36 apiserver prints no space on either side of the sign
// (`3.140000×10⁰⁰`), though one of cel-go's tests expects narrow no-break spaces there. The digits
// come from strconv, which rounds the double's exact value half to even (JavaScript's toFixed and
// toExponential round a tie up), so the rounding here is done on the exact value.

/** The double's exact value as numerator / denominator (a power of two). */
function exactValue(abs: number): [bigint, bigint] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, abs);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  return exponent >= 0 ? [mantissa << BigInt(exponent), 1n] : [mantissa, 1n << BigInt(-exponent)];
}

/** numerator / denominator rounded to an integer, a tie to the even neighbour. */
function roundHalfEven(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  const twice = 2n * (numerator % denominator);
  return twice > denominator || (twice === denominator && quotient % 2n === 1n) ? quotient + 1n : quotient;
}

/** `abs × 10^shift` rounded half to even. */
function scaled(abs: number, shift: number): bigint {
  const [numerator, denominator] = exactValue(abs);
  return shift >= 0
    ? roundHalfEven(numerator * 10n ** BigInt(shift), denominator)
    : roundHalfEven(numerator, denominator * 10n ** BigInt(-shift));
}

/** Fixed-point digits, grouped by thousands for x/text (`%f`) or not for Go's fmt (list elements). */
function goFixed(value: number, precision: number, grouped = true): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const digits = scaled(Math.abs(value), precision)
    .toString()
    .padStart(precision + 1, '0');
  const whole = digits.slice(0, digits.length - precision);
  const fraction = precision > 0 ? `.${digits.slice(-precision)}` : '';
  // x/text signs only a value below zero; Go's fmt also prints -0's sign.
  if (!grouped) return `${value < 0 || Object.is(value, -0) ? '-' : ''}${whole}${fraction}`;
  return `${value < 0 ? '-' : ''}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction}`;
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/**
 * %e. cel-go builds the verb as `%<precision>e`, so the clause's precision is a width there (x/text
 * pads NaN and the infinities to it) and the mantissa always has Go's default six decimals.
 */
function goScientific(value: number, width: number): string {
  if (!Number.isFinite(value)) return (Number.isNaN(value) ? 'NaN' : value > 0 ? '∞' : '-∞').padStart(width, ' ');
  const abs = Math.abs(value);
  let exponent = abs === 0 ? 0 : Math.floor(Math.log10(abs));
  let digits = abs === 0 ? 0n : scaled(abs, 6 - exponent);
  // log10 can be one off near a power of ten, and rounding can carry into a new digit.
  while (digits >= 10_000_000n) digits = scaled(abs, 6 - ++exponent);
  while (abs !== 0 && digits < 1_000_000n) digits = scaled(abs, 6 - --exponent);
  const text = digits.toString().padStart(7, '0');
  const power = [...String(Math.abs(exponent)).padStart(2, '0')].map((d) => SUPERSCRIPT[Number(d)]).join('');
  return `${value < 0 ? '-' : ''}${text[0]}.${text.slice(1)}×10${exponent < 0 ? '⁻' : ''}${power}`;
}

const quote = (s: string) => JSON.stringify(s);
const isDouble = (v: unknown): v is number => typeof v === 'number';

/** %s: cel-go's FormatString. */
function formatString(v: unknown): string {
  if (isCelList(v)) return `[${[...v].map(literal).join(', ')}]`;
  if (isCelMap(v)) {
    const pairs = [...v].map(([k, value]) => {
      if (typeof k !== 'string' && typeof k !== 'boolean' && typeof k !== 'bigint' && !isCelUint(k))
        throw new Error('no formatting function for map key');
      return [typeof k === 'string' ? quote(k) : String(isCelUint(k) ? k.value : k), literal(value)] as const;
    });
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `{${pairs.map(([k, value]) => `${k}:${value}`).join(', ')}}`;
  }
  if (v === null) return 'null';
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (isCelUint(v)) return String(v.value);
  if (isDouble(v)) return goFloat(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  const kind = timeKind(v);
  if (kind === 'google.protobuf.Timestamp') return timestampText(v as never);
  if (kind === 'google.protobuf.Duration') return durationText(v as never);
  if (isCelType(v)) return String(v);
  throw new Error(
    `error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${typeName(v)}`,
  );
}

/** An element of a list or map printed by %s: as a CEL literal. */
function literal(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (v instanceof Uint8Array) return `b${quote(Buffer.from(v).toString('utf8'))}`;
  if (isDouble(v)) return Number.isFinite(v) ? goFixed(v, 6, false) : quote(goFloat(v));
  const kind = timeKind(v);
  if (kind === 'google.protobuf.Timestamp') return `timestamp(${quote(formatString(v))})`;
  if (kind === 'google.protobuf.Duration') return `duration(${quote(formatString(v))})`;
  if (isCelType(v)) return `type(${String(v)})`;
  return formatString(v);
}

function typeName(v: unknown): string {
  if (typeof v === 'bigint') return 'int';
  if (isDouble(v)) return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (isCelUint(v)) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (isCelList(v)) return 'list';
  if (isCelMap(v)) return 'map';
  if (v === null) return 'null_type';
  return timeKind(v) ?? 'type';
}

const NUMBER_WORDS = new Set(['NaN', 'Infinity', '-Infinity']);
function asFloat(v: unknown, clause: string): number {
  if (isDouble(v)) return v;
  if (typeof v === 'string' && NUMBER_WORDS.has(v)) return Number(v);
  throw new Error(`error during formatting: ${clause} clause can only be used on doubles, was given ${typeName(v)}`);
}

function integer(v: unknown, clause: string, bools = false): bigint {
  if (typeof v === 'bigint') return v;
  if (isCelUint(v)) return v.value;
  if (bools && typeof v === 'boolean') return v ? 1n : 0n;
  throw new Error(
    `error during formatting: ${clause} clause can only be used on integers${bools ? ', bools' : ''}, was given ${typeName(v)}`,
  );
}

const radix = (n: bigint, base: number) => (n < 0n ? `-${(-n).toString(base)}` : n.toString(base));

function format(template: string, args: CelList): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    if (template[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    // parseFormatString: the argument is fetched before the clause is read.
    if (next >= args.size) throw new Error(`index ${next} out of range`);
    if (i + 1 >= template.length) throw new Error('unexpected end of string');
    const clause = /^\.[0-9]*/.exec(template.slice(i + 1))?.[0] ?? '';
    const parsing = 'could not parse formatting clause: error while parsing precision';
    if (clause !== '' && i + 1 + clause.length >= template.length)
      throw new Error(`${parsing}: could not find end of precision specifier`);
    if (clause === '.')
      throw new Error(
        `${parsing}: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax`,
      );
    const precision = clause.length > 1 ? Number(clause.slice(1)) : 6;
    i += clause.length;
    const verb = template[i + 1];
    i++;
    const arg = args.get(next++);
    switch (verb) {
      case 's':
        out += formatString(arg);
        break;
      case 'd':
        out += String(integer(arg, 'decimal'));
        break;
      case 'f':
        out += goFixed(asFloat(arg, 'fixed-point'), precision);
        break;
      case 'e':
        out += goScientific(asFloat(arg, 'scientific'), precision);
        break;
      case 'b':
        out += radix(integer(arg, 'binary', true), 2);
        break;
      case 'o':
        out += radix(integer(arg, 'octal'), 8);
        break;
      case 'x':
      case 'X': {
        let hex: string;
        if (typeof arg === 'string') hex = Buffer.from(arg, 'utf8').toString('hex');
        else if (arg instanceof Uint8Array) hex = Buffer.from(arg).toString('hex');
        else hex = radix(integer(arg, 'hex'), 16);
        out += verb === 'X' ? hex.toUpperCase() : hex;
        break;
      }
      default:
        throw new Error(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
    }
  }
  return out;
}

overrides.push(
  celMethod('format', STRING, [listType(CelScalar.DYN)], STRING, function (args) {
    return format(this, args);
  }),
);

// @bufbuild/cel's own `matches` compiles its pattern on every call; this one reuses the compiled
// pattern (the same RE2 program, the same answer and the same syntax error).
overrides.push(
  celMethod('matches', STRING, [STRING], CelScalar.BOOL, function (pattern) {
    return compiledRegex(pattern).test(this);
  }),
);
