// Upstream's table (plugin/pkg/admission/admit/admission_test.go) ported: TestAdmissionNonNilAttribute,
// TestAdmissionNilAttribute (a request without any object) and TestHandles (every operation is
// subscribed and admitted). Plus the switch: an AdmissionConfiguration entry stands for
// --enable-admission-plugins; without one the plugin is not served, emitted or packaged.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/always-admit/plugin.js';
import type { Operation } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import { ruleSends } from '../../lib/admission/webhook-rules.js';
import { activeNamesOf } from '../support/plugin-set.js';
import { requestOf, runPhase } from '../support/review.js';

const configure = (raw: unknown) => plugin.configure!(raw, { file: 'test', baseDir: '.' });
const enabled = configure({});
const attributes = {
  kind: { kind: 'kind', version: 'version' },
  resource: { resource: 'resource', version: 'version' },
  namespace: 'namespace',
  name: 'name',
  subResource: 'subresource',
};

describe('TestAdmissionNonNilAttribute', () => {
  it('admits a request with upstream attributes', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { ...attributes, object: { kind: 'kind', metadata: { name: 'name' } } },
      enabled,
    );
    expect(result.wire.response).toMatchObject({ allowed: true });
    expect(result.patch).toEqual([]);
  });
});

describe('TestAdmissionNilAttribute', () => {
  it('admits a request that carries no object', async () => {
    expect((await runPhase(plugin, 'validate', { ...attributes, object: null }, enabled)).wire.response!.allowed).toBe(
      true,
    );
  });
});

describe('TestHandles', () => {
  it.each(['CREATE', 'CONNECT', 'UPDATE', 'DELETE'] as Operation[])(
    '%s is subscribed and admitted',
    async (operation) => {
      expect(
        plugin.metadata.validating!.rules.some((r) => r.operations.includes('*') || r.operations.includes(operation)),
      ).toBe(true);
      const object = operation === 'DELETE' ? null : { kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } };
      expect(
        (
          await runPhase(
            plugin,
            'validate',
            { operation, object, oldObject: operation === 'UPDATE' ? object : null, name: 'p', namespace: 'ns' },
            enabled,
          )
        ).wire.response!.allowed,
      ).toBe(true);
    },
  );
});

describe('the AdmissionConfiguration entry is the switch', () => {
  it('is off in a file that names no plugin, and served with a bare entry or `configuration: {}`', () => {
    expect(activeNamesOf([])).not.toContain('always-admit');
    expect(activeNamesOf([{ name: 'AlwaysAdmit' }])).toEqual(['always-admit']);
    expect(activeNamesOf([{ name: 'AlwaysAdmit', configuration: {} }])).toEqual(['always-admit']);
    expect(plugin.metadata.validating!.rules).toEqual([
      { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' },
    ]);
  });

  it('`*/*` alone sends the apiserver every resource and every subresource', () => {
    const [rule] = plugin.metadata.validating!.rules;
    for (const input of [{}, { subResource: 'status' }, { subResource: 'exec', operation: 'CONNECT' as const }]) {
      expect(ruleSends(rule, requestOf(input))).toBe(true);
    }
    const namespace = requestOf({ kind: { kind: 'Namespace' }, resource: { resource: 'namespaces' }, namespace: '' });
    expect(ruleSends(rule, namespace)).toBe(true);
  });

  it('takes no fields', () => {
    expect(configErrorOf(() => configure({ enabled: true })).message).toBe(
      'AlwaysAdmit: enabled: unknown field "enabled"; no fields are supported here',
    );
    expect(configErrorOf(() => configure('yes')).message).toBe(
      'AlwaysAdmit: configuration: must be {} (the plugin takes no configuration), got "yes"',
    );
  });

  it('is marked deprecated, validating only, failing open', () => {
    expect(plugin.metadata.summary).toMatch(/^Deprecated upstream/);
    expect(plugin.metadata.validating).toMatchObject({ failurePolicy: 'Ignore' });
    expect(plugin.metadata.mutating).toBeUndefined();
  });
});
