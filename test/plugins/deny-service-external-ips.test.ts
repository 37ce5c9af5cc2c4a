// Upstream's tables (plugin/pkg/admission/network/denyserviceexternalips/admission_test.go) ported:
// TestAdmission; plus other resources and subresources, the operations it handles, a non-Service
// object and v1beta1.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/deny-service-external-ips/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { itHandles, itLeavesAlone, otherResources } from '../support/handles.js';
import { ADMISSION_CASES } from '../support/cases/deny-service-external-ips.js';

const SERVICES = { kind: { kind: 'Service' }, resource: { resource: 'services' } };

function makeSvc(...externalIPs: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'test-ns', name: 'test-svc' },
    spec: { ...(externalIPs.length ? { externalIPs } : {}) },
  };
}

const validate = (input: ReviewInput) => runPhase(plugin, 'validate', { ...SERVICES, ...input });

describe('TestAdmission', () => {
  it.each(ADMISSION_CASES)('$name', async ({ newIPs, oldIPs, fail }) => {
    const result = await validate({
      operation: oldIPs ? 'UPDATE' : 'CREATE',
      object: makeSvc(...newIPs),
      oldObject: oldIPs ? makeSvc(...oldIPs) : null,
    });
    if (fail) {
      expect(deniedMessage(result)).toBe(
        'services "test-svc" is forbidden: Use of external IPs is denied by admission control',
      );
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        status: 'Failure',
        details: { name: 'test-svc', kind: 'services', group: '' },
      });
    } else {
      expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
    }
  });

  it('names a Service created with generateName by its prefix, as admission.NewForbidden does', async () => {
    const svc: KubeObject = {
      kind: 'Service',
      metadata: { generateName: 'web-', namespace: 'ns' },
      spec: { externalIPs: ['10.0.0.1'] },
    };
    expect(deniedMessage(await validate({ object: svc }))).toBe(
      'services "web-" is forbidden: Use of external IPs is denied by admission control',
    );
  });

  it('an explicitly empty externalIPs list is no external IP', async () => {
    const svc: KubeObject = { ...makeSvc(), spec: { externalIPs: [] } };
    expect(deniedMessage(await validate({ object: svc }))).toBeUndefined();
  });
});

describe('other resources and subresources are ignored', () => {
  itLeavesAlone(plugin, otherResources('Service', 'services', 'status'), { object: makeSvc('1.1.1.1') });

  it('a non-Service object sent as a Service is an InternalError, as upstream', async () => {
    const pod: KubeObject = { kind: 'Pod', metadata: { name: 'p' }, spec: {} };
    const result = await validate({ object: pod, kind: { kind: 'Service' } });
    expect(result.wire.response!.status).toMatchObject({
      code: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: Expected Service resource, got: /v1, Kind=Service',
    });
  });

  it('a non-Service old object is an InternalError too', async () => {
    const result = await validate({
      operation: 'UPDATE',
      object: makeSvc(),
      oldObject: { kind: 'Pod', metadata: { name: 'test-svc' } },
    });
    expect(result.wire.response!.status).toMatchObject({ code: 500, reason: 'InternalError' });
  });
});

describe('handles CREATE and UPDATE only', () => {
  it('declares exactly those operations on services, and only validates', () => {
    expect(plugin.metadata.validating!.rules).toEqual([
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['services'],
        scope: 'Namespaced',
      },
    ]);
    expect(plugin.metadata.validating!.failurePolicy).toBe('Fail');
    expect(plugin.metadata.mutating).toBeUndefined();
    expect(plugin.admit).toBeUndefined();
  });

  itHandles(plugin, ['CREATE', 'UPDATE'], { object: makeSvc('1.1.1.1'), oldObject: makeSvc(), input: SERVICES });

  it('answers a v1beta1 review in kind, with the same uid and the denial', async () => {
    const result = await validate({
      apiVersion: 'admission.k8s.io/v1beta1',
      object: makeSvc('1.1.1.1'),
      uid: 'beta-uid',
    });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: false, status: { code: 403 } });
  });
});
