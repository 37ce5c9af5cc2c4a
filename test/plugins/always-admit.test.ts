// Upstream's table (plugin/pkg/admission/admit/admission_test.go) ported: TestAdmissionNonNilAttribute,
// TestAdmissionNilAttribute (a request without any object) and TestHandles (every operation is
// subscribed and admitted).
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/always-admit/plugin.js';
import type { Operation } from '../../lib/admission/types.js';
import { runPhase } from '../support/review.js';

const attributes = { kind: { kind: 'kind', version: 'version' }, resource: { resource: 'resource', version: 'version' }, namespace: 'namespace', name: 'name', subResource: 'subresource' };

describe('TestAdmissionNonNilAttribute', () => {
  it('admits a request with upstream attributes', async () => {
    const result = await runPhase(plugin, 'validate', { ...attributes, object: { kind: 'kind', metadata: { name: 'name' } } });
    expect(result.wire.response).toMatchObject({ allowed: true });
    expect(result.patch).toEqual([]);
  });
});

describe('TestAdmissionNilAttribute', () => {
  it('admits a request that carries no object', async () => {
    expect((await runPhase(plugin, 'validate', { ...attributes, object: null })).wire.response!.allowed).toBe(true);
  });
});

describe('TestHandles', () => {
  it.each(['CREATE', 'CONNECT', 'UPDATE', 'DELETE'] as Operation[])('%s is subscribed and admitted', async (operation) => {
    expect(plugin.metadata.validating!.rules.some((r) => r.operations.includes('*') || r.operations.includes(operation))).toBe(true);
    const object = operation === 'DELETE' ? null : { kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } };
    expect((await runPhase(plugin, 'validate', { operation, object, oldObject: operation === 'UPDATE' ? object : null, name: 'p', namespace: 'ns' })).wire.response!.allowed).toBe(true);
  });
});

describe('metadata', () => {
  it('is marked deprecated, subscribes to every resource and subresource, and fails open', () => {
    expect(plugin.metadata.summary).toMatch(/^Deprecated upstream/);
    expect(plugin.metadata.validating).toMatchObject({ failurePolicy: 'Ignore', rules: [{ apiGroups: ['*'], resources: ['*', '*/*'], scope: '*' }] });
    expect(plugin.metadata.mutating).toBeUndefined();
  });
});
