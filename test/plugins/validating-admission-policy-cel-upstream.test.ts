// Upstream's own test tables, ported as facts: cel-go's optional-value tests (cel/cel_test.go
// TestOptionalValues), Kubernetes' CEL library tests (k8s.io/apiserver/pkg/cel/library/*_test.go)
// and cel-go's extension tests for the functions Kubernetes enables. Each row is an expression,
// its inputs, and the value or error upstream gives.
import { describe, expect, it } from 'vitest';
import { isCelError, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { CostMeter, policyEnvironment } from '../../functions/validating-admission-policy/cel-env.js';
import { Compiler, asCel } from '../../functions/validating-admission-policy/interpreter.js';
import { isOptional, optionalOf, optionalValue } from '../../functions/validating-admission-policy/library/optional.js';
import { parseCel } from '../../functions/validating-admission-policy/parser.js';

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
  const bindings = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v === NONE ? optionalOf(undefined) : isSome(v) ? optionalOf(asCel(v.some) as never) : v]));
  const result = env.run(new CostMeter(1_000_000), () => program(bindings));
  if (isCelError(result)) return { error: result.message };
  return plain(result);
}
const isSome = (v: unknown): v is { some: unknown } => typeof v === 'object' && v !== null && 'some' in v && Object.keys(v).length === 1;

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
    ["optional.ofNonZeroValue('').or(optional.of(m.c['dashed-index'])).orValue('default value')", m({ c: { 'dashed-index': 'goodbye' } }), 'goodbye'],
    ["m.c[?'dashed-index'].orValue('default value')", m({ c: { 'dashed-index': 'goodbye' } }), 'goodbye'],
    ["m.c[?'missing-index'].orValue('default value')", m({ c: {} }), 'default value'],
    ["optm.c.index.orValue('default value')", { optm: some({ c: { index: 'goodbye' } }) }, 'goodbye'],
    ["optm.c.missing.or(optl[0]).orValue('default value')", { optm: some({ c: {} }), optl: NONE }, 'default value'],
    ["optm.c.missing.or(optl[0]).orValue('default value')", { optm: some({ c: {} }), optl: some(['list-value']) }, 'list-value'],
    ["optm.c['index'].orValue('default value')", { optm: some({ c: { index: 'goodbye' } }) }, 'goodbye'],
    ["optm.c['missing'].orValue('default value')", { optm: some({ c: {} }) }, 'default value'],
    ['has(optm.c) && !has(optm.c.missing)', { optm: some({ c: { entry: 'hello world' } }) }, true],
    ["optional.ofNonZeroValue(m.a.z).orValue(m.c['dashed-index'])", m({ c: { 'dashed-index': 'goodbye' } }), { error: 'no such key: a' }],
    ["m.?c.missing.or(m.?c['dashed-index']).orValue('').size()", m({ c: { 'dashed-index': 'goodbye' } }), 7n],
    ["{?'nested_map': optional.ofNonZeroValue({?'map': m.?c})}", m({ c: { 'dashed-index': 'goodbye' } }), { nested_map: { map: { 'dashed-index': 'goodbye' } } }],
    ["{?'nested_map': optional.ofNonZeroValue({?'map': m.?c}), 'singleton': true}", m({}), { singleton: true }],
    ['[?m.?c, ?x, ?y]', { m: {}, x: some(42n), y: NONE }, [42n]],
    ['[?optional.ofNonZeroValue(m.?c.orValue({}))]', m({ c: [] }), []],
    ["optional.ofNonZeroValue({?'nested_map': optional.ofNonZeroValue({?'map': m.?c})})", m({}), NONE],
  ])('%s', (expression, inputs, expected) => {
    expect(run(expression, inputs)).toEqual(expected);
  });
});
