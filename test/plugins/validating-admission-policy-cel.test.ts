// The CEL side of the ValidatingAdmissionPolicy plugin: the 1.27 page's table of example
// expressions and its property-name escaping, then Kubernetes' CEL libraries as far as they go.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/validating-admission-policy/plugin.js';
import type { ExpressionRole, Type } from '../../lib/cel/checker.js';
import { CelCompileError, compileExpression } from '../../lib/cel/compile.js';
import { toCel } from '../../lib/cel/values.js';
import { deniedMessage, runPhase } from '../support/review.js';

/** Compiles as a policy would and evaluates with `object` (plain JSON, converted as requests are). */
function evaluate(expression: string, object: unknown = {}): unknown {
  const outcome = compileExpression(expression, { variables: new Set() }).evaluate(
    { object: toCel(object), oldObject: null, params: null },
    10_000_000,
  );
  if ('error' in outcome) throw new Error(outcome.error);
  const value = outcome.value as unknown;
  return value !== null && typeof value === 'object' && Symbol.iterator in value
    ? [...(value as Iterable<unknown>)]
    : value;
}

describe("the page's example expressions", () => {
  it.each([
    [
      'object.minReplicas <= object.replicas && object.replicas <= object.maxReplicas',
      { minReplicas: 1, replicas: 2, maxReplicas: 3 },
      { minReplicas: 1, replicas: 4, maxReplicas: 3 },
    ],
    ["'Available' in object.stateCounts", { stateCounts: { Available: 1 } }, { stateCounts: { Progressing: 1 } }],
    ['(size(object.list1) == 0) != (size(object.list2) == 0)', { list1: [], list2: ['a'] }, { list1: [], list2: [] }],
    [
      "!('MY_KEY' in object.map1) || object['MY_KEY'].matches('^[a-zA-Z]*$')",
      { map1: { MY_KEY: 'x' }, MY_KEY: 'abc' },
      { map1: { MY_KEY: 'x' }, MY_KEY: 'ab1' },
    ],
    [
      "object.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))",
      {
        envars: [
          { name: 'MY_ENV', value: 'abc' },
          { name: 'X', value: '1' },
        ],
      },
      { envars: [{ name: 'MY_ENV', value: 'a1' }] },
    ],
    ["object.health.startsWith('ok')", { health: 'ok: all good' }, { health: 'degraded' }],
    [
      "object.widgets.exists(w, w.key == 'x' && w.foo < 10)",
      { widgets: [{ key: 'x', foo: 9 }] },
      {
        widgets: [
          { key: 'x', foo: 10 },
          { key: 'y', foo: 1 },
        ],
      },
    ],
    ["type(object) == string ? object == '100%' : object == 1000", '100%', '50%'],
    ["type(object) == string ? object == '100%' : object == 1000", 1000, 999],
    [
      'object.metadata.name.startsWith(object.prefix)',
      { metadata: { name: 'web-1' }, prefix: 'web' },
      { metadata: { name: 'db-1' }, prefix: 'web' },
    ],
    ['object.set1.all(e, !(e in object.set2))', { set1: ['a', 'b'], set2: ['c'] }, { set1: ['a', 'b'], set2: ['b'] }],
    [
      'size(object.names) == size(object.details) && object.names.all(n, n in object.details)',
      { names: ['a', 'b'], details: { a: 1, b: 2 } },
      { names: ['a', 'c'], details: { a: 1, b: 2 } },
    ],
    [
      'size(object.clusters.filter(c, c.name == object.primary)) == 1',
      { clusters: [{ name: 'a' }, { name: 'b' }], primary: 'a' },
      { clusters: [{ name: 'a' }, { name: 'a' }], primary: 'a' },
    ],
    // Schema-less, date-time strings and durations stay strings: the conversions are written out.
    [
      'has(object.expired) && timestamp(object.created) + duration(object.ttl) < timestamp(object.expired)',
      { created: '2024-01-01T00:00:00Z', ttl: '1h', expired: '2024-01-01T02:00:00Z' },
      { created: '2024-01-01T00:00:00Z', ttl: '3h', expired: '2024-01-01T02:00:00Z' },
    ],
  ])('%s', (expression, passing, failing) => {
    expect(evaluate(expression, passing)).toBe(true);
    expect(evaluate(expression, failing)).toBe(false);
  });

  it('the page prints the envars expression without its closing parenthesis: a compile error with the position', () => {
    expect(() =>
      compileExpression("object.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$')", {
        variables: new Set(),
      }),
    ).toThrow(/^ERROR: <input>:1:\d+: Syntax error/);
  });

  it('escaped property names select the property they stand for', () => {
    expect(evaluate('object.__namespace__ > 0', { namespace: 1 })).toBe(true);
    expect(evaluate('object.x__dash__prop > 0', { 'x-prop': 1 })).toBe(true);
    expect(evaluate('object.redact__underscores__d > 0', { redact__d: 1 })).toBe(true);
    expect(evaluate('object.a__dot__b + object.a__slash__b', { 'a.b': 'x', 'a/b': 'y' })).toBe('xy');
  });

  it('integers are CEL ints, so arithmetic and string() behave as upstream', () => {
    expect(evaluate('object.spec.replicas / 2', { spec: { replicas: 5 } })).toBe(2n);
    expect(
      evaluate("'Deployment spec.replicas set to ' + string(object.spec.replicas)", { spec: { replicas: 128 } }),
    ).toBe('Deployment spec.replicas set to 128');
    expect(
      evaluate('type(object.spec.replicas) == int && object.ratio == 0.5', { spec: { replicas: 1 }, ratio: 0.5 }),
    ).toBe(true);
    expect(() => evaluate('9223372036854775807 + 1')).toThrow(/overflow/);
  });
});

