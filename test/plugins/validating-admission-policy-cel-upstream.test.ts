// Upstream's own test tables, ported as facts: cel-go's optional-value tests (cel/cel_test.go
// TestOptionalValues), Kubernetes' CEL library tests (k8s.io/apiserver/pkg/cel/library/*_test.go)
// and cel-go's extension tests for the functions Kubernetes enables. Each row is an expression,
// its inputs, and the value or error upstream gives.
import { describe, expect, it } from 'vitest';
import { isCelError, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { CostMeter, policyEnvironment } from '../../lib/cel/cel-env.js';
import type { EnvironmentVersion } from '../../lib/cel/cel-env.js';
import { CelCompileError, compileExpression } from '../../lib/cel/compile.js';
import { FORMATS } from '../../lib/cel/library/format.js';
import { Compiler, asCel } from '../../lib/cel/interpreter.js';
import { isOptional, optionalOf, optionalValue } from '../../lib/cel/library/optional.js';
import { parseCel } from '../../lib/cel/parser.js';

const NONE = Symbol('optional.none()');
const some = (value: unknown) => ({ some: value });

/** A CEL value as plain data: lists as arrays, maps as objects, optionals as { some } or NONE. */
function plain(value: unknown): unknown {
  if (isOptional(value)) {
    const inner = optionalValue(value);
    return inner === undefined ? NONE : some(plain(inner));
  }
  if (isCelList(value)) return [...value].map(plain);
  if (isCelMap(value)) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (isCelUint(value)) return value.value;
  return value;
}

/** Evaluates with variables of our choosing (the interpreter alone: inputs are typed as upstream's test declares). */
function run(expression: string, inputs: Record<string, unknown>): unknown {
  const env = policyEnvironment();
  const program = new Compiler(env, new Set(Object.keys(inputs))).program(parseCel(expression, env.parse));
  const bindings = Object.fromEntries(
    Object.entries(inputs).map(([k, v]) => [
      k,
      v === NONE ? optionalOf(undefined) : isSome(v) ? optionalOf(asCel(v.some) as never) : v,
    ]),
  );
  const result = env.run(new CostMeter(1_000_000), () => program(bindings));
  if (isCelError(result)) return { error: result.message };
  return plain(result);
}
const isSome = (v: unknown): v is { some: unknown } =>
  typeof v === 'object' && v !== null && 'some' in v && Object.keys(v).length === 1;

describe('cel-go TestOptionalValues', () => {
  const m = (value: unknown) => ({ m: value });
  it.each<[string, Record<string, unknown>, unknown]>([
    ['x.or(y).orValue(z)', { x: NONE, y: NONE, z: 42n }, 42n],
    ['x.optMap(y, y + 1)', { x: NONE }, NONE],
    ['x.optMap(y, y + 1)', { x: some(42n) }, some(43n)],
    ['optional.ofNonZeroValue(z).or(optional.of(10)).value() == 42', { z: 42n }, true],
    ['(has(m.x) ? optional.of(m.x) : optional.none()).hasValue()', m({}), false],
    ['m.?x.hasValue()', m({}), false],
    ['has(m.?x.y)', m({}), false],
    ['has(m.?x.y)', m({ x: { y: 'z' } }), true],
    [
      "optional.ofNonZeroValue('').or(optional.of(m.c['dashed-index'])).orValue('default value')",
      m({ c: { 'dashed-index': 'goodbye' } }),
      'goodbye',
    ],
    ["m.c[?'dashed-index'].orValue('default value')", m({ c: { 'dashed-index': 'goodbye' } }), 'goodbye'],
    ["m.c[?'missing-index'].orValue('default value')", m({ c: {} }), 'default value'],
    ["optm.c.index.orValue('default value')", { optm: some({ c: { index: 'goodbye' } }) }, 'goodbye'],
    ["optm.c.missing.or(optl[0]).orValue('default value')", { optm: some({ c: {} }), optl: NONE }, 'default value'],
    [
      "optm.c.missing.or(optl[0]).orValue('default value')",
      { optm: some({ c: {} }), optl: some(['list-value']) },
      'list-value',
    ],
    ["optm.c['index'].orValue('default value')", { optm: some({ c: { index: 'goodbye' } }) }, 'goodbye'],
    ["optm.c['missing'].orValue('default value')", { optm: some({ c: {} }) }, 'default value'],
    ['has(optm.c) && !has(optm.c.missing)', { optm: some({ c: { entry: 'hello world' } }) }, true],
    [
      "optional.ofNonZeroValue(m.a.z).orValue(m.c['dashed-index'])",
      m({ c: { 'dashed-index': 'goodbye' } }),
      { error: 'no such key: a' },
    ],
    ["m.?c.missing.or(m.?c['dashed-index']).orValue('').size()", m({ c: { 'dashed-index': 'goodbye' } }), 7n],
    [
      "{?'nested_map': optional.ofNonZeroValue({?'map': m.?c})}",
      m({ c: { 'dashed-index': 'goodbye' } }),
      { nested_map: { map: { 'dashed-index': 'goodbye' } } },
    ],
    ["{?'nested_map': optional.ofNonZeroValue({?'map': m.?c}), 'singleton': true}", m({}), { singleton: true }],
    ['[?m.?c, ?x, ?y]', { m: {}, x: some(42n), y: NONE }, [42n]],
    ['[?optional.ofNonZeroValue(m.?c.orValue({}))]', m({ c: [] }), []],
    ["optional.ofNonZeroValue({?'nested_map': optional.ofNonZeroValue({?'map': m.?c})})", m({}), NONE],
  ])('%s', (expression, inputs, expected) => {
    expect(run(expression, inputs)).toEqual(expected);
  });
});

/** A row that must evaluate to true, or fail with an error containing `error`. */
function holds(expression: string, error?: string): void {
  const result = run(expression, {});
  if (error === undefined) expect(result).toBe(true);
  else expect((result as { error?: string }).error ?? result).toContain(error);
}

/** The compile error (what the apiserver answers at creation), or 'compiles'. */
function compileError(expression: string): string {
  try {
    compileExpression(expression, { variables: new Set() });
    return 'compiles';
  } catch (error) {
    if (!(error instanceof CelCompileError)) throw error;
    return error.message;
  }
}

// cel-go ext/lists_test.go TestLists and TestListsRuntimeErrors; rows on proto message types left out.
describe('cel-go lists extension (Kubernetes 1.35 on)', () => {
  it.each<[string, string?]>([
    ['lists.range(4) == [0,1,2,3]'],
    ['lists.range(0) == []'],
    ['[5,1,2,3].reverse() == [3,2,1,5]'],
    ['[].reverse() == []'],
    ['[1].reverse() == [1]'],
    ["['are', 'you', 'as', 'bored', 'as', 'I', 'am'].reverse() == ['am', 'I', 'as', 'bored', 'as', 'you', 'are']"],
    ['[false, true, true].reverse().reverse() == [false, true, true]'],
    ['[1,2,3,4].slice(0, 4) == [1,2,3,4]'],
    ['[1,2,3,4].slice(0, 0) == []'],
    ['[1,2,3,4].slice(1, 1) == []'],
    ['[1,2,3,4].slice(4, 4) == []'],
    ['[1,2,3,4].slice(1, 3) == [2, 3]'],
    ['[1,2,3,4].slice(3, 0)', 'cannot slice(3, 0), start index must be less than or equal to end index'],
    ['[1,2,3,4].slice(0, 10)', 'cannot slice(0, 10), list is length 4'],
    ['[1,2,3,4].slice(-5, 10)', 'cannot slice(-5, 10), negative indexes not supported'],
    ['[1,2,3,4].slice(-5, -3)', 'cannot slice(-5, -3), negative indexes not supported'],
    ['dyn([]).flatten() == []'],
    ['dyn([1,2,3,4]).flatten() == [1,2,3,4]'],
    ['[1,[2,[3,4]]].flatten() == [1,2,[3,4]]'],
    ['[1,2,[],[],[3,4]].flatten() == [1,2,3,4]'],
    ['[1,[2,[3,4]]].flatten(2) == [1,2,3,4]'],
    ['[1,[2,[3,[4]]]].flatten(-1) == [1,2,3,4]', 'level must be non-negative'],
    ['[].sort() == []'],
    ['[1].sort() == [1]'],
    ['[4, 3, 2, 1].sort() == [1, 2, 3, 4]'],
    ['["d", "a", "b", "c"].sort() == ["a", "b", "c", "d"]'],
    ['["d", 3, 2, "c"].sort() == ["a", "b", "c", "d"]', 'list elements must have the same type'],
    ['[].sortBy(e, e) == []'],
    ['["a"].sortBy(e, e) == ["a"]'],
    ['[-3, 1, -5, -2, 4].sortBy(e, -(e * e)) == [-5, 4, -3, -2, 1]'],
    ['[-3, 1, -5, -2, 4].map(e, e * 2).sortBy(e, -(e * e)) == [-10, 8, -6, -4, 2]'],
    ['lists.range(3).sortBy(e, -e) == [2, 1, 0]'],
    ['["a", "c", "b", "first"].sortBy(e, e == "first" ? "" : e) == ["first", "a", "b", "c"]'],
    ['[].distinct() == []'],
    ['[1].distinct() == [1]'],
    ['[-2, 5, -2, 1, 1, 5, -2, 1].distinct() == [-2, 5, 1]'],
    ["['c', 'a', 'a', 'b', 'a', 'b', 'c', 'c'].distinct() == ['c', 'a', 'b']"],
    ['[1, 2.0, "c", 3, "c", 1].distinct() == [1, 2.0, "c", 3]'],
    ['[1, 1.0, 2].distinct() == [1, 2]'],
    ['[[1], [1], [2]].distinct() == [[1], [2]]'],
    ["[{'field': 'lo'}, {'field': 'hi'}].sortBy(m, m.field) == [{'field': 'hi'}, {'field': 'lo'}]"],
    ['dyn({}).flatten()', 'no such overload'],
    ['dyn({}).flatten(0)', 'no such overload'],
    ['[].flatten(-1)', 'level must be non-negative'],
    ["[].flatten(dyn('1'))", 'no such overload'],
  ])('%s', (expression, error) => holds(expression, error));

  it('a 1.34 environment has no lists extension; strings v3 reverse stays refused', () => {
    expect(() =>
      compileExpression('lists.range(3) == [0, 1, 2]', { variables: new Set(), environment: '1.34' }),
    ).toThrow(/undeclared reference to 'lists'/);
    expect(() => compileExpression('[1].sortBy(e, e) == [1]', { variables: new Set(), environment: '1.34' })).toThrow(
      /undeclared reference to 'sortBy'/,
    );
    expect(compileError("'abc'.reverse() == 'cba'")).toContain(
      "found no matching overload for 'reverse' applied to 'string.()'",
    );
  });
});

// cel-go ext/comprehensions_test.go; rows written with cel.bind or strings v3 reverse (neither
// enabled for policies) left out.
describe('cel-go two-variable comprehensions (Kubernetes 1.33 on)', () => {
  it.each<[string]>([
    ['[1, 2, 3, 4].all(i, v, i < 5 && v > 0)'],
    ['[1, 2, 3, 4].all(i, v, i < v)'],
    ['[1, 2, 3, 4].all(i, v, i > v) == false'],
    ['[\'Hello\', \'world\'].transformList(i, v, "[%d]%s".format([i, v.lowerAscii()])) == ["[0]hello", "[1]world"]'],
    ["['hello', 'world'].transformList(i, v, v.startsWith('greeting'), \"[%d]%s\".format([i, v])) == []"],
    ['[1, 2, 3].transformList(indexVar, valueVar, (indexVar * valueVar) + valueVar) == [1, 4, 9]'],
    ['[1, 2, 3].transformList(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == [1, 9]'],
    ["['Hello', 'world'].transformMap(i, v, [v.lowerAscii()]) == {0: ['hello'], 1: ['world']}"],
    [
      "['world', 'Hello'].transformMap(i, v, [v.lowerAscii()]).transformList(k, v, v).flatten().sort() == ['hello', 'world']",
    ],
    ['[1, 2, 3].transformMap(indexVar, valueVar, (indexVar * valueVar) + valueVar) == {0: 1, 1: 4, 2: 9}'],
    ['[1, 2, 3].transformMap(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == {0: 1, 2: 9}'],
    ["{'hello': 'world', 'hello!': 'world'}.all(k, v, k.startsWith('hello') && v == 'world')"],
    ["{'hello': 'world', 'hello!': 'worlds'}.all(k, v, k.startsWith('hello') && v.endsWith('world')) == false"],
    ["{'hello': 'world', 'hello!': 'worlds'}.exists(k, v, k.startsWith('hello') && v.endsWith('world'))"],
    ["{'hello': 'world', 'hello!': 'worlds'}.existsOne(k, v, k.startsWith('hello') && v.endsWith('world'))"],
    ["{'hello': 'world', 'hello!': 'worlds'}.exists_one(k, v, k.startsWith('hello') && v.endsWith('world'))"],
    [
      "{'hello': 'world', 'hello!': 'wow, world'}.exists_one(k, v, k.startsWith('hello') && v.endsWith('world')) == false",
    ],
    ['{\'Hello\': \'world\'}.transformList(k, v, "%s=%s".format([k.lowerAscii(), v])) == ["hello=world"]'],
    ['dyn({\'Hello\': \'world\'}).transformList(k, v, "%s=%s".format([k.lowerAscii(), v])) == ["hello=world"]'],
    ["{'hello': 'world'}.transformList(k, v, k.startsWith('greeting'), \"%s=%s\".format([k, v])) == []"],
    ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k).sort() == ['farewell', 'greeting']"],
    ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(_, v, v).sort() == ['goodbye', 'hello']"],
    [
      "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    ],
    [
      "dyn({'hello': 'world', 'goodbye': 'cruel world'}).transformMap(k, v, \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    ],
    [
      "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, v.startsWith('world'), \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!'}",
    ],
    ["{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, {}) == {}"],
    ['[1, 1].transformMapEntry(i, v, {v: i})'],
  ])('%s', (expression) => {
    if (expression.startsWith('[1, 1]')) holds(expression, 'insert failed: key 1 already exists');
    else holds(expression);
  });

  it.each<[string, string]>([
    ['[].all(i, i, i < i)', 'duplicate variable name: i'],
    ['[].all(__result__, i, __result__ < i)', 'iteration variable overwrites accumulator variable'],
    ['[].all(j, __result__, __result__ < j)', 'iteration variable overwrites accumulator variable'],
    ['[].all(i.j, k, i.j < k)', 'argument must be a simple name'],
    ['[].all(j, i.k, j < i.k)', 'argument must be a simple name'],
    ['1.all(j, k, j < k)', 'cannot be range'],
    ['[].exists(i.j, k, i.j < k)', 'argument must be a simple name'],
    ['[].exists(j, i.k, j < i.k)', 'argument must be a simple name'],
    ["''.exists(j, k, j < k)", 'cannot be range'],
    ['[].exists_one(i.j, k, i.j < k)', 'argument must be a simple name'],
    ['[].existsOne(j, i.k, j < i.k)', 'argument must be a simple name'],
    ["''.existsOne(j, k, j < k)", 'cannot be range'],
    ['[].transformList(i.j, k, i.j + k)', 'argument must be a simple name'],
    ['[].transformList(j, i.k, j + i.k)', 'argument must be a simple name'],
    ['{}.transformMap(i.j, k, i.j + k)', 'argument must be a simple name'],
    ['{}.transformMap(j, i.k, j + i.k)', 'argument must be a simple name'],
    ['{}.transformMapEntry(j, i.k, {j: i.k})', 'argument must be a simple name'],
    ['{}.transformMapEntry(i.j, k, {k: i.j})', 'argument must be a simple name'],
    ["{}.transformMapEntry(j, k, 'bad filter', {k: j})", 'no matching overload'],
    ['[1, 2].transformList(i, v, v % 2 == 0 ? [v] : v)', 'no matching overload'],
    ["{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, []) == {}", 'no matching overload'],
  ])('%s is refused: %s', (expression, message) => {
    expect(compileError(expression)).toContain(message);
  });
});

/** Compiles as a policy's validation would (checker included) and evaluates with no inputs. */
function evaluatePolicyExpression(expression: string, environment?: EnvironmentVersion): unknown {
  const outcome = compileExpression(expression, { variables: new Set(), environment }).evaluate({}, 10_000_000);
  return 'error' in outcome ? { error: outcome.error } : plain(outcome.value);
}

// k8s.io/apiserver/pkg/cel/library/format_test.go TestFormat, with its generated lookup and
// comparison rows over every named format.
describe('Kubernetes format library (1.32 on)', () => {
  const DNS1123_LABEL =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  const DNS1123_SUBDOMAIN =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  const DNS1035 =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
  const rows: [string, unknown][] = [
    ['format.dns1123Label().validate("my-label-name")', NONE],
    ['format.dns1123Subdomain().validate("apiextensions.k8s.io")', NONE],
    ['format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', NONE],
    ['format.dns1123LabelPrefix().validate("my-label-prefix-")', NONE],
    ['format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', NONE],
    ['format.dns1035LabelPrefix().validate("my-label-prefix-")', NONE],
    ['format.uri().validate("http://example.com")', NONE],
    ['format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', NONE],
    ['format.byte().validate("aGVsbG8=")', NONE],
    ['format.date().validate("2021-01-01")', NONE],
    ['format.datetime().validate("2021-01-01T00:00:00Z")', NONE],
    ['format.dns1123Label().validate("contains a space")', some([DNS1123_LABEL])],
    ['format.dns1123Subdomain().validate("contains a space")', some([DNS1123_SUBDOMAIN])],
    ['format.dns1035Label().validate("contains a space")', some([DNS1035])],
    [
      'format.qualifiedName().validate("contains a space")',
      some([
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ]),
    ],
    ['format.dns1123LabelPrefix().validate("contains a space-")', some([DNS1123_LABEL])],
    ['format.dns1123SubdomainPrefix().validate("contains a space-")', some([DNS1123_SUBDOMAIN])],
    ['format.dns1035LabelPrefix().validate("contains a space-")', some([DNS1035])],
    ['format.dns1123Label().validate("my-label-name")', NONE],
    ['format.dns1123Subdomain().validate("example.com")', NONE],
    ['format.dns1035Label().validate("my-label-name")', NONE],
    ['format.qualifiedName().validate("my.name")', NONE],
    ['format.byte().validate("aGVsbG8=")', NONE],
    ['format.byte().validate("aGVsbG8")', some(['invalid base64'])],
    ['format.date().validate("2020-01-01")', NONE],
    ['format.date().validate("2020-01-32")', some(['invalid date'])],
    ['format.datetime().validate("2020-01-01T00:00:00Z")', NONE],
    ['format.datetime().validate("2020-01-32T00:00:00Z")', some(['invalid datetime'])],
    ['format.named("unknown").hasValue()', false],
    ['format.labelValue().validate("my-cool-label-Value")', NONE],
    [
      'format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")',
      some([
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ]),
    ],
  ];
  const names = Object.keys(FORMATS);
  for (const lhs of names) {
    rows.push([`format.named("${lhs}").hasValue()`, true], [`format.named("${lhs}").value() == format.${lhs}()`, true]);
    for (const rhs of names) if (rhs !== lhs) rows.push([`format.${lhs}() == format.${rhs}()`, false]);
  }
  it.each(rows)('%s', (expression, expected) => {
    expect(evaluatePolicyExpression(expression)).toEqual(expected);
  });

  it('a 1.31 environment has no format library', () => {
    expect(() => evaluatePolicyExpression('format.dns1123Label().validate("x").hasValue()', '1.31')).toThrow(
      /undeclared reference to 'format'/,
    );
  });
});

const row = (expression: string, expected: unknown) => expect(evaluatePolicyExpression(expression)).toEqual(expected);
const refused = (expression: string, pattern: RegExp) => expect(compileError(expression)).toMatch(pattern);

// k8s.io/apiserver/pkg/cel/library/ip_test.go TestIP. Rows that expect an IP value compare with
// the value the library prints.
describe('Kubernetes ip library (1.31 on)', () => {
  it.each<[string, unknown]>([
    ['string(ip("192.168.0.1"))', '192.168.0.1'],
    [
      'ip("192.168.0.1.0")',
      {
        error:
          'IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long',
      },
    ],
    ['isIP("192.168.0.1")', true],
    ['isIP("192.168.0.1.0")', false],
    ['ip.isCanonical("127.0.0.1")', true],
    [
      'ip.isCanonical("127.0.0.1.0")',
      {
        error:
          'IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long',
      },
    ],
    ['ip("192.168.0.1").family()', 4n],
    ['ip("0.0.0.0").isUnspecified()', true],
    ['ip("127.0.0.1").isUnspecified()', false],
    ['ip("127.0.0.1").isLoopback()', true],
    ['ip("1.2.3.4").isLoopback()', false],
    ['ip("224.0.0.1").isLinkLocalMulticast()', true],
    ['ip("224.0.1.1").isLinkLocalMulticast()', false],
    ['ip("169.254.169.254").isLinkLocalUnicast()', true],
    ['ip("192.168.0.1").isLinkLocalUnicast()', false],
    ['ip("192.168.0.1").isGlobalUnicast()', true],
    ['ip("255.255.255.255").isGlobalUnicast()', false],
    ['string(ip("2001:db8::68"))', '2001:db8::68'],
    [
      'ip("2001:db8:::68")',
      {
        error:
          'IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
      },
    ],
    ['isIP("2001:db8::68")', true],
    ['isIP("2001:db8:::68")', false],
    ['ip.isCanonical("2001:db8::68")', true],
    ['ip.isCanonical("2001:DB8::68")', false],
    [
      'ip.isCanonical("2001:db8:::68")',
      {
        error:
          'IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
      },
    ],
    ['ip("2001:db8::68").family()', 6n],
    ['ip("::").isUnspecified()', true],
    ['ip("::1").isUnspecified()', false],
    ['ip("::1").isLoopback()', true],
    ['ip("2001:db8::abcd").isLoopback()', false],
    ['ip("ff02::1").isLinkLocalMulticast()', true],
    ['ip("fd00::1").isLinkLocalMulticast()', false],
    ['ip("fe80::1").isLinkLocalUnicast()', true],
    ['ip("fd80::1").isLinkLocalUnicast()', false],
    ['ip("2001:db8::abcd").isGlobalUnicast()', true],
    ['ip("ff00::1").isGlobalUnicast()', false],
    ['string(ip("192.168.0.1"))', '192.168.0.1'],
    ['type(ip("192.168.0.1")) == net.IP', true],
  ])('%s', row);

  it("isIP(cidr(...)) is refused: found no matching overload for 'isIP' applied to '(net.CIDR)'", () => {
    refused('isIP(cidr("192.168.0.0/24"))', /found no matching overload for 'isIP' applied to '\(net.CIDR\)'/);
  });
});

// k8s.io/apiserver/pkg/cel/library/cidr_test.go TestCIDR.
describe('Kubernetes cidr library (1.31 on)', () => {
  it.each<[string, unknown]>([
    ['string(cidr(dyn("192.168.0.0/24")))', '192.168.0.0/24'],
    [
      'cidr("192.168.0.0/")',
      {
        error:
          'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""',
      },
    ],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', true],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', false],
    ['cidr("192.168.0.0/24").containsIP("192.168.0.1")', true],
    ['cidr("192.168.0.0/24").containsIP("192.168.1.1")', false],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', true],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', false],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', true],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', false],
    ['string(cidr("192.168.0.0/24").ip())', '192.168.0.0'],
    ['string(cidr("192.168.0.0/24").masked())', '192.168.0.0/24'],
    ['string(cidr("192.168.0.1/24").masked())', '192.168.0.0/24'],
    ['cidr("192.168.0.0/24").prefixLength()', 24n],
    ['string(cidr("2001:db8::/32"))', '2001:db8::/32'],
    [
      'cidr("2001:db8::/")',
      {
        error:
          'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""',
      },
    ],
    ['cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', true],
    ['cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', false],
    ['cidr("2001:db8::/32").containsIP("2001:db8::1")', true],
    ['cidr("2001:db8::/32").containsIP("2001:dc8::1")', false],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', true],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', false],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', true],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', false],
    ['string(cidr("2001:db8::/32").ip())', '2001:db8::'],
    ['string(cidr("2001:db8::/32").masked())', '2001:db8::/32'],
    ['string(cidr("2001:db8:1::/32").masked())', '2001:db8::/32'],
    ['cidr("2001:db8::/32").prefixLength()', 32n],
    ['string(cidr("192.168.0.0/24"))', '192.168.0.0/24'],
    ['type(cidr("192.168.0.0/24")) == net.CIDR', true],
  ])('%s', row);

  it("cidr(int) is refused: found no matching overload for 'cidr' applied to '(int)'", () => {
    refused('cidr(192168)', /found no matching overload for 'cidr' applied to '\(int\)'/);
  });
});

