// Upstream's table (plugin/pkg/admission/deny/admission_test.go) ported: TestAdmission (a request with
// upstream's attributes is refused, here with the exact message and code) and TestHandles (every
// operation is subscribed and refused). Plus the switch: an AdmissionConfiguration entry stands for
// --enable-admission-plugins; without one the plugin is not served, emitted or packaged.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/always-deny/plugin.js';
import type { Operation } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import { activeNamesOf } from '../support/plugin-set.js';
import { runPhase } from '../support/review.js';

const configure = (raw: unknown) => plugin.configure!(raw, { file: 'test', baseDir: '.' });
const enabled = configure({});

describe('TestAdmission', () => {
  it('refuses with upstream Forbidden', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        kind: { kind: 'kind', version: 'version' },
        resource: { resource: 'resource', version: 'version' },
        namespace: 'namespace',
        name: 'name',
        subResource: 'subresource',
        object: null,
      },
      enabled,
    );
    expect(result.wire.response!.allowed).toBe(false);
    expect(result.wire.response!.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'resource "name" is forbidden: admission control is denying all modifications',
      details: { name: 'name', kind: 'resource' },
    });
  });

  it('names the object when the request has no name yet (generateName)', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { object: { kind: 'Pod', metadata: { generateName: 'web-', namespace: 'ns' } } },
      enabled,
    );
    expect(result.wire.response!.status!.message).toBe(
      'pods "web-" is forbidden: admission control is denying all modifications',
    );
  });
});

describe('TestHandles', () => {
  it.each(['CREATE', 'CONNECT', 'UPDATE', 'DELETE'] as Operation[])(
    '%s is subscribed and refused',
    async (operation) => {
      expect(
        plugin.metadata.validating!.rules.some((r) => r.operations.includes('*') || r.operations.includes(operation)),
      ).toBe(true);
      const object = operation === 'DELETE' ? null : { kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } };
      const result = await runPhase(
        plugin,
        'validate',
        { operation, object, oldObject: operation === 'UPDATE' ? object : null, name: 'p', namespace: 'ns' },
        enabled,
      );
      expect(result.wire.response!.allowed).toBe(false);
    },
  );
});

describe('the AdmissionConfiguration entry is the switch', () => {
  it('is off in a file that names no plugin, and served with a bare entry or `configuration: {}`', () => {
    expect(activeNamesOf([])).not.toContain('always-deny');
    expect(activeNamesOf([{ name: 'AlwaysDeny' }])).toEqual(['always-deny']);
    expect(activeNamesOf([{ name: 'AlwaysDeny', configuration: {} }])).toEqual(['always-deny']);
    expect(plugin.metadata.validating!.rules).toEqual([
      { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: 'Namespaced' },
    ]);
  });

  it('takes no fields', () => {
    expect(configErrorOf(() => configure({ enable: true })).message).toBe(
      'AlwaysDeny: enable: unknown field "enable"; no fields are supported here',
    );
  });

  it('is marked deprecated, validating only, failing closed', () => {
    expect(plugin.metadata.summary).toMatch(/^Deprecated upstream/);
    expect(plugin.metadata.validating).toMatchObject({ failurePolicy: 'Fail' });
    expect(plugin.metadata.mutating).toBeUndefined();
  });
});
