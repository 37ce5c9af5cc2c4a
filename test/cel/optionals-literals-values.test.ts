// cel-go 0.26 behaviours policies rely on, each row a fact from upstream: the optional library at
// version 2 (cel/library.go: first, last, optional.unwrap, unwrapOpt; cel_test.go TestOptionalValues),
// interpreter/attributes.go's refQualify (an optional qualification of a value that is neither a
// map nor a list is absent), the checker's type parameters for `[]`, `{}` and optional.none(),
// evalMap (a Go map: the last of a repeated key wins), the parser's leading-dot names,
// common/types conversions (timestamp(int) in seconds, Go's zero time), ext/strings.go 0.26's
// indexOf/lastIndexOf, and ext/formatting.go's %f/%e through golang.org/x/text (strconv's rounding).
import { describe, expect, it } from 'vitest';
import { isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { CelCompileError, compileExpression } from '../../lib/cel/compile.js';
import { isOptional, optionalValue } from '../../lib/cel/library/optional.js';

const NONE = 'optional.none()';

function plain(value: unknown): unknown {
  if (isOptional(value)) {
    const inner = optionalValue(value);
    return inner === undefined ? NONE : { some: plain(inner) };
  }
  if (isCelList(value)) return [...value].map(plain);
  if (isCelMap(value)) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (isCelUint(value)) return value.value;
  return value;
}

/** The value with `object` bound, `{ error }` when evaluation fails, `{ compile }` when creation does. */
function evaluate(expression: string, object: unknown = {}): unknown {
  let compiled;
  try {
    compiled = compileExpression(expression, { variables: new Set() });
  } catch (error) {
    if (!(error instanceof CelCompileError)) throw error;
    return { compile: error.message.split('\n')[0] };
  }
  const outcome = compiled.evaluate({ object }, 1_000_000);
  return 'error' in outcome ? { error: outcome.error } : plain(outcome.value);
}

describe('optional library version 2: first, last, unwrap', () => {
  it.each<[string, unknown]>([
    ["['a', 'b', 'c'].first()", { some: 'a' }],
    ["['a', 'b', 'c'].last()", { some: 'c' }],
    ['[].first()', NONE],
    ['[].last()', NONE],
    ['[1].first().value() + [2].last().value()', 3n],
    ['optional.unwrap([optional.of(42), optional.none()])', [42n]],
    ['[optional.of(42), optional.none()].unwrapOpt()', [42n]],
    ['optional.unwrap([]) == []', true],
    ['[optional.none()].unwrapOpt().size()', 0n],
    ['object.items.first().orValue(0)', 7n],
    ['object.none.first().orValue(0)', 0n],
    ['optional.unwrap(dyn([1]))', { error: 'value 1 is not optional' }],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression, { items: [7n, 8n], none: [] })).toEqual(expected);
  });

  it.each<[string, string]>([
    ['[1].unwrapOpt()', "found no matching overload for 'unwrapOpt' applied to 'list(int).()'"],
    ["'a'.first()", "found no matching overload for 'first' applied to 'string.()'"],
  ])('%s is refused', (expression, message) => {
    expect(evaluate(expression)).toEqual({ compile: expect.stringContaining(message) });
  });

  it('first() and last() are typed by the list: optional_type(int)', () => {
    expect(evaluate('[1].first().value() == 1.0')).toEqual({
      compile: expect.stringContaining("found no matching overload for '_==_' applied to '(int, double)'"),
    });
  });
});

describe('.? and [?] on a value that is neither a map nor a list give optional.none()', () => {
  it.each<[string, unknown]>([
    ['object.n.?a', NONE],
    ['object.n[?0]', NONE],
    ['object.i.?a', NONE],
    ['object.i[?"k"].orValue("absent")', 'absent'],
    ['object.s.?x.y.orValue(1)', 1n],
    ['object.m.?k', { some: 'v' }],
    ['object.m[?"missing"]', NONE],
    ['object.l[?1]', { some: 2n }],
    ['object.l[?5]', NONE],
    ['optional.of(1).?a', { compile: expect.stringContaining("type 'int' does not support field selection") }],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression, { n: null, i: 1n, s: 'text', m: { k: 'v' }, l: [1n, 2n] })).toEqual(expected);
  });
});

describe('literals take the types of their siblings; ? entries check with the element types', () => {
  it.each<[string, unknown]>([
    ['[[], [[]]]', [[], [[]]]],
    ['[[], [1]] == [[], [1]]', true],
    ["{'a': {}, 'b': {'c': 1}}.size()", 2n],
    ['[optional.none(), optional.of(1)].size()', 2n],
    ['[optional.of(1), optional.none()][1].orValue(2) + 1', 3n],
    ['[?optional.of(1), 2]', [1n, 2n]],
    ['[1, ?optional.none(), 3]', [1n, 3n]],
    ["{?'a': optional.of(1), 'b': 2}", { a: 1n, b: 2n }],
    ["{?'a': optional.none(), 'b': 2}", { b: 2n }],
    ['[].size() == 0 && {}.size() == 0', true],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toEqual(expected);
  });

  it.each<[string, string]>([
    ["[?optional.of('a'), 1]", "expected type 'string' but found 'int'"],
    ["{?'a': optional.of(1), 'b': 'x'}", "expected type 'int' but found 'string'"],
    ['[[1], [1.5]]', "expected type 'list(int)' but found 'list(double)'"],
    ['[?1]', "expected type 'optional_type(int)' but found 'int'"],
  ])('%s is refused: %s', (expression, message) => {
    expect(evaluate(expression)).toEqual({ compile: expect.stringContaining(message) });
  });

  it('a repeated map literal key keeps the last value', () => {
    expect(evaluate("{'a': 1, 'b': 2, 'a': 3}")).toEqual({ a: 3n, b: 2n });
    expect(evaluate('{object.a: 1, object.b: 2}["k"]', { a: 'k', b: 'k' })).toBe(2n);
  });
});

