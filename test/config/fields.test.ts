// Strict reading of OpenShift configuration objects: unknown fields fail with the nearest known name.
import { describe, expect, it } from 'vitest';
import { closestName, openShiftConfigObject, rejectUnknownFields } from '../../lib/config/fields.js';
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

describe('openShiftConfigObject', () => {
  const read = (raw: unknown) => openShiftConfigObject('P', raw, 'x.openshift.io/v1', 'XConfig', ['field']);
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
