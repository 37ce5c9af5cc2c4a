// Upstream's table (plugin/pkg/admission/admit/admission_test.go) ported: TestAdmissionNonNilAttribute,
// TestAdmissionNilAttribute (a request without any object) and TestHandles (every operation is
// subscribed and admitted). Plus the switch: the AdmissionConfiguration entry stands for
// --enable-admission-plugins, and without it the webhook subscribes to nothing.
import { describe, expect, it } from 'vitest';
import plugin, { type AlwaysAdmitConfig } from '../../functions/always-admit/plugin.js';
import type { Operation } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import { ruleSends } from '../../lib/admission/webhook-rules.js';
import { requestOf, runPhase } from '../support/review.js';

const configure = (raw: unknown) => plugin.configure!(raw, { file: 'test', baseDir: '.' }) as AlwaysAdmitConfig;
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
        plugin.validatingRulesFor!(enabled).some((r) => r.operations.includes('*') || r.operations.includes(operation)),
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
  it('with `configuration: {}`: every resource and subresource, both scopes; without: nothing', () => {
    expect(plugin.validatingRulesFor!(enabled)).toEqual([
      { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' },
    ]);
    expect(configure(undefined)).toEqual({ enabled: false });
    expect(plugin.validatingRulesFor!(configure(undefined))).toEqual([]);
  });

  it('`*/*` alone sends the apiserver every resource and every subresource', () => {
    const [rule] = plugin.validatingRulesFor!(enabled);
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
