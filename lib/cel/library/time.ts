// cel-go's timestamps are Go time.Time values: `timestamp('2024-01-01T00:00:00+05:00')` keeps its
// UTC offset (time.Parse), `string()` prints it back in RFC 3339 with the fraction trimmed
// (time.RFC3339Nano, 'Z' for UTC), and adding or subtracting a duration keeps it. @bufbuild/cel
// holds a timestamp as a google.protobuf.Timestamp (an instant only), so the offset travels beside
// the value, keyed by the value itself. The getters without a zone read UTC either way, as
// Kubernetes' environment sets cel.DefaultUTCTimeZone(true).
//
// Durations and doubles print as cel-go converts them to strings: strconv.FormatFloat(seconds, 'f',
// -1) + "s", and strconv.FormatFloat(d, 'g', -1) (`1.234567e+06`, `1e-05`, `+Inf`).

interface TimeMessage {
  readonly desc?: { readonly typeName?: string };
  readonly message?: { readonly seconds: bigint; readonly nanos: number };
}

const kind = (v: unknown) => (v !== null && typeof v === 'object' ? (v as TimeMessage).desc?.typeName : undefined);
export const isTimestamp = (v: unknown): v is TimeMessage => kind(v) === 'google.protobuf.Timestamp';
export const isDuration = (v: unknown): v is TimeMessage => kind(v) === 'google.protobuf.Duration';

/** Seconds east of UTC a timestamp was written with; absent for UTC. */
const offsets = new WeakMap<object, number>();

/** The offset of an RFC 3339 text (`+05:30` → 19800), 0 for `Z`. */
export function rfc3339Offset(text: string): number {
  const zone = /([+-])(\d{2}):(\d{2})$/.exec(text);
  if (!zone) return 0;
  const seconds = Number(zone[2]) * 3600 + Number(zone[3]) * 60;
  return zone[1] === '-' ? -seconds : seconds;
}

/** Records `offset` for a timestamp value (nothing for UTC). */
export function withOffset<T>(value: T, offset: number): T {
  if (offset !== 0 && value !== null && typeof value === 'object') offsets.set(value, offset);
  return value;
}

export const offsetOf = (value: unknown): number =>
  value !== null && typeof value === 'object' ? (offsets.get(value) ?? 0) : 0;

const two = (n: number) => String(n).padStart(2, '0');

/** time.Time.Format(time.RFC3339Nano) of a timestamp in the offset it was written with. */
export function timestampText(value: TimeMessage): string {
  const { seconds, nanos } = value.message ?? { seconds: 0n, nanos: 0 };
  const offset = offsetOf(value);
  const local = new Date((Number(seconds) + offset) * 1000);
  const year = local.getUTCFullYear();
  const date = `${String(year).padStart(4, '0')}-${two(local.getUTCMonth() + 1)}-${two(local.getUTCDate())}`;
  const time = `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}`;
  const fraction = nanos ? `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
  if (offset === 0) return `${date}T${time}${fraction}Z`;
  const east = Math.abs(offset);
  const zone = `${offset < 0 ? '-' : '+'}${two(Math.floor(east / 3600))}:${two(Math.floor((east % 3600) / 60))}`;
  return `${date}T${time}${fraction}${zone}`;
}

/** Shortest round-trip digits of a finite non-zero double, and the decimal point's position. */
function digits(value: number): { digits: string; point: number } {
  const [mantissa, exponent] = Math.abs(value).toExponential().split('e');
  return { digits: mantissa.replace('.', ''), point: Number(exponent) + 1 };
}

/** strconv.FormatFloat(value, 'f', -1, 64). */
export function goFixedShortest(value: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const { digits: d, point } = digits(value);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${d}`;
  if (point >= d.length) return `${sign}${d}${'0'.repeat(point - d.length)}`;
  return `${sign}${d.slice(0, point)}.${d.slice(point)}`;
}

/** strconv.FormatFloat(value, 'g', -1, 64), as cel-go's string(double) prints. */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const { digits: d, point } = digits(value);
  const exponent = point - 1;
  // Shortest formatting switches to an exponent below 1e-4 and from 1e+06 (Go's eprec of 6).
  if (exponent < -4 || exponent >= 6) {
    const mantissa = d.length > 1 ? `${d[0]}.${d.slice(1)}` : d;
    const sign = exponent < 0 ? '-' : '+';
    return `${value < 0 ? '-' : ''}${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return goFixedShortest(value);
}

/** cel-go's string(duration): whole seconds as a float, shortest digits, then `s`. */
export function durationText(value: TimeMessage): string {
  const { seconds, nanos } = value.message ?? { seconds: 0n, nanos: 0 };
  return `${goFixedShortest(Number(seconds) + nanos / 1e9)}s`;
}

const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const SPECIAL: Record<string, number> = {
  inf: Infinity,
  '+inf': Infinity,
  '-inf': -Infinity,
  infinity: Infinity,
  '+infinity': Infinity,
  '-infinity': -Infinity,
  nan: NaN,
};

/** strconv.ParseFloat(text, 64) for decimal text, or undefined where Go reports an error. */
export function goParseFloat(text: string): number | undefined {
  const special = SPECIAL[text.toLowerCase()];
  if (special !== undefined) return special;
  if (!FLOAT.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}
