// Where @bufbuild/cel's functions answer differently from cel-go's, these overloads are tried
// first (cel-env.ts): `duration.getMilliseconds()` is the whole duration in milliseconds in cel-go
// (not the millisecond part), and `replace` with an empty search string inserts between runes, as
// Go's strings.Replace does.
import { CelScalar, celMethod, objectType } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import { DurationSchema } from '@bufbuild/protobuf/wkt';

const { INT, STRING } = CelScalar;
const DURATION = objectType(DurationSchema);

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

export const overrides: CelFunc[] = [
  celMethod('getMilliseconds', DURATION, [], INT, function () {
    const { seconds, nanos } = (this as unknown as { message: { seconds: bigint; nanos: number } }).message;
    return BigInt(seconds) * 1000n + BigInt(Math.trunc(nanos / 1_000_000));
  }),
  celMethod('replace', STRING, [STRING, STRING], STRING, function (search, replacement) { return goReplace(this, search, replacement, -1n); }),
  celMethod('replace', STRING, [STRING, STRING, INT], STRING, function (search, replacement, limit) { return goReplace(this, search, replacement, limit); }),
];
