// What the apiserver refuses when a policy is created, beyond parsing and overload resolution:
// cel-go's program planning (interpreter/decorators.go decOptimize and decRegexOptimizer, which
// Kubernetes enables with cel.OptOptimize and library/regex.go's optimizations; planner.go's
// constant qualifiers), ext/formatting.go's string.format validator, cel/validator.go's literal
// validators, the checker's `_==_(A, A)`, and the escape syntax Kubernetes leaves disabled. Rows
// come from those files' tests (cel-go interpreter_test.go, ext/strings_test.go,
// cel/validator_test.go) and cel-spec's conformance files (conversions.textproto).
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/validating-admission-policy/plugin.js';
import { CelCompileError, compileExpression } from '../../lib/cel/compile.js';
import { configErrorOf } from '../support/config-error.js';

/** The apiserver's field error body for this expression, or 'compiles'. */
function refusal(expression: string): string {
  try {
    compileExpression(expression, { variables: new Set(['object']) });
    return 'compiles';
  } catch (error) {
    if (!(error instanceof CelCompileError)) throw error;
    return error.fieldError(expression);
  }
}

const internal = (message: string) => `Internal error: program instantiation failed: ${message}`;
const invalid = (expression: string, error: string) =>
  `Invalid value: ${JSON.stringify(expression)}: compilation failed: ${error}`;

