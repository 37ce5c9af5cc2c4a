// Where @bufbuild/cel's functions answer differently from cel-go's, these overloads are tried
// first (cel-env.ts): `duration.getMilliseconds()` is the whole duration in milliseconds in cel-go
// (not the millisecond part); the strings extension counts code points, and `split` and `replace`
// are Go's strings.SplitN and strings.Replace (an empty separator works between code points).
import {
  CelScalar,
  celFunc,
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

/** cel-go's indexOf and lastIndexOf: code-point positions, the offset checked first. */
function runeIndex(text: string, search: string, offset: bigint | undefined, last: boolean): bigint {
  const runes = [...text];
  if (offset !== undefined && (offset < 0n || offset > BigInt(runes.length))) throw outOfRange(offset);
  if (search === '') return offset ?? (last ? BigInt(runes.length) : 0n);
  const sub = [...search];
  const matches = (i: number) => sub.every((r, j) => runes[i + j] === r);
  if (!last) {
    for (let i = Number(offset ?? 0n); i <= runes.length - sub.length; i++) if (matches(i)) return BigInt(i);
    return -1n;
  }
  let start = offset === undefined ? runes.length - sub.length : Number(offset);
  if (start + sub.length > runes.length) start = runes.length - sub.length;
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

export const overrides: CelFunc[] = [
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
// `%f` and `%e` print as golang.org/x/text does for en_US (`1,234.568`, `1.234500 × 10⁰³`, `∞`).
type TimeMessage = { desc?: { typeName?: string }; message?: { seconds: bigint; nanos: number } };
const timeKind = (v: unknown) => (v as TimeMessage | null)?.desc?.typeName;

// %f and %e go through golang.org/x/text's message printer for locale en_US: thousands grouped,
// infinities as ∞, and the exponent as `× 10` with superscript digits (at least two).
function goFixed(value: number, precision: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const [whole, fraction] = Math.abs(value).toFixed(precision).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${value < 0 || Object.is(value, -0) ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/**
 * %e. cel-go builds the verb as `%<precision>e`, so the clause's precision is a width there and the
 * mantissa always has Go's default six decimals.
 */
function goScientific(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const [mantissa, exp] = value.toExponential(6).split('e');
  const exponent = Number(exp);
  const power = [...String(Math.abs(exponent)).padStart(2, '0')].map((d) => SUPERSCRIPT[Number(d)]).join('');
  return `${mantissa}\u202f×\u202f10${exponent < 0 ? '⁻' : ''}${power}`;
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
  if (isDouble(v)) return Number.isFinite(v) ? goFixed(v, 6).replace(/,/g, '') : quote(goFloat(v));
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
    const clause = /^\.[0-9]*/.exec(template.slice(i + 1))?.[0] ?? '';
    const precision = clause.length > 1 ? Number(clause.slice(1)) : 6;
    i += clause.length;
    const verb = template[i + 1];
    i++;
    if (verb === undefined) throw new Error('unexpected end of string');
    if (next >= args.size) throw new Error(`index ${next} out of range`);
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
        out += goScientific(asFloat(arg, 'scientific'));
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
