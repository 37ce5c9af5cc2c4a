// JSON numbers typed as the apiserver's unstructured decoding types them (apimachinery
// util/json's convertNumber: int64 when the text parses as one, else float64), which is what CEL
// sees in a native ValidatingAdmissionPolicy or MutatingAdmissionPolicy.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAdmissionReview } from '../../lib/admission/request.js';
import {
  hasAmbiguousNumbers,
  parseUnstructured,
  toUnstructured,
  unstructuredRequest,
} from '../../lib/admission/unstructured.js';

describe('parseUnstructured', () => {
  it.each([
    ['10', 10n],
    ['-7', -7n],
    ['-0', 0n],
    ['10.0', 10],
    ['1e3', 1000],
    ['1E+3', 1000],
    ['2.5', 2.5],
    ['9007199254740993', 9007199254740993n], // 2^53 + 1: JSON.parse gives ...992
    ['9223372036854775807', 9223372036854775807n], // int64 max
    ['-9223372036854775808', -9223372036854775808n], // int64 min
    ['9223372036854775808', 2 ** 63], // beyond int64: Go's ParseInt fails, a float64
    ['18446744073709551615', 2 ** 64], // uint64 max is a float too (the nearest double is 2^64)
  ])('%s is %o', (text, expected) => {
    expect(parseUnstructured(text)).toBe(expected);
    expect(parseUnstructured(`{"a":[${text}]}`)).toEqual({ a: [expected] });
  });

  it('reads strings with escapes, nesting, whitespace and literals as JSON.parse does', () => {
    const text = ' {"a\\"1.0": "x\\u00e9\\n2.0", "b" : [ true, false, null, {}, [] ], "c": {"d": -1.25e-2}} ';
    expect(parseUnstructured(text)).toEqual({
      'a"1.0': 'xé\n2.0',
      b: [true, false, null, {}, []],
      c: { d: -0.0125 },
    });
  });

  it('refuses what is not JSON', () => {
    for (const text of ['{', '[1,]', '{"a" 1}', 'tru', '1 2', '{1: 2}'])
      expect(() => parseUnstructured(text)).toThrow();
  });

  it('gives the same values as JSON.parse, numbers aside', () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (text) => {
        const plain = (v: unknown): unknown =>
          typeof v === 'bigint'
            ? Number(v)
            : Array.isArray(v)
              ? v.map(plain)
              : v !== null && typeof v === 'object'
                ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
                : v;
        expect(plain(parseUnstructured(text))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('needs no reparse exactly when converting JSON.parse output gives the same typed values', () => {
    // The fast path (convert the parsed body) is only taken when it is exact.
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (text) => {
        if (!hasAmbiguousNumbers(text)) expect(toUnstructured(JSON.parse(text))).toEqual(parseUnstructured(text));
      }),
    );
  });
});

describe('hasAmbiguousNumbers', () => {
  it.each([
    ['{"replicas": 3, "image": "nginx:1.14.2", "ratio": 0.5}', false],
    ['{"note": "10.0 and 9007199254740993 in a string"}', false],
    ['{"weight": 10.0}', true],
    ['{"weight": 1e3}', true],
    ['{"id": 9007199254740993}', true],
    ['{"id": 9007199254740991}', false], // 2^53 - 1 is exact in both
    ['{"note": "a \\" quote, then 10.0", "n": 1}', false], // an escaped quote does not end the string
    ['{"path": "C:\\\\", "w": 10.0}', true], // an escaped backslash does not escape the quote
    ['[1, 2.0]', true],
  ])('%s: %s', (text, expected) => {
    expect(hasAmbiguousNumbers(text)).toBe(expected);
  });
});

describe('unstructuredRequest', () => {
  const review = (object: string) =>
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"operation":"CREATE","userInfo":{"username":"u"},"object":${object},"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}`;

  it('keeps a float written 10.0 a float and a big int64 exact, from the review text', () => {
    const text = review('{"spec":{"weight":10.0,"count":10,"id":9007199254740993}}');
    const request = decodeAdmissionReview(JSON.parse(text), text);
    expect(unstructuredRequest(request).object).toEqual({ spec: { weight: 10, count: 10n, id: 9007199254740993n } });
    expect(typeof (unstructuredRequest(request).object as { spec: { weight: unknown } }).spec.weight).toBe('number');
  });

  it('types integral numbers as ints without the text, as before', () => {
    const text = review('{"spec":{"count":10,"ratio":0.5}}');
    const withText = unstructuredRequest(decodeAdmissionReview(JSON.parse(text), text));
    const withoutText = unstructuredRequest(decodeAdmissionReview(JSON.parse(text)));
    expect(withText).toEqual(withoutText);
    expect(withText.object).toEqual({ spec: { count: 10n, ratio: 0.5 } });
    expect(withText.oldObject).toBeNull();
  });
});

describe('a key named __proto__', () => {
  it('is an own key, as JSON.parse and Go keep it, in both conversions', () => {
    const text = '{"__proto__":{"a":1},"b":2}';
    for (const value of [parseUnstructured(text), toUnstructured(JSON.parse(text))]) {
      expect(Object.keys(value as object)).toEqual(['__proto__', 'b']);
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect((value as Record<string, unknown>).b).toBe(2n);
    }
  });
});