describe('a constant that must fail fails when the program is planned (program instantiation failed)', () => {
  it.each<[string, string]>([
    // Type conversions of constants (decOptimize's maybeOptimizeConstUnary); conversions.textproto.
    ['int(1e99) == 0', 'integer overflow'],
    ['int(-9.3e18) == 0', 'integer overflow'],
    ["int('9223372036854775808') == 0", "type conversion error from 'string' to 'int'"],
    ["int('1.5') == 1", "type conversion error from 'string' to 'int'"],
    ['uint(-1) == 0u', 'unsigned integer overflow'],
    ['uint(6.022e23) == 0u', 'unsigned integer overflow'],
    ["uint('-1') == 0u", "type conversion error from 'string' to 'uint'"],
    ["bool('maybe')", "type conversion error from 'string' to 'bool'"],
    ["bool('TrUe')", "type conversion error from 'string' to 'bool'"],
    ["string(b'\\xff') == ''", 'invalid UTF-8 in bytes, cannot convert to string'],
    ["double('1e') == 0.0", "type conversion error from 'string' to 'double'"],
    ['timestamp(dyn(253402300800)) == timestamp(0)', 'timestamp overflow'],
    ['timestamp(dyn(-62135596801)) == timestamp(0)', 'timestamp overflow'],
    [
      "timestamp(dyn('2000-13-01T00:00:00Z')) == timestamp(0)",
      "type conversion error from 'string' to 'google.protobuf.Timestamp'",
    ],
    ["duration(dyn('1d')) == duration('0s')", "type conversion error from 'string' to 'google.protobuf.Duration'"],
    // A folded constant folds again: dyn() of a literal is a constant.
    ["int(dyn('x')) == 0", "type conversion error from 'string' to 'int'"],
    ['object.all(x, int(2e19) == x)', 'integer overflow'],
    // Constant regexes (library/regex.go's FindRegexOptimization, FindAllRegexOptimization, and
    // interpreter.MatchesRegexOptimization for a constant that is not a literal).
    ["'abc'.find(')') == ''", 'error parsing regexp: unexpected ): `)`'],
    ["'abc'.findAll('[a-', 1) == []", 'error parsing regexp: missing closing ]: `[a-`'],
    ["'abc'.matches(string('('))", 'error parsing regexp: missing closing ): `(`'],
    // A constant index that cannot qualify (attributes.go newQualifier).
    ["{'a': 1}[dyn(null)] == 1", 'invalid qualifier type: types.Null'],
    ["{'a': 1}[dyn(b'a')] == 1", 'invalid qualifier type: types.Bytes'],
  ])('%s: %s', (expression, message) => {
    expect(refusal(expression)).toBe(internal(message));
  });

  it.each<[string]>([
    ["int('42') == 42"],
    ['uint(1e19) == 10000000000000000000u'],
    ["bool('T') && !bool('F') && bool('1')"],
    ["string(b'\\xc3\\xbf') == 'ÿ'"],
    ["'abc'.find(object.pattern) == ''"],
    ["{'a': 1}[dyn('a')] == 1"],
    ['[1, 2][dyn(1.0)] == 2'],
    ["timestamp(dyn(253402300799)) == timestamp('9999-12-31T23:59:59Z')"],
  ])('%s is planned', (expression) => {
    expect(refusal(expression)).toBe('compiles');
  });

  it('is reported only once the expression compiled and had the right result type', () => {
    expect(refusal("int('x') + nope")).toContain("undeclared reference to 'nope'");
  });

  it('surfaces at start as the apiserver reports it: an internal error on the expression field', () => {
    const error = configErrorOf(() =>
      plugin.configure!(
        {
          manifests: [
            {
              apiVersion: 'admissionregistration.k8s.io/v1',
              kind: 'ValidatingAdmissionPolicy',
              metadata: { name: 'p.example.com' },
              spec: {
                matchConstraints: {
                  resourceRules: [
                    { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
                  ],
                },
                validations: [{ expression: 'true' }, { expression: 'object.spec.replicas < int(1e99)' }],
              },
            },
          ],
        },
        { file: 'test AdmissionConfiguration', baseDir: '.' },
      ),
    );
    expect(error.message).toBe(
      'ValidatingAdmissionPolicy: ValidatingAdmissionPolicy "p.example.com" (manifests[0]) spec.validations[1].expression: ' +
        internal('integer overflow'),
    );
  });
});

describe('the literal validators look at any literal argument (cel/validator.go)', () => {
  it.each<[string, string]>([
    ['timestamp(253402300800) == timestamp(0)', 'ERROR: <input>:1:11: invalid timestamp argument'],
    ['timestamp(-62135596801) == timestamp(0)', 'ERROR: <input>:1:11: invalid timestamp argument'],
    ["timestamp('10000-01-01T00:00:00Z') == timestamp(0)", 'ERROR: <input>:1:11: invalid timestamp argument'],
    ["duration('1d') == duration('0s')", 'ERROR: <input>:1:10: invalid duration argument'],
    ["'a'.matches(')')", 'ERROR: <input>:1:13: invalid matches argument'],
  ])('%s', (expression, error) => {
    expect(refusal(expression)).toContain(invalid(expression, error));
  });

  it('timestamp(int) counts seconds', () => {
    const outcome = compileExpression('string(timestamp(1000))', { variables: new Set() }).evaluate({}, 1000);
    expect(outcome).toMatchObject({ value: '1970-01-01T00:16:40Z' });
  });
});

// ext/strings_test.go's format rows with errors (version 2, the validator on), and the validator's
// rule: only a literal format string applied to a list literal is checked, at the argument at fault.
describe('string.format with a literal format string is checked when the policy is created', () => {
  it.each<[string, string]>([
    [
      "'%d'.format([1.5]) == ''",
      '1:14: error during formatting: decimal clause can only be used on integers, was given double',
    ],
    [
      "'%f'.format([1]) == ''",
      '1:14: error during formatting: fixed-point clause can only be used on doubles, was given int',
    ],
    [
      "'%e'.format([true]) == ''",
      '1:14: error during formatting: scientific clause can only be used on doubles, was given bool',
    ],
    [
      "'%b'.format([1.5]) == ''",
      '1:14: error during formatting: only integers and bools can be formatted as binary, was given double',
    ],
    [
      "'%o'.format(['x']) == ''",
      '1:14: error during formatting: octal clause can only be used on integers, was given string',
    ],
    [
      "'%x'.format([[1]]) == ''",
      '1:14: error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given list',
    ],
    [
      "'%s'.format([[1, optional.none()]]) == ''",
      '1:31: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type',
    ],
    ["'%d %d'.format([1]) == ''", '1:15: index 1 out of range'],
    ["'%d'.format([1, 2]) == ''", '1:12: too many arguments supplied to string.format (expected 1, got 2)'],
    ["'%z'.format([1]) == ''", '1:12: could not parse formatting clause: unrecognized formatting clause "z"'],
    ["'abc %'.format([1]) == ''", '1:15: unexpected end of string'],
    [
      "'%.f'.format([1.0]) == ''",
      '1:13: could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax',
    ],
    [
      "'%.3'.format([1.0]) == ''",
      '1:13: could not parse formatting clause: error while parsing precision: could not find end of precision specifier',
    ],
  ])('%s', (expression, error) => {
    expect(refusal(expression)).toContain(invalid(expression, `ERROR: <input>:${error}`));
  });

  it.each<[string]>([
    ["'%s %d %f %e %b %x %X %o %%'.format(['a', 1, 1.5, 'NaN', true, b'a', 'a', 8u]) != ''"],
    ["'%d'.format(dyn([1.5])) != ''"],
    ["'%d'.format([object.count]) != ''"],
    ["object.template.format([1.5]) != ''"],
    ["'%s'.format([[1, 'a', {'k': 2.5}]]) != ''"],
  ])('%s is left to evaluation', (expression) => {
    expect(refusal(expression)).toBe('compiles');
  });

  it('evaluation reads the argument before the clause, as parseFormatString does', () => {
    const run = (expression: string) => compileExpression(expression, { variables: new Set() }).evaluate({}, 1_000_000);
    expect(run("'x %'.format(dyn([]))")).toMatchObject({ error: 'index 0 out of range' });
    expect(run("'x %'.format(dyn([1]))")).toMatchObject({ error: 'unexpected end of string' });
    expect(run("'%d'.format(dyn([1.5]))")).toMatchObject({
      error: 'error during formatting: decimal clause can only be used on integers, was given double',
    });
  });
});

describe('the checker: equality is _==_(A, A), and backquoted fields are not enabled', () => {
  it.each<[string, string]>([
    ['1 == 1.0', "1:3: found no matching overload for '_==_' applied to '(int, double)'"],
    ['1u != 1', "1:4: found no matching overload for '_!=_' applied to '(uint, int)'"],
    ['[1] == [1.0]', "1:5: found no matching overload for '_==_' applied to '(list(int), list(double))'"],
    [
      "{'a': 1} == {'a': 'b'}",
      "1:10: found no matching overload for '_==_' applied to '(map(string, int), map(string, string))'",
    ],
    ["'a' == null", "1:5: found no matching overload for '_==_' applied to '(string, null_type)'"],
    ['object.`a-b` == 1', "1:8: unsupported syntax: '`'"],
    ['object.?`a.b`.orValue(1) == 1', "1:9: unsupported syntax: '`'"],
  ])('%s', (expression, error) => {
    expect(refusal(expression)).toContain(invalid(expression, `ERROR: <input>:${error}`));
  });

  it.each<[string]>([
    ['dyn(1) == 1.0'],
    ['object == 1.0'],
    ['1 < 1.5 && 2u > 1 && 1.0 <= 1'],
    ['[] == [1]'],
    ["{} != {'a': [1]}"],
    ['optional.none() == optional.of(1)'],
    ['object.x == null'],
    ['request.userInfo == null'],
    ['object.a__dash__b == 1'],
  ])('%s compiles', (expression) => {
    expect(refusal(expression)).toBe('compiles');
  });
});