describe('a leading-dot name is the root variable, never the comprehension variable', () => {
  it.each<[string, unknown]>([
    ['[1, 2].map(object, .object.x + object)', [11n, 12n]],
    ['[1, 2].exists(object, .object.x == object)', false],
    ['[10].all(object, .object.x == object)', true],
    ['.object.x', 10n],
    ['[1].map(y, .y)', { compile: expect.stringContaining("undeclared reference to '.y'") }],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression, { x: 10n })).toEqual(expected);
  });
});

describe('timestamps: int seconds, years 1 to 9999, and Go zero time', () => {
  it.each<[string, unknown]>([
    ['string(timestamp(1000))', '1970-01-01T00:16:40Z'],
    ['string(timestamp(0))', '1970-01-01T00:00:00Z'],
    ['string(timestamp(-62135596800))', '0001-01-01T00:00:00Z'],
    ['string(timestamp(253402300799))', '9999-12-31T23:59:59Z'],
    ['timestamp(object.big)', { error: 'timestamp overflow' }],
    ['timestamp(object.small)', { error: 'timestamp overflow' }],
    ['int(timestamp(1000))', 1000n],
    ['optional.ofNonZeroValue(timestamp(0)).hasValue()', true],
    ["optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00Z')).hasValue()", false],
    ["optional.ofNonZeroValue(duration('0s')).hasValue()", false],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression, { big: 253402300800n, small: -62135596801n })).toEqual(expected);
  });
});

// ext/strings_test.go (cel-go 0.26): an offset past the end is -1, a negative one an error.
describe('indexOf and lastIndexOf past the end', () => {
  it.each<[string, unknown]>([
    ["'tacocat'.indexOf('a', 30) == -1", true],
    ["'tacocat'.lastIndexOf('a', 30) == -1", true],
    ["'tacocat'.indexOf('t', 7) == -1", true],
    ["'tacocat'.lastIndexOf('t', 6) == 6", true],
    ["'tacocat'.indexOf('', 30) == 30", true],
    ["'tacocat'.indexOf('a', -1)", { error: 'index out of range: -1' }],
    ["''.lastIndexOf('a')", { error: 'index out of range: -1' }],
    ["''.indexOf('a') == -1", true],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toEqual(expected);
  });
});

// golang.org/x/text's printer as cel-go calls it: `%.<p>f`, and `%<p>e` (a width, not a precision).
describe('%f rounds half to even, %e pads its specials to its width', () => {
  it.each<[string, string]>([
    ["'%.2f'.format([0.125])", '0.12'],
    ["'%.2f'.format([0.375])", '0.38'],
    ["'%.0f'.format([2.5])", '2'],
    ["'%.0f'.format([3.5])", '4'],
    ["'%.1f'.format([0.25])", '0.2'],
    ["'%.2f'.format([1.005])", '1.00'],
    ["'%f'.format([1e21])", '1,000,000,000,000,000,000,000.000000'],
    ["'%f'.format([-0.0])", '0.000000'],
    ["'%s'.format([[-0.0, 0.125]])", '[-0.000000, 0.125000]'],
    ["'%e'.format([1052.032911275])", '1.052033×10⁰³'],
    ["'%e'.format([1234568.5])", '1.234568×10⁰⁶'],
    ["'%e'.format([9.9999999])", '1.000000×10⁰¹'],
    ["'%e'.format([-0.00012345])", '-1.234500×10⁻⁰⁴'],
    ["'%e'.format([0.0])", '0.000000×10⁰⁰'],
    ["'%e'.format([double('NaN')])", '   NaN'],
    ["'%.2e'.format([double('Infinity')])", ' ∞'],
    ["'%.8e'.format([double('-Infinity')])", '      -∞'],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toBe(expected);
  });
});

describe('conversions fail in cel-go words when evaluated', () => {
  it.each<[string, unknown]>([
    ['int(object.s)', { error: "type conversion error from 'string' to 'int'" }],
    ['uint(object.s)', { error: "type conversion error from 'string' to 'uint'" }],
    ['bool(object.s)', { error: "type conversion error from 'string' to 'bool'" }],
    ['timestamp(object.s)', { error: "type conversion error from 'string' to 'google.protobuf.Timestamp'" }],
    ['duration(object.s)', { error: "type conversion error from 'string' to 'google.protobuf.Duration'" }],
    ["'abc'.find(object.s)", { error: 'Illegal regex: error parsing regexp: missing closing ): `(x`' }],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression, { s: '(x' })).toEqual(expected);
  });
});
