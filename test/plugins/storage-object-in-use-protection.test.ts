// Upstream's table (plugin/pkg/admission/storage/storageobjectinuseprotection/admission_test.go)
// ported: TestAdmit; plus the validating twin, other resources and subresources, the operations it
// handles, and v1beta1. Every mutation goes through mutateIdempotently.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/storage-object-in-use-protection/plugin.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { itHandles } from '../support/handles.js';
import {
  ADMIT_CASES,
  PV,
  PVC,
  VAC,
  claim,
  claimWithFinalizer,
  pv,
  vac,
  withFinalizers,
} from '../support/cases/storage-object-in-use-protection.js';

describe('TestAdmit', () => {
  it.each(ADMIT_CASES)('$name', async ({ target, object, expected }) => {
    const result = await mutateIdempotently(plugin, { ...target, object });
    expect(result.patchedObject).toEqual(expected);
    if (object === expected) expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { ...target, object: result.patchedObject })),
    ).toBeUndefined();
  });

  it('appends to the finalizers already there, in one operation', async () => {
    const result = await mutateIdempotently(plugin, { ...PVC, object: withFinalizers(claim, 'example.com/keep') });
    expect(result.patch).toEqual([
      { op: 'add', path: '/metadata/finalizers/1', value: 'kubernetes.io/pvc-protection' },
    ]);
    expect(result.patchedObject!.metadata!.finalizers).toEqual(['example.com/keep', 'kubernetes.io/pvc-protection']);
  });

  it('works on the v1beta1 VolumeAttributesClass API as well', async () => {
    const beta = { kind: { ...VAC.kind, version: 'v1beta1' }, resource: { ...VAC.resource, version: 'v1beta1' } };
    const result = await mutateIdempotently(plugin, {
      ...beta,
      object: { ...vac, apiVersion: 'storage.k8s.io/v1beta1' },
    });
    expect(result.patchedObject!.metadata!.finalizers).toEqual(['kubernetes.io/vac-protection']);
  });

  it('an object of another kind than the resource says is left alone, as upstream', async () => {
    const result = await mutateIdempotently(plugin, { ...PVC, object: pv });
    expect(result.patch).toEqual([]);
  });
});

describe('the validating twin refuses a new object that lost its finalizer after the mutation', () => {
  it.each([
    {
      target: PVC,
      object: claim,
      message:
        'persistentvolumeclaims "claim" is forbidden: metadata.finalizers: Required value: a new PersistentVolumeClaim must carry the "kubernetes.io/pvc-protection" finalizer',
    },
    {
      target: PV,
      object: pv,
      message:
        'persistentvolumes "pv" is forbidden: metadata.finalizers: Required value: a new PersistentVolume must carry the "kubernetes.io/pv-protection" finalizer',
    },
    {
      target: VAC,
      object: vac,
      message:
        'volumeattributesclasses.storage.k8s.io "vac" is forbidden: metadata.finalizers: Required value: a new VolumeAttributesClass must carry the "kubernetes.io/vac-protection" finalizer',
    },
  ])('$message', async ({ target, object, message }) => {
    const result = await runPhase(plugin, 'validate', { ...target, object });
    expect(deniedMessage(result)).toBe(message);
    expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('never sees the UPDATE in which a protection controller removes the finalizer', async () => {
    const result = await runPhase(plugin, 'validate', {
      ...PVC,
      operation: 'UPDATE',
      object: claim,
      oldObject: claimWithFinalizer,
    });
    expect(result.wire.response!.allowed).toBe(true);
    for (const rule of [...plugin.metadata.validating!.rules, ...plugin.metadata.mutating!.rules])
      expect(rule.operations).toEqual(['CREATE']);
  });
});

describe('other resources and subresources are ignored', () => {
  it.each([
    { name: 'non-storage resource', kind: { kind: 'Foo' }, resource: { resource: 'foos' }, subResource: undefined },
    {
      name: 'claim status subresource',
      kind: { kind: 'PersistentVolumeClaim' },
      resource: { resource: 'persistentvolumeclaims' },
      subResource: 'status',
    },
    {
      name: 'volume status subresource',
      kind: { kind: 'PersistentVolume' },
      resource: { resource: 'persistentvolumes' },
      subResource: 'status',
    },
    {
      name: 'claims of another group',
      kind: { group: 'example.com', kind: 'PersistentVolumeClaim' },
      resource: { group: 'example.com', resource: 'persistentvolumeclaims' },
      subResource: undefined,
    },
    {
      name: 'volumeattributesclasses of the core group',
      kind: { kind: 'VolumeAttributesClass' },
      resource: { resource: 'volumeattributesclasses' },
      subResource: undefined,
    },
  ])('$name is left alone in both phases', async ({ kind, resource, subResource }) => {
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, {
        object: { ...claim, kind: kind.kind },
        kind,
        resource,
        subResource,
      });
      expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
    }
  });
});

describe('handles CREATE only', () => {
  itHandles(plugin, ['CREATE'], { object: claim, input: PVC });

  it('declares CREATE rules for claims (namespaced), volumes and attribute classes (cluster-scoped)', () => {
    const rules = [
      {
        operations: ['CREATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['persistentvolumeclaims'],
        scope: 'Namespaced',
      },
      {
        operations: ['CREATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['persistentvolumes'],
        scope: 'Cluster',
      },
      {
        operations: ['CREATE'],
        apiGroups: ['storage.k8s.io'],
        apiVersions: ['v1', 'v1beta1', 'v1alpha1'],
        resources: ['volumeattributesclasses'],
        scope: 'Cluster',
      },
    ];
    expect(plugin.metadata.mutating).toMatchObject({
      rules,
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      timeoutSeconds: 3,
    });
    expect(plugin.metadata.validating).toMatchObject({ rules, failurePolicy: 'Ignore', timeoutSeconds: 3 });
  });

  it('answers a v1beta1 review in kind, with the same uid and a patch', async () => {
    const result = await mutateIdempotently(plugin, {
      ...PV,
      apiVersion: 'admission.k8s.io/v1beta1',
      object: pv,
      uid: 'beta-uid',
    });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: true, patchType: 'JSONPatch' });
  });
});