// k8s.io/apiserver/pkg/cel/library/quantity_test.go TestQuantity. mul, div and divInt stay
// refused (no Kubernetes version enables them for policies): their rows check the refusal.
describe('Kubernetes quantity library', () => {
  it.each<[string, unknown]>([
    ['quantity("12Mi") == quantity("12582912")', true],
    [
      'quantity("10Mo")',
      { error: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
    ],
    ['quantity("10Mm")', { error: "unable to parse quantity's suffix" }],
    ['isQuantity("20")', true],
    ['isQuantity("20M")', true],
    ['isQuantity("20Mi")', true],
    ['isQuantity("20Mo")', false],
    ['isQuantity("10Mm")', false],
    ['quantity("200M") == quantity("200M")', true],
    ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', true],
    [
      'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")',
      true,
    ],
    ['quantity("200M") == quantity("0.3G")', false],
    ['quantity("50M").isLessThan(quantity("50Mi"))', true],
    ['quantity("50M").isLessThan(quantity("100M"))', true],
    ['quantity("100M").isLessThan(quantity("50M"))', false],
    ['quantity("50Mi").isGreaterThan(quantity("50M"))', true],
    ['quantity("150Mi").isGreaterThan(quantity("100Mi"))', true],
    ['quantity("50M").isGreaterThan(quantity("100M"))', false],
    ['quantity("200M").compareTo(quantity("0.2G"))', 0n],
    ['quantity("50M").compareTo(quantity("50Mi"))', -1n],
    ['quantity("50Mi").compareTo(quantity("50M"))', 1n],
    ['quantity("50k").add(quantity("20")) == quantity("50.02k")', true],
    ['quantity("50k").add(20).isLessThan(quantity("50020"))', false],
    ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', true],
    ['quantity("50k").sub(20) == quantity("49980")', true],
    ['quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980n],
    ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20n],
    ['quantity("50k").asInteger()', 50000n],
    ['quantity("9999999999999999999999999999999999999G").asInteger()', { error: 'cannot convert value to integer' }],
    ['quantity("9999999999999999999999999999999999999G").isInteger()', false],
    ['quantity("50").isInteger()', true],
    ['quantity("50.703k").asApproximateFloat()', 50703],
  ])('%s', row);

  it.each([
    ['quantity("50k").mul(2) == quantity("100000")'],
    ['quantity("10000").div(3).asApproximateFloat() > 0.0'],
    ['quantity("10k").div(2) == quantity("5000")'],
    ['quantity("10000").divInt(3) == quantity("3333")'],
  ])('%s is refused', (expression) => refused(expression, /found no matching overload|undeclared reference/));

  it("isQuantity([1, 2, 3]) is refused: found no matching overload for 'isQuantity'", () => {
    refused('isQuantity([1, 2, 3])', /found no matching overload for 'isQuantity' applied to/);
  });
});

// k8s.io/apiserver/pkg/cel/library/semver_test.go TestSemver (semver library version 1, 1.34 on).
describe('Kubernetes semver library (1.34 on)', () => {
  it.each<[string, unknown]>([
    ['semver("1.2.3") == semver("1.2.3")', true],
    ['semver("v1.0")', { error: 'No Major.Minor.Patch elements found' }],
    ['isSemver("1.2.3-beta.1+build.1")', true],
    ['isSemver("")', false],
    ['isSemver("v1.0.0")', false],
    ['isSemver(" 1.0.0")', false],
    ['isSemver("1. 0.0")', false],
    ['isSemver("1.0.0 ")', false],
    ['isSemver("01.01.01")', false],
    ['isSemver("1")', false],
    ['isSemver("1.1")', false],
    ['isSemver("", true)', false],
    ['isSemver(" 1.0.0", true)', false],
    ['isSemver("1. 0.0", true)', false],
    ['isSemver("1.0.0 ", true)', false],
    ['isSemver("v1.0.0", true)', true],
    ['isSemver("01.01.01", true)', true],
    ['isSemver("1", true)', true],
    ['isSemver("1.1", true)', true],
    ['semver("v01.01", true) == semver("1.1.0")', true],
    ['semver("1.2.3") == semver("1.2.3")', true],
    ['semver("1.2.3") == semver("1.0.0")', false],
    ['semver("1.0.0").isLessThan(semver("1.2.3"))', true],
    ['semver("1.0.0").isLessThan(semver("1.0.0"))', false],
    ['semver("1.2.3").isGreaterThan(semver("1.0.0"))', true],
    ['semver("1.0.0").isGreaterThan(semver("1.0.0"))', false],
    ['semver("1.2.3").compareTo(semver("1.2.3"))', 0n],
    ['semver("1.0.0").compareTo(semver("1.2.3"))', -1n],
    ['semver("1.2.3").compareTo(semver("1.0.0"))', 1n],
    ['semver("1.2.3").major()', 1n],
    ['semver("1.2.3").minor()', 2n],
    ['semver("1.2.3").patch()', 3n],
  ])('%s', row);

  it("isSemver([1, 2, 3]) is refused: found no matching overload for 'isSemver'", () => {
    refused('isSemver([1, 2, 3])', /found no matching overload for 'isSemver' applied to/);
  });
});

// Behaviours the issue lists, each as cel-go and Kubernetes' libraries answer.
describe('library behaviours as upstream', () => {
  it.each<[string, unknown]>([
    ["duration('3723.5s').getMilliseconds()", 3723500n],
    ["timestamp('2024-01-01T00:00:01.250Z').getMilliseconds()", 250n],
    ["'héllo'.replace('', '-')", '-h-é-l-l-o-'],
    ["'aaa'.replace('', '-', 2)", '-a-aa'],
    ["'héllo'.split('')", ['h', 'é', 'l', 'l', 'o']],
    ["'a😀b😀c'.split('😀')", ['a', 'b', 'c']],
    ["[duration('1s'), duration('2s')].sum() == duration('3s')", true],
    [
      "[timestamp('2024-01-01T00:00:00Z'), timestamp('2023-01-01T00:00:00Z')].min() == timestamp('2023-01-01T00:00:00Z')",
      true,
    ],
    [
      "[duration('1s'), duration('2s')].isSorted() && [duration('1s'), duration('2s')].indexOf(duration('2s')) == 1",
      true,
    ],
    [
      "sets.contains([duration('1s'), duration('2s')], [duration('2s')]) && !sets.intersects([timestamp('2024-01-01T00:00:00Z')], [timestamp('2024-01-02T00:00:00Z')])",
      true,
    ],
    ["url('https://user:pass@example.com:80/path%20x?query=val').getHost()", 'example.com:80'],
    ["url('https://user:pass@example.com:80/path').getHostname()", 'example.com'],
    ["url('https://example.com:80/path%20x').getEscapedPath()", '/path%20x'],
    ["'abc123def456'.findAll('[0-9]+')", ['123', '456']],
    ["'ab'.find('a|ab')", 'a'],
    ["'foo bar'.findAll('\\\\b\\\\w')", ['f', 'b']],
    ["'%e'.format([1234.5])", '1.234500×10⁰³'],
    ["'%s'.format([double('Infinity')])", '+Inf'],
    ["'%s'.format([1.0])", '1'],
    ["'%s'.format([[1, 'a']])", '[1, "a"]'],
    ["'%s'.format([{'b': 1, 'a': 2.5}])", '{"a":2.500000, "b":1}'],
    ["'%.3f'.format([1234.5678])", '1,234.568'],
    ["'%s'.format([duration('1h')])", '3600s'],
  ])('%s', row);

  it('find and findAll run in linear time: a pattern that backtracks exponentially elsewhere answers at once', () => {
    const text = 'a'.repeat(5000);
    expect(evaluatePolicyExpression(`'${text}!'.find('(a+)+$')`)).toBe('');
    expect(evaluatePolicyExpression(`'${text}'.findAll('(x+x+)+y')`)).toEqual([]);
  });
});

// cel-go's runtime error texts (common/types), which reach the user in `resulted in error: ...`.
describe("runtime errors in cel-go's words", () => {
  it.each<[string, string]>([
    ['1 / 0 == 1', 'division by zero'],
    ['1 % 0 == 1', 'modulus by zero'],
    ['9223372036854775807 + 1 == 1', 'integer overflow'],
    ['[1][5] == 1', "index '5' out of range in list size '1'"],
    ["{'a': 1}['b'] == 1", 'no such key: b'],
  ])('%s: %s', (expression, message) => row(expression, { error: message }));
});

// cel-go ext/strings_test.go stringTests (the functions of strings version 2, which Kubernetes
// enables). The parse-only rows, which cel-go evaluates unchecked, are compile errors here, as a
// policy's expressions are always checked.
describe('cel-go strings extension', () => {
  it.each<[string]>([
    [String.raw`'tacocat'.charAt(3) == 'o'`],
    [String.raw`'tacocat'.charAt(7) == ''`],
    [String.raw`'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'`],
    [String.raw`'tacocat'.indexOf('') == 0`],
    [String.raw`'tacocat'.indexOf('ac') == 1`],
    [String.raw`'tacocat'.indexOf('none') == -1`],
    [String.raw`'tacocat'.indexOf('', 3) == 3`],
    [String.raw`'tacocat'.indexOf('a', 3) == 5`],
    [String.raw`'tacocat'.indexOf('at', 3) == 5`],
    [String.raw`'ta©o©αT'.indexOf('©') == 2`],
    [String.raw`'ta©o©αT'.indexOf('©', 3) == 4`],
    [String.raw`'ta©o©αT'.indexOf('©αT', 3) == 4`],
    [String.raw`'ta©o©αT'.indexOf('©α', 5) == -1`],
    [String.raw`'ijk'.indexOf('k') == 2`],
    [String.raw`'hello wello'.indexOf('hello wello') == 0`],
    [String.raw`'hello wello'.indexOf('ello', 6) == 7`],
    [String.raw`'hello wello'.indexOf('elbo room!!') == -1`],
    [String.raw`'hello wello'.indexOf('elbo room!!!') == -1`],
    [String.raw`'tacocat'.lastIndexOf('') == 7`],
    [String.raw`'tacocat'.lastIndexOf('at') == 5`],
    [String.raw`'tacocat'.lastIndexOf('none') == -1`],
    [String.raw`'tacocat'.lastIndexOf('', 3) == 3`],
    [String.raw`'tacocat'.lastIndexOf('a', 3) == 1`],
    [String.raw`'ta©o©αT'.lastIndexOf('©') == 4`],
    [String.raw`'ta©o©αT'.lastIndexOf('©', 3) == 2`],
    [String.raw`'ta©o©αT'.lastIndexOf('©α', 4) == 4`],
    [String.raw`'hello wello'.lastIndexOf('ello', 6) == 1`],
    [String.raw`'hello wello'.lastIndexOf('low') == -1`],
    [String.raw`'hello wello'.lastIndexOf('elbo room!!') == -1`],
    [String.raw`'hello wello'.lastIndexOf('elbo room!!!') == -1`],
    [String.raw`'hello wello'.lastIndexOf('hello wello') == 0`],
    [String.raw`'bananananana'.lastIndexOf('nana', 8) == 8`],
    [String.raw`"12 days 12 hours".replace("{0}", "2") == "12 days 12 hours"`],
    [String.raw`"{0} days {0} hours".replace("{0}", "2") == "2 days 2 hours"`],
    [String.raw`"{0} days {0} hours".replace("{0}", "2", 1).replace("{0}", "23") == "2 days 23 hours"`],
    [String.raw`"1 ©αT taco".replace("αT", "o©α") == "1 ©o©α taco"`],
    [String.raw`"hello world".split(" ") == ["hello", "world"]`],
    [String.raw`"hello world events!".split(" ", 0) == []`],
    [String.raw`"hello world events!".split(" ", 1) == ["hello world events!"]`],
    [String.raw`"o©o©o©o".split("©", -1) == ["o", "o", "o", "o"]`],
    [String.raw`"tacocat".substring(4) == "cat"`],
    [String.raw`"tacocat".substring(7) == ""`],
    [String.raw`"tacocat".substring(0, 4) == "taco"`],
    [String.raw`"tacocat".substring(4, 4) == ""`],
    [String.raw`'ta©o©αT'.substring(2, 6) == "©o©α"`],
    [String.raw`'ta©o©αT'.substring(7, 7) == ""`],
    [String.raw`" \f\n\r\t\vtext  ".trim() == "text"`],
    [String.raw`"\u0085\u00a0\u1680text".trim() == "text"`],
    [String.raw`"text\u2000\u2001\u2002\u2003\u2004\u2004\u2006\u2007\u2008\u2009".trim() == "text"`],
    [String.raw`"\u200atext\u2028\u2029\u202F\u205F\u3000".trim() == "text"`],
    [String.raw`"\u180etext\u200b\u200c\u200d\u2060\ufeff".trim() == "\u180etext\u200b\u200c\u200d\u2060\ufeff"`],
  ])('%s', (expression) => row(expression, true));

  it.each<[string, string]>([
    [String.raw`'tacocat'.charAt(30) == ''`, 'index out of range: 30'],
    [String.raw`'tacocat'.lastIndexOf('a', -1) == -1`, 'index out of range: -1'],
    [String.raw`"tacocat".substring(40) == "cat"`, 'index out of range: 40'],
    [String.raw`"tacocat".substring(-1) == "cat"`, 'index out of range: -1'],
    [String.raw`"tacocat".substring(1, 50) == "cat"`, 'index out of range: 50'],
    [String.raw`"tacocat".substring(49, 50) == "cat"`, 'index out of range: 49'],
    [String.raw`"tacocat".substring(4, 3) == ""`, 'invalid substring range. start: 4, end: 3'],
  ])('%s: %s', (expression, message) => row(expression, { error: message }));

  it.each<[string]>([
    [String.raw`42.charAt(2) == ""`],
    [String.raw`'hello'.charAt(true) == ""`],
    [String.raw`24.indexOf('2') == 0`],
    [String.raw`'hello'.indexOf(true) == 1`],
    [String.raw`42.indexOf('4', 0) == 0`],
    [String.raw`'42'.indexOf(4, 0) == 0`],
    [String.raw`'42'.indexOf('4', '0') == 0`],
    [String.raw`'42'.indexOf('4', 0, 1) == 0`],
    [String.raw`42.split("2") == ["4"]`],
    [String.raw`42.replace(2, 1) == "41"`],
    [String.raw`"42".replace(2, 1) == "41"`],
    [String.raw`"42".replace("2", 1) == "41"`],
    [String.raw`42.replace("2", "1", 1) == "41"`],
    [String.raw`"42".replace(2, "1", 1) == "41"`],
    [String.raw`"42".replace("2", 1, 1) == "41"`],
    [String.raw`"42".replace("2", "1", "1") == "41"`],
    [String.raw`"42".replace("2", "1", 1, false) == "41"`],
    [String.raw`42.split("") == ["4", "2"]`],
    [String.raw`"42".split(2) == ["4"]`],
    [String.raw`42.split("2", "1") == ["4"]`],
    [String.raw`"42".split(2, 1) == ["4"]`],
    [String.raw`"42".split("2", "1") == ["4"]`],
    [String.raw`"42".split("2", 1, 1) == ["4"]`],
    [String.raw`'hello'.substring(1, 2, 3) == ""`],
    [String.raw`30.substring(true, 3) == ""`],
    [String.raw`"tacocat".substring(true, 3) == ""`],
    [String.raw`"tacocat".substring(0, false) == ""`],
  ])('%s is refused: no matching overload', (expression) => refused(expression, /found no matching overload/));
});