describe('Kubernetes CEL libraries', () => {
  it.each([
    // strings (cel-go ext) and regex
    ["'Hello'.lowerAscii() + 'x'.upperAscii() + ' a '.trim() + 'a,b'.split(',').join('-')", 'helloXaa-b'],
    ["'%s has %d replicas'.format(['web', 3])", 'web has 3 replicas'],
    ["'abc'.replace('b', 'x') + 'abc'.substring(1) + string('abc'.indexOf('c'))", 'axcbc2'],
    ["'ABC'.matches('(?i)^abc$')", true],
    ["'abc123def456'.find('[0-9]+')", '123'],
    ["'abc123def456'.findAll('[0-9]+')", ['123', '456']],
    ["'a1b2c3'.findAll('[0-9]', 2)", ['1', '2']],
    // lists and sets
    ['[1, 2, 3].isSorted() && ![2, 1].isSorted()', true],
    ['[1, 2, 3].sum() + [4, 5].max() + [6, 7].min()', 17n],
    ["['a', 'b', 'a'].indexOf('a') + ['a', 'b', 'a'].lastIndexOf('a')", 2n],
    ['sets.contains([1, 2, 3], [2, 3]) && sets.equivalent([1, 2], [2, 1]) && !sets.intersects([1], [2])', true],
    // quantity
    ["quantity('1Gi') == quantity('1024Mi') && quantity('500m').isLessThan(quantity('1'))", true],
    ["quantity('1.5').add(2).asApproximateFloat()", 3.5],
    ["quantity('2k').sub(quantity('500')).asInteger()", 1500n],
    ["quantity('1Ki').compareTo(quantity('1k')) + sign(quantity('-1'))", 0n],
    ["isQuantity('10Mi') && !isQuantity('10MB') && quantity('1.5').isInteger() == false", true],
    // url
    ["url('https://example.com:8443/a/b?x=1&x=2').getHost()", 'example.com:8443'],
    [
      "url('https://[::1]:80/').getHostname() + url('https://example.com:80/').getPort() + url('/p?q').getEscapedPath()",
      '::180/p',
    ],
    ["url('https://e.com/?x=1&x=2&y=3').getQuery()['x']", ['1', '2']],
    ["isURL('https://example.com') && !isURL('example.com')", true],
    // ip and cidr
    [
      "ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && ip('fe80::1').isLinkLocalUnicast() && ip('8.8.8.8').isGlobalUnicast()",
      true,
    ],
    ["string(ip('2001:DB8:0:0:0:0:0:1')) + ' ' + string(ip.isCanonical('2001:db8::1'))", '2001:db8::1 true'],
    [
      "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))",
      true,
    ],
    [
      "string(cidr('10.1.2.3/8').masked()) + ' ' + string(cidr('10.1.2.3/8').ip()) + ' ' + string(cidr('10.0.0.0/8').prefixLength())",
      '10.0.0.0/8 10.1.2.3 8',
    ],
    ["isIP('1.2.3.4') && !isIP('01.2.3.4') && !isIP('::ffff:1.2.3.4') && isCIDR('::/0')", true],
    // semver
    ["semver('1.2.3-alpha.1').isLessThan(semver('1.2.3')) && semver('1.10.0').isGreaterThan(semver('1.9.9'))", true],
    ["semver('v1.2', true).minor() + semver('1.2.3').major() + semver('1.2.3').compareTo(semver('1.2.4'))", 2n],
    ["isSemver('1.2.3') && !isSemver('v1.2.3') && isSemver('v1.2.3', true)", true],
    // types
    ["type(quantity('1')) == kubernetes.Quantity && type(ip('::1')) == net.IP && type(cidr('::/0')) == net.CIDR", true],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toEqual(expected);
  });

  it("library errors are evaluation errors, with upstream's wording where it matters", () => {
    expect(() => evaluate("quantity('10MB')")).toThrow(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    expect(() => evaluate("ip('::ffff:1.2.3.4')")).toThrow(/IPv4-mapped IPv6 address/);
    expect(() => evaluate('[].min()')).toThrow('min called on empty list');
    expect(() => evaluate("'a'.matches('a(?=b)')")).toThrow();
  });

  it('what the engine lacks fails at compile time, not at admission', () => {
    for (const expression of [
      'math.greatest(1, 2)',
      "base64.encode(b'x')",
      'cel.bind(x, 1, x)',
      "'abc'.reverse()",
      "quantity('1').mul(2)",
      "quantity('1').sign()",
    ]) {
      expect(() => compileExpression(expression, { variables: new Set() }), expression).toThrow(/^ERROR: <input>/);
    }
  });
});

describe('compile-time checks the apiserver makes when a policy is created, in its words', () => {
  const detail = (expression: string, role: ExpressionRole, params = false) => {
    try {
      compileExpression(expression, {
        variables: new Map<string, Type>([['flag', { kind: 'prim', name: 'bool' }]]),
        role,
        params,
      });
      return 'compiles';
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      return error.detail;
    }
  };

  it.each<[string, ExpressionRole, string]>([
    ["'abc'", 'validation', 'must evaluate to bool but got string'],
    ['object.spec.paused', 'validation', 'must evaluate to bool but got dyn'],
    ['variables.flag', 'validation', 'compiles'],
    ['1', 'messageExpression', 'must evaluate to string but got int'],
    ["'yes'", 'matchCondition', 'must evaluate to bool but got string'],
    ['1', 'auditAnnotation', 'must evaluate to one of [string null_type] but got int'],
    ['object.x', 'auditAnnotation', 'must evaluate to one of [string null_type] but got dyn'],
    ["has(object.x) ? 'a' : null", 'auditAnnotation', 'compiles'],
    ['object.spec.replicas', 'variable', 'compiles'],
  ])('%s as %s: %s', (expression, role, expected) => {
    expect(detail(expression, role)).toBe(expected);
  });

  it.each<[string, string]>([
    ['params.x == 1', "ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"],
    ['request.foo == 1', "ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 1\n | .......^"],
    ["[1, 'a'] == []", "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'] == []\n | ....^"],
    [
      "{'a': 1, 'b': 'x'}.size() > 0",
      "ERROR: <input>:1:15: expected type 'int' but found 'string'\n | {'a': 1, 'b': 'x'}.size() > 0\n | ..............^",
    ],
    [
      '42.charAt(2) == 1',
      "ERROR: <input>:1:10: found no matching overload for 'charAt' applied to 'int.(int)'\n | 42.charAt(2) == 1\n | .........^",
    ],
    [
      "quantity('1').sign() == 1",
      "ERROR: <input>:1:19: found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'\n | quantity('1').sign() == 1\n | ..................^",
    ],
    [
      "duration('1x') > duration('0s')",
      "ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('0s')\n | .........^",
    ],
    [
      "timestamp('x') > timestamp('2020-01-01T00:00:00Z')",
      "ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('x') > timestamp('2020-01-01T00:00:00Z')\n | ..........^",
    ],
    ["'a'.matches('[')", "ERROR: <input>:1:13: invalid matches argument\n | 'a'.matches('[')\n | ............^"],
    [
      "1 == 'a'",
      "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, string)'\n | 1 == 'a'\n | ..^",
    ],
  ])('%s', (expression, message) => {
    expect(detail(expression, 'validation')).toBe(`compilation failed: ${message}`);
  });

  it('a list in a format call may mix types; params compiles with a paramKind', () => {
    expect(detail("'%s %d'.format(['a', 1]) == 'a 1'", 'validation')).toBe('compiles');
    expect(detail('params.x == 1', 'validation', true)).toBe('compiles');
  });
});

// What a v1.36.2 kube-apiserver answers, case by case; test/e2e/validating-admission-policy-cel.e2e.test.ts
// puts the same policies to a real one and compares its messages with the project's.
describe('as a v1.36 apiserver evaluates it', () => {
  it.each<[string, string]>([
    // %e: `×10` and superscript digits, no space around the sign; the precision is a width to x/text.
    ["'%e'.format([3.14])", '3.140000×10⁰⁰'],
    ["'%.6e'.format([1052.032911275])", '1.052033×10⁰³'],
    ["'%e'.format([-0.00012345])", '-1.234500×10⁻⁰⁴'],
    ["'%.3e'.format([2.5])", '2.500000×10⁰⁰'],
    ["'%e'.format([0.0])", '0.000000×10⁰⁰'],
    // A literal anywhere under a format call may mix types, nested too: list(dyn), map(string, dyn).
    ["'%s'.format([[[1, 2, [3.0, 4]]].size()])", '1'],
    ["'%s'.format([[[1, 2, [3.0, 4]]][0]])", '[1, 2, [3.000000, 4]]'],
    ["'%s'.format([{'a': {'b': 1, 'c': 'x'}}['a']])", '{"b":1, "c":"x"}'],
    ["'%d'.format([{'a': 1, 'b': [2.0]}.size()])", '2'],
    ["'%s'.format([[1, 'a'].exists(x, x == 'a')])", 'true'],
  ])('%s is %s', (expression, expected) => {
    expect(evaluate(expression)).toBe(expected);
  });

  it('a mixed literal outside any format call is still refused, naming the first element that differs', () => {
    expect(() => evaluate('[[1, 2, [3.0, 4]]][0] == [1]')).toThrow(/expected type 'int' but found 'list\(dyn\)'/);
    expect(() => evaluate("{'a': 1, 'b': [2.0]}.size() == 2")).toThrow(
      /expected type 'int' but found 'list\(double\)'/,
    );
  });

  it.each<[string, string]>([
    // cel-go's refQualify: selecting from what is neither a map nor a list has no such key, and has()
    // on it is false; a list takes the field name as an index it cannot use.
    ['dyn(1).x == 1', 'no such key: x'],
    ['dyn([1]).x == 1', "unsupported index type 'string' in list"],
    ['has(dyn([1]).x)', "unsupported index type 'string' in list"],
  ])('%s fails: %s', (expression, message) => {
    expect(() => evaluate(expression)).toThrow(message);
  });

  it.each<[string, boolean]>([
    ["has(dyn('abc').x)", false],
    ['has(dyn(1).x)', false],
    ['has(dyn(null).x)', false],
  ])('%s is %s', (expression, expected) => {
    expect(evaluate(expression)).toBe(expected);
  });
});

// test/integration/apiserver/cel/validatingadmissionpolicy_test.go, TestValidateNamespace_NullParams
// cases: a paramKind and a binding without paramRef, so params is null.
describe('null params, as the apiserver denies a namespace', () => {
  const prefix =
    "namespaces \"test-k8s\" is forbidden: ValidatingAdmissionPolicy 'validate-namespace-suffix' with binding 'validate-namespace-suffix-binding' denied request: ";

  async function denial(expression: string): Promise<string | undefined> {
    const config = plugin.configure!(
      {
        manifests: [
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'validate-namespace-suffix' },
            spec: {
              failurePolicy: 'Fail',
              paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
              matchConstraints: {
                resourceRules: [
                  { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] },
                ],
              },
              validations: [{ expression }],
            },
          },
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: 'validate-namespace-suffix-binding' },
            spec: { policyName: 'validate-namespace-suffix', validationActions: ['Deny'] },
          },
        ],
      },
      { file: 'test AdmissionConfiguration', baseDir: import.meta.dirname },
    );
    const result = await runPhase(
      plugin,
      'validate',
      {
        kind: { group: '', version: 'v1', kind: 'Namespace' },
        resource: { group: '', version: 'v1', resource: 'namespaces' },
        object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'test-k8s' } },
      },
      config,
    );
    return deniedMessage(result);
  }

  it.each<[string, string]>([
    [
      'object.metadata.name.startsWith(params.metadata.name)',
      "expression 'object.metadata.name.startsWith(params.metadata.name)' resulted in error: no such key: metadata",
    ],
    [
      'has(params.metadata) && has(params.metadata.name) && object.metadata.name.endsWith(params.metadata.name)',
      'failed expression: has(params.metadata) && has(params.metadata.name) && object.metadata.name.endsWith(params.metadata.name)',
    ],
    [
      '(params != null && object.metadata.name.endsWith(params.metadata.name))',
      'failed expression: (params != null && object.metadata.name.endsWith(params.metadata.name))',
    ],
  ])('%s', async (expression, message) => {
    expect(await denial(expression)).toBe(prefix + message);
  });

  it('has() guards a default check: the namespace is admitted', async () => {
    expect(
      await denial(
        "(has(params.metadata) && has(params.metadata.name) && object.metadata.name.startsWith(params.metadata.name)) || object.metadata.name.endsWith('k8s')",
      ),
    ).toBeUndefined();
  });
});
