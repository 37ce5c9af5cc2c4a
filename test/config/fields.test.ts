// Strict reading of OpenShift configuration objects: unknown fields fail with the nearest known name.
import { describe, expect, it } from 'vitest';
import { FieldPath, invalid, notSupported } from '../../lib/admission/field.js';
import {
  ConfigFields,
  closestName,
  openShiftConfig,
  rejectUnknownFields,
  validationError,
} from '../../lib/config/fields.js';
import { configErrorOf } from '../support/config-error.js';

describe('closestName', () => {
  it.each([
    ['restrictedCIRDs', ['restrictedCIDRs'], 'restrictedCIDRs'],
    ['AllowedUsers', ['allowedUsers', 'allowedGroups'], 'allowedUsers'],
    ['defaultnodeselector', ['defaultNodeSelector'], 'defaultNodeSelector'],
    [
      'cpuRequestToLimitPercentage',
      ['cpuRequestToLimitPercent', 'memoryRequestToLimitPercent'],
      'cpuRequestToLimitPercent',
    ],
    ['color', ['restrictedCIDRs'], undefined],
    ['x', [], undefined],
  ])('%s → %s', (name, known, expected) => {
    expect(closestName(name, known)).toBe(expected);
  });
});

describe('rejectUnknownFields', () => {
  it('accepts known fields and names the first unknown one with a suggestion, or the known list', () => {
    expect(() => rejectUnknownFields('P', '', { a: 1, bb: 2 }, ['a', 'bb'])).not.toThrow();
    expect(configErrorOf(() => rejectUnknownFields('P', '', { allowedUser: [] }, ['allowedUsers'])).message).toBe(
      'P: allowedUser: unknown field "allowedUser"; did you mean "allowedUsers"?',
    );
    expect(configErrorOf(() => rejectUnknownFields('P', 'spec', { zzz: 1 }, ['alpha', 'beta'])).message).toBe(
      'P: spec.zzz: unknown field "zzz"; supported fields: alpha, beta',
    );
    expect(configErrorOf(() => rejectUnknownFields('P', '', { zzz: 1 }, [])).message).toBe(
      'P: zzz: unknown field "zzz"; no fields are supported here',
    );
  });
});

describe('openShiftConfig', () => {
  const read = (raw: unknown) => openShiftConfig('P', raw, 'x.openshift.io/v1', 'XConfig', ['field'])?.value;
  it('is undefined without an entry, the object when apiVersion, kind and fields are right', () => {
    expect(read(undefined)).toBeUndefined();
    expect(read(null)).toBeUndefined();
    expect(read({ apiVersion: 'x.openshift.io/v1', kind: 'XConfig', field: 1 })).toEqual({
      apiVersion: 'x.openshift.io/v1',
      kind: 'XConfig',
      field: 1,
    });
  });

  it.each([
    [[], 'configuration', 'must be a XConfig object'],
    ['text', 'configuration', 'must be a XConfig object'],
    [{ kind: 'XConfig' }, 'apiVersion', 'must be x.openshift.io/v1, got null'],
    [{ apiVersion: 'x.openshift.io/v1', kind: 'Y' }, 'kind', 'must be XConfig, got "Y"'],
    [
      { apiVersion: 'x.openshift.io/v1', kind: 'XConfig', feild: 1 },
      'feild',
      'unknown field "feild"; did you mean "field"?',
    ],
  ])('%j is refused at %s', (raw, field, detail) => {
    expect(configErrorOf(() => read(raw)).message).toBe(`P: ${field}: ${detail}`);
  });
});

describe('ConfigFields', () => {
  const fields = (value: Record<string, unknown>) => new ConfigFields('P', 'spec', value);
  const refusal = (read: () => unknown) => configErrorOf(read).message;

  it('typeMeta accepts absent apiVersion and kind unless required, and names the accepted ones', () => {
    expect(() => fields({}).typeMeta(['g/v1'], ['K'])).not.toThrow();
    expect(refusal(() => fields({}).typeMeta(['g/v1'], ['K'], true))).toBe(
      'P: spec.apiVersion: must be g/v1, got null',
    );
    expect(refusal(() => fields({ apiVersion: 'g/v9' }).typeMeta(['g/v1', 'g/v2'], ['K']))).toBe(
      'P: spec.apiVersion: must be one of g/v1, g/v2, got "g/v9"',
    );
    expect(refusal(() => fields({ apiVersion: 'any', kind: 'L' }).typeMeta(undefined, ['K']))).toBe(
      'P: spec.kind: must be K, got "L"',
    );
  });

  it('integers say their range only when they have one', () => {
    expect(fields({}).optionalInteger('n')).toBeUndefined();
    expect(fields({ n: null }).integer('n', 7)).toBe(7);
    expect(fields({ n: -3 }).integer('n', 0)).toBe(-3);
    expect(refusal(() => fields({ n: '5' }).integer('n', 0))).toBe('P: spec.n: must be an integer, got "5"');
    expect(refusal(() => fields({ n: -1 }).integer('n', 0, 0))).toBe(
      'P: spec.n: must be an integer of at least 0, got -1',
    );
    expect(refusal(() => fields({ n: 1.5 }).integer('n', 0, 1, 10))).toBe(
      'P: spec.n: must be an integer from 1 to 10, got 1.5',
    );
  });

  it('object reads an absent section as empty, at its own path', () => {
    const section = fields({}).object('defaults');
    expect(section.value).toEqual({});
    expect(
      refusal(() =>
        fields({ defaults: { enforse: 'x' } })
          .object('defaults')
          .allow('enforce'),
      ),
    ).toBe('P: spec.defaults.enforse: unknown field "enforse"; did you mean "enforce"?');
    expect(refusal(() => fields({ defaults: [] }).object('defaults'))).toBe('P: spec.defaults: must be an object');
  });

  it('string lists name the wrong item, and refuse empty strings when asked', () => {
    expect(fields({}).strings('l', { fallback: ['d'] })).toEqual(['d']);
    expect(fields({ l: [] }).strings('l', { fallback: ['d'] })).toEqual([]);
    expect(fields({ l: ['a', ''] }).strings('l')).toEqual(['a', '']);
    expect(refusal(() => fields({ l: 'a' }).strings('l'))).toBe('P: spec.l: must be a list of strings');
    expect(refusal(() => fields({ l: ['a', 2] }).strings('l'))).toBe('P: spec.l[1]: must be a string, got 2');
    expect(refusal(() => fields({ l: ['a', ''] }).strings('l', { nonEmpty: true }))).toBe(
      'P: spec.l[1]: must be a non-empty string, got ""',
    );
  });
});

describe('validationError', () => {
  it('is undefined without errors, else names the first field and lists the others after it', () => {
    expect(validationError('P', [])).toBeUndefined();
    const errors = [
      invalid(FieldPath.of('limits').index(0).child('qps'), 0, 'must be positive'),
      notSupported(FieldPath.of('limits').index(1).child('type'), 'Pod', ['Server']),
    ];
    expect(validationError('P', errors)).toMatchObject({
      plugin: 'P',
      field: 'limits[0].qps',
      message:
        'P: limits[0].qps: Invalid value: 0: must be positive; limits[1].type: Unsupported value: "Pod": supported values: "Server"',
    });
  });
});
