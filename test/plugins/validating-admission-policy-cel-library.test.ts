// The library behaviours issue 13 lists, one describe per item, each row an upstream fact: the
// apiextensions-apiserver's TestValidationExpressions ("URL parsing", "stdlib list functions"),
// the doc examples of k8s.io/apiserver/pkg/cel/library/{urls,lists}.go, cel-go's ext/strings_test.go,
// ext/sets_test.go and ext/formatting_test.go (TestStringFormat, locale en_US, which Kubernetes'
// strings version 2 uses), Go's net/url, strconv and time formatting that cel-go's values use.
import { describe, expect, it } from 'vitest';
import { isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { CelCompileError, compileExpression } from '../../lib/cel/compile.js';

function plain(value: unknown): unknown {
  if (isCelList(value)) return [...value].map(plain);
  if (isCelMap(value)) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (isCelUint(value)) return value.value;
  return value;
}

/** The value, `{ error }` for an evaluation error, or `{ compile }` for the apiserver's refusal. */
function evaluate(expression: string): unknown {
  let compiled;
  try {
    compiled = compileExpression(expression, { variables: new Set() });
  } catch (error) {
    if (!(error instanceof CelCompileError)) throw error;
    return { compile: error.message.split('\n')[0] };
  }
  const outcome = compiled.evaluate({}, 10_000_000);
  return 'error' in outcome ? { error: outcome.error } : plain(outcome.value);
}

const row = (expression: string, expected: unknown) => expect(evaluate(expression)).toEqual(expected);
const holds = (expression: string) => row(expression, true);
const refused = (expression: string, message: string) =>
  expect((evaluate(expression) as { compile?: string }).compile ?? evaluate(expression)).toContain(message);

// apiextensions-apiserver pkg/apiserver/schema/cel/validation_test.go TestValidationExpressions
// "URL parsing" (self.url inlined), and urls.go's doc examples.
describe('url() and isURL as Go net/url parses (kubernetes.urls)', () => {
  const SELF = "'https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor'";
  it.each([
    "url('/path').getScheme() == ''",
    "url('https://example.com/').getScheme() == 'https'",
    "url('https://example.com:80/').getHost() == 'example.com:80'",
    "url('https://example.com/').getHost() == 'example.com'",
    "url('https://[::1]:80/').getHost() == '[::1]:80'",
    "url('https://[::1]/').getHost() == '[::1]'",
    "url('/path').getHost() == ''",
    "url('https://example.com:80/').getHostname() == 'example.com'",
    "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
    "url('https://[::1]/').getHostname() == '::1'",
    "url('/path').getHostname() == ''",
    "url('https://example.com:80/').getPort() == '80'",
    "url('https://example.com/').getPort() == ''",
    "url('/path').getPort() == ''",
    "url('https://example.com/path').getEscapedPath() == '/path'",
    "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
    "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
    "url('https://example.com').getEscapedPath() == ''",
    "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == { 'k1': ['a'], 'k2': ['b', 'c']}",
    "url('https://example.com/path?key with spaces=value with spaces').getQuery() == { 'key with spaces': ['value with spaces']}",
    "url('https://example.com/path?').getQuery() == {}",
    "url('https://example.com/path').getQuery() == {}",
    `url(${SELF}).getScheme() == 'https'`,
    `url(${SELF}).getHost() == 'kubernetes.io:80'`,
    `url(${SELF}).getHostname() == 'kubernetes.io'`,
    `url(${SELF}).getPort() == '80'`,
    `url(${SELF}).getEscapedPath() == '/docs/home'`,
    `url(${SELF}).getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}`,
    "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
    "isURL('/path') == true",
    "isURL('https://a:b:c/') == false",
    "isURL('../relative-path') == false",
    "isURL('/absolute-path')",
    // Go's url.Parse: escapes kept as written when valid, decoded in the query; userinfo dropped from the host.
    "url('https://example.com/a%2Fb').getEscapedPath() == '/a%2Fb'",
    "url('https://example.com/caf%C3%A9').getEscapedPath() == '/caf%C3%A9'",
    "url('https://example.com/café').getEscapedPath() == '/caf%C3%A9'",
    "url('https://example.com/p?q=a%20b+c&r=%26').getQuery() == {'q': ['a b c'], 'r': ['&']}",
    "url('https://example.com/p?a=1;b=2&c=3').getQuery() == {'c': ['3']}",
    "url('https://us%40er:p%3Ass@example.com:8443/').getHost() == 'example.com:8443'",
    "url('https://user@[fe80::1%25eth0]:8080/').getHostname() == 'fe80::1%eth0'",
    "url('https://user@[::1]:8080/').getPort() == '8080'",
    "url('https://example.com:/').getPort() == '' && url('https://example.com:/').getHost() == 'example.com:'",
    "url('HTTPS://example.com/').getScheme() == 'https'",
    "url('mailto:someone@example.com').getHost() == '' && url('mailto:someone@example.com').getEscapedPath() == ''",
    "url('https://example.com/path#frag%20ment').getEscapedPath() == '/path'",
    "isURL('https://example.com/%zz') == false",
    "isURL('https://exa mple.com/') == false",
    "isURL('') == false",
    "isURL('*')",
  ])('%s', holds);

  it.each<[string, string]>([
    [
      "url('https://a:b:c/')",
      'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host',
    ],
    [
      "url('../relative-path')",
      'URL parse error during conversion from string: parse "../relative-path": invalid URI for request',
    ],
    [
      "url('https://example.com/%zz')",
      'URL parse error during conversion from string: parse "https://example.com/%zz": invalid URL escape "%zz"',
    ],
    [
      "url('https://exa mple.com/')",
      'URL parse error during conversion from string: parse "https://exa mple.com/": invalid character " " in host name',
    ],
    [
      "url('https://[::1/')",
      `URL parse error during conversion from string: parse "https://[::1/": missing ']' in host`,
    ],
    [
      "url('https://a b@example.com/')",
      'URL parse error during conversion from string: parse "https://a b@example.com/": net/url: invalid userinfo',
    ],
    ["url(':foo')", 'URL parse error during conversion from string: parse ":foo": missing protocol scheme'],
    ["url('')", 'URL parse error during conversion from string: parse "": empty url'],
    [
      "url('/a\\tb')",
      'URL parse error during conversion from string: parse "/a\\tb": net/url: invalid control character in URL',
    ],
  ])('%s: %s', (expression, message) => row(expression, { error: message }));
});

// validation_test.go "stdlib list functions", with its typed fields as literals; lists.go's overloads
// (summable: int, uint, double, duration; comparable: those, bool, timestamp, string, bytes).
describe('lists over durations and timestamps (kubernetes.lists)', () => {
  const DURATIONS = "[duration('1s'), duration('1m'), duration('1m'), duration('1h')]";
  const UNSORTED_DURATIONS = "[duration('1m'), duration('1s')]";
  const t = (date: string) => `timestamp('${date}T00:00:00.000Z')`;
  const DATES = `[${t('2000-01-01')}, ${t('2000-02-01')}, ${t('2000-02-01')}, ${t('2010-01-01')}]`;
  it.each([
    `${DURATIONS}.sum() == duration('1h2m1s')`,
    `${DURATIONS}.min() == duration('1s')`,
    `${DURATIONS}.max() == duration('1h')`,
    `${DURATIONS}.isSorted()`,
    `${UNSORTED_DURATIONS}.isSorted() == false`,
    `${DURATIONS}.indexOf(duration('1m')) == 1`,
    `${DURATIONS}.lastIndexOf(duration('1m')) == 2`,
    `${DURATIONS}.indexOf(duration('2m')) == -1`,
    `${DURATIONS}.lastIndexOf(duration('2m')) == -1`,
    `${DATES}.min() == timestamp('2000-01-01T00:00:00.000Z')`,
    `${DATES}.max() == timestamp('2010-01-01T00:00:00.000Z')`,
    `${DATES}.isSorted()`,
    `[${t('2000-02-01')}, ${t('2000-01-01')}].isSorted() == false`,
    `${DATES}.indexOf(timestamp('2000-02-01T00:00:00.000Z')) == 1`,
    `${DATES}.lastIndexOf(timestamp('2000-02-01T00:00:00.000Z')) == 2`,
    `${DATES}.indexOf(timestamp('2005-02-01T00:00:00.000Z')) == -1`,
    `${DATES}.lastIndexOf(timestamp('2005-02-01T00:00:00.000Z')) == -1`,
    '[[1], [2]].indexOf([1]) == 0',
    "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
    '([0] + []).min() == 0',
    'dyn([]).sum() == 0',
    'dyn([1, 2]).sum() == 3',
    'dyn([1.0, 2.0]).sum() == 3.0',
    '[].sum() == 0',
    '[1u, 2u].sum() == 3u',
    '[1.0, 2.0, 2.0, 3.0].lastIndexOf(2.0) == 2',
    "[b'a', b'b'].isSorted() && [false, true].isSorted() && [true, false].max() == true",
  ])('%s', holds);

  it.each<[string, string]>([
    ['[].min() == 1', 'min called on empty list'],
    ['[].max() == 3', 'max called on empty list'],
    ['[18446744073709551615u, 1u].sum() == 0u', 'unsigned integer overflow'],
    ['[9223372036854775807, 1].sum() == 0', 'integer overflow'],
  ])('%s: %s', (expression, message) => row(expression, { error: message }));

  it.each<[string, string]>([
    ["['a', 'b'].sum() == 'c'", "found no matching overload for 'sum' applied to 'list(string).()'"],
    ['[[1], [2]].min() == [1]', "found no matching overload for 'min' applied to 'list(list(int)).()'"],
    [
      "[{'a': 1}, {'b': 2}].max() == {'b': 2}",
      "found no matching overload for 'max' applied to 'list(map(string, int)).()'",
    ],
    [
      `${DATES}.sum() == ${t('2000-01-01')}`,
      "found no matching overload for 'sum' applied to 'list(google.protobuf.Timestamp).()'",
    ],
    ["['a'].indexOf(1) == -1", "found no matching overload for 'indexOf' applied to 'list(string).(int)'"],
    [`${DURATIONS}.lastIndexOf(${t('2000-01-01')}) == -1`, "found no matching overload for 'lastIndexOf'"],
  ])('%s is refused: %s', refused);
});

// cel-go ext/sets_test.go TestSets, the rows a Kubernetes policy can write (its list literals are
// homogeneous), and the same over durations and timestamps.
describe('sets over durations and timestamps (cel-go sets extension)', () => {
  const d = (s: string) => `duration('${s}')`;
  const ts = (s: string) => `timestamp('2024-01-0${s}T00:00:00Z')`;
  it.each([
    'sets.contains([], [])',
    'sets.contains([1], [])',
    'sets.contains([1], [1])',
    'sets.contains([1], [1, 1])',
    'sets.contains([1, 1], [1])',
    'sets.contains([2, 1], [1])',
    'sets.contains([1, 2, 3, 4], [2, 3])',
    '!sets.contains([1], [2])',
    '!sets.contains([1], [1, 2])',
    'sets.equivalent([], [])',
    'sets.equivalent([1], [1])',
    'sets.equivalent([1], [1, 1])',
    'sets.equivalent([1, 1], [1])',
    '!sets.equivalent([2, 1], [1])',
    '!sets.equivalent([1], [1, 2])',
    'sets.intersects([1], [1])',
    'sets.intersects([1], [1, 1])',
    'sets.intersects([1, 1], [1])',
    'sets.intersects([2, 1], [1])',
    'sets.intersects([1], [1, 2])',
    '!sets.intersects([], [])',
    '!sets.intersects([1], [])',
    '!sets.intersects([1], [2])',
    `sets.contains([${d('1s')}, ${d('2s')}], [${d('2000ms')}])`,
    `sets.equivalent([${d('1h')}, ${d('60s')}], [${d('1m')}, ${d('60m')}])`,
    `!sets.intersects([${d('1s')}], [${d('2s')}])`,
    `sets.contains([${ts('1')}, ${ts('2')}], [timestamp('2024-01-02T01:00:00+01:00')])`,
    `sets.equivalent([${ts('1')}, ${ts('2')}], [${ts('2')}, ${ts('1')}, ${ts('1')}])`,
    `!sets.intersects([${ts('1')}], [${ts('2')}])`,
  ])('%s', holds);

  it.each<[string, string]>([
    [
      "sets.contains([1], ['1'])",
      "found no matching overload for 'sets.contains' applied to '(list(int), list(string))'",
    ],
    [`sets.intersects([${d('1s')}], [${ts('1')}])`, "found no matching overload for 'sets.intersects'"],
    ['sets.contains([1], [1.0, 1])', "expected type 'double' but found 'int'"],
  ])('%s is refused: %s', refused);
});

// cel-go ext/strings.go: split and replace as Go's strings.SplitN and strings.Replace (an empty
// separator splits into UTF-8 sequences), charAt and indexOf count code points.
describe('split, replace, charAt and indexOf on unicode (cel-go strings extension)', () => {
  it.each<[string, unknown]>([
    ["'a😀b'.split('')", ['a', '😀', 'b']],
    ["'a😀b'.split('', 2)", ['a', '😀b']],
    ["'a😀b'.split('', 0)", []],
    ["'a😀b'.split('', -1)", ['a', '😀', 'b']],
    ["''.split('')", []],
    ["''.split(',')", ['']],
    ["'o©o©o©o'.split('©', 2)", ['o', 'o©o©o']],
    ["'a😀b😀c'.split('😀', 2)", ['a', 'b😀c']],
    ["'a😀b'.replace('', '-')", '-a-😀-b-'],
    ["'a😀b'.replace('', '-', 2)", '-a-😀b'],
    ["'😀😀'.replace('😀', 'x', 1)", 'x😀'],
    ["'aaa'.replace('a', 'b', -1)", 'bbb'],
    ["'aaa'.replace('a', 'b', 0)", 'aaa'],
    ["'😀x'.charAt(0)", '😀'],
    ["'😀x'.charAt(1)", 'x'],
    ["'😀x'.charAt(2)", ''],
    ["'a😀b'.indexOf('b')", 2n],
    ["'😀a😀a'.lastIndexOf('a')", 3n],
    ["'😀a😀a'.indexOf('a', 2)", 3n],
    ["'😀😀'.substring(1)", '😀'],
    ["size('a😀b')", 3n],
  ])('%s', row);

  it("'😀'.charAt(2): index out of range, in cel-go's words", () => {
    row("'😀'.charAt(2)", { error: 'index out of range: 2' });
  });
});

// cel-go common/types: duration.getMilliseconds() is the whole duration in milliseconds
// (time.Duration.Milliseconds()); getSeconds/getMinutes/getHours likewise. Quantity's isInteger and
// asInteger are apimachinery's AsInt64 on the amount ParseQuantity made (resource/quantity.go,
// amount.go). sign is a global function.
describe('durations and quantities', () => {
  it.each<[string, unknown]>([
    ["duration('3723.5s').getMilliseconds()", 3723500n],
    ["duration('-1.5s').getMilliseconds()", -1500n],
    ["duration('1h2m3.004s').getMilliseconds()", 3723004n],
    ["duration('1.9999s').getMilliseconds()", 1999n],
    ["duration('90m').getHours()", 1n],
    ["duration('90m').getMinutes()", 90n],
    ["duration('90m').getSeconds()", 5400n],
    // ParseQuantity keeps at most 18 digits (15 less the suffix's for binary ones) as an int64 amount.
    ["quantity('922337203685477580').isInteger()", true],
    ["quantity('9223372036854775807').isInteger()", false],
    ["quantity('-9223372036854775808').isInteger()", false],
    ["quantity('9E').isInteger()", true],
    ["quantity('10E').isInteger()", false],
    ["quantity('1Ti').isInteger()", true],
    ["quantity('1Pi').isInteger()", false],
    ["quantity('7Ei').isInteger()", false],
    ["quantity('1e18').isInteger()", true],
    ["quantity('1e19').isInteger()", false],
    // AsInt64 refuses a negative scale even when the value is whole; a decimal is never an int64.
    ["quantity('1000m').isInteger()", false],
    ["quantity('1.0').isInteger()", false],
    ["quantity('0.5k').isInteger()", true],
    ["quantity('1.5Gi').isInteger()", false],
    ["quantity('0').isInteger()", true],
    ["quantity('1.5').add(quantity('0.5')).isInteger()", false],
    ["quantity('1k').add(quantity('1')).asInteger()", 1001n],
    ["quantity('1000m').asInteger()", { error: 'cannot convert value to integer' }],
    ["quantity('9999999999999999999999999999999999999G').isInteger()", false],
    ["quantity('9223372036854775808').asApproximateFloat() > 9.2e18", true],
    ["quantity('9223372036854775808').asInteger()", { error: 'cannot convert value to integer' }],
    ["sign(quantity('-1Ei')) == -1 && sign(quantity('0')) == 0", true],
  ])('%s', row);

  it("quantity(...).sign() is an overload error: found no matching overload for 'sign'", () => {
    refused("quantity('1').sign() == 1", "found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'");
  });
});

// cel-go keeps a timestamp's UTC offset as written (time.Parse): string() prints it in RFC 3339 with
// nanoseconds trimmed (time.RFC3339Nano), 'Z' for UTC. The getters without a zone read UTC, as
// Kubernetes' environment sets cel.DefaultUTCTimeZone(true); a zone argument converts first.
describe('timestamps and their offsets', () => {
  it.each<[string, unknown]>([
    ["string(timestamp('2024-01-01T00:00:00.100+05:00'))", '2024-01-01T00:00:00.1+05:00'],
    ["string(timestamp('2024-01-01T00:00:00.000Z'))", '2024-01-01T00:00:00Z'],
    ["string(timestamp('2024-01-01T00:00:00.123456789Z'))", '2024-01-01T00:00:00.123456789Z'],
    ["string(timestamp('2024-01-01T00:00:00.120Z'))", '2024-01-01T00:00:00.12Z'],
    ["string(timestamp('2024-01-01T00:00:00-08:00'))", '2024-01-01T00:00:00-08:00'],
    ["string(timestamp('2024-01-01T00:00:00+00:00'))", '2024-01-01T00:00:00Z'],
    ["string(timestamp('2024-01-01T23:30:00-08:00') + duration('1h'))", '2024-01-02T00:30:00-08:00'],
    ["string(timestamp('2024-01-01T23:30:00-08:00') - duration('1h'))", '2024-01-01T22:30:00-08:00'],
    ["timestamp('2024-01-01T00:00:00+05:00') == timestamp('2023-12-31T19:00:00Z')", true],
    ["timestamp('2024-01-01T02:00:00Z').getHours('America/New_York')", 21n],
    ["timestamp('2024-07-01T02:00:00Z').getHours('America/New_York')", 22n],
    ["timestamp('2024-01-01T02:00:00Z').getHours('-05:00')", 21n],
    ["timestamp('2024-01-01T02:00:00Z').getHours('+05:30')", 7n],
    ["timestamp('2024-01-01T02:00:00+05:30').getHours('UTC')", 20n],
    ["timestamp('2024-01-01T02:00:00+05:30').getHours()", 20n],
    ["timestamp('2024-03-10T12:00:00Z').getDayOfWeek('America/New_York')", 0n],
    ["'%s'.format([timestamp('2023-02-03T23:31:20+00:00')])", '2023-02-03T23:31:20Z'],
    ["'%s'.format([timestamp('2023-02-03T23:31:20+01:00')])", '2023-02-03T23:31:20+01:00'],
  ])('%s', row);
});

describe('ip and cidr types', () => {
  it.each([
    "type(ip('1.2.3.4')) == net.IP",
    "type(ip('::1')) == net.IP",
    "type(cidr('192.168.0.0/24')) == net.CIDR",
    "type(cidr('2001:db8::/32').ip()) == net.IP",
    "type(ip('1.2.3.4')) != net.CIDR",
    'type(net.IP) == type',
  ])('%s', holds);
});

// cel-go ext/formatting.go (strings version 2, locale en_US): %e prints through golang.org/x/text
// (`1.052033×10⁰³`, its precision taken as a width), %f groups thousands and prints ∞, %s prints
// doubles as strconv's 'g', lists and maps as CEL literals with NaN and infinities quoted.
describe("format's %e and %s (cel-go strings extension, version 2)", () => {
  it.each<[string, string]>([
    ["'%.6e'.format([1052.032911275])", '1.052033×10⁰³'],
    ["'%e'.format([2.71828])", '2.718280×10⁰⁰'],
    [
      "'unescaped unicode: %e, escaped unicode: %e'.format([2.71828, 2.71828])",
      'unescaped unicode: 2.718280×10⁰⁰, escaped unicode: 2.718280×10⁰⁰',
    ],
    ["'%e'.format([-0.000123])", '-1.230000×10⁻⁰⁴'],
    ["'%e'.format([1.5e300])", '1.500000×10³⁰⁰'],
    // x/text pads to the width cel-go passes (`%6e`): NaN and the infinities show it.
    ["'%e'.format(['NaN'])", '   NaN'],
    ["'%e'.format(['Infinity'])", '     ∞'],
    ["'%e'.format(['-Infinity'])", '    -∞'],
    ["'%f'.format(['Infinity'])", '∞'],
    ["'%f'.format(['-Infinity'])", '-∞'],
    ["'%f'.format(['NaN'])", 'NaN'],
    ["'%.3f'.format([1.2345])", '1.234'],
    ["'%f'.format([2.71828])", '2.718280'],
    ["'%s'.format([2.71])", '2.71'],
    ["'%s'.format([[2.71]])", '[2.710000]'],
    ["'%s'.format([0.000000002])", '2e-09'],
    ["'%s'.format([[0.000000002]])", '[0.000000]'],
    ["'%s'.format([1234567.0])", '1.234567e+06'],
    ["'%s'.format([double('NaN')])", 'NaN'],
    ["'%s'.format([double('Inf')])", '+Inf'],
    ["'%s'.format([double('-Inf')])", '-Inf'],
    ['\'%s\'.format([[double("NaN"),double("+Inf"), double("-Inf")]])', '["NaN", "+Inf", "-Inf"]'],
    ["'%s'.format([{'b': [1, 2], 'a': {'x': 'y'}}])", '{"a":{"x":"y"}, "b":[1, 2]}'],
    ["'%s'.format([{1: 'a', 2: 'b'}])", '{1:"a", 2:"b"}'],
    [
      "'%s'.format([[timestamp('2023-02-03T23:31:20Z'), duration('1.5s')]])",
      '[timestamp("2023-02-03T23:31:20Z"), duration("1.5s")]',
    ],
    ["'%s'.format([duration('1h45m47s')])", '6347s'],
    ["'%s'.format([duration('2ns')])", '0.000000002s'],
    ["'%s'.format([duration('-1.5s')])", '-1.5s'],
    ["string(duration('1.5s'))", '1.5s'],
    ['string(1234567.0)', '1.234567e+06'],
    ['string(123456.0)', '123456'],
    ['string(0.00001)', '1e-05'],
    ['string(-0.0)', '-0'],
  ])('%s', row);
});

// cel-go's runtime error texts for what a user sees in `resulted in error: ...`.
describe("error texts in cel-go's words", () => {
  it.each<[string, string]>([
    ["{'a': 1}.x == 1", 'no such key: x'],
    ["{'a': {'b': 1}}.a.c == 1", 'no such key: c'],
    ["{1: 'a'}[2] == 'a'", 'no such key: 2'],
    ['[1, 2][2] == 1', "index '2' out of range in list size '2'"],
    ['dyn(1).x == 1', 'no such key: x'],
    ["timestamp('2024-01-01T02:00:00Z').getHours('Mars/Base') == 1", 'unknown time zone Mars/Base'],
  ])('%s: %s', (expression, message) => row(expression, { error: message }));
});

// format.go's uri format: url.ParseRequestURI, its error as the message.
describe('format.uri() validates as Go url.ParseRequestURI', () => {
  it.each<[string, unknown]>([
    ["format.uri().validate('https://user:pass@example.com:80/path?query=val#fragment').hasValue()", false],
    ["format.uri().validate('/absolute-path').hasValue()", false],
    ["format.uri().validate('https://a:b:c/').value()", ['parse "https://a:b:c/": invalid port ":c" after host']],
    ["format.uri().validate('../relative-path').value()", ['parse "../relative-path": invalid URI for request']],
  ])('%s', row);
});
