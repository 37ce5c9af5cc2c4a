// Upstream's tables (plugin/pkg/admission/antiaffinity/admission_test.go) ported:
// TestInterPodAffinityAdmission, TestHandles, TestOtherResources; plus UPDATE and v1beta1.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/limit-pod-hard-anti-affinity-topology/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { itHandles, itLeavesAlone, otherResources } from '../support/handles.js';
import { INTER_POD_AFFINITY_CASES, term } from '../support/cases/limit-pod-hard-anti-affinity-topology.js';

function podWith(affinity: unknown, metadata: KubeObject['metadata'] = { name: 'name', namespace: 'foo' }): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'c', image: 'i' }], affinity } };
}

const validate = (input: ReviewInput) => runPhase(plugin, 'validate', input);

describe('TestInterPodAffinityAdmission', () => {
  it.each(INTER_POD_AFFINITY_CASES)('$name', async ({ affinity, errorExpected }) => {
    const result = await validate({ object: podWith(affinity) });
    if (errorExpected) {
      expect(deniedMessage(result)).toBe(
        'pods "name" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey  zone  but only key kubernetes.io/hostname is allowed',
      );
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        details: { name: 'name', group: '', kind: 'pods' },
      });
    } else {
      expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
    }
  });

  it('a pod without affinity is admitted', async () => {
    expect(deniedMessage(await validate({ object: podWith(undefined) }))).toBeUndefined();
  });

  it('reports only the first offending term, as upstream returns at the first', async () => {
    const affinity = {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone-a'), term('zone-b')] },
    };
    expect(deniedMessage(await validate({ object: podWith(affinity) }))).toBe(
      'pods "name" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey zone-a but only key kubernetes.io/hostname is allowed',
    );
  });

  it('names the pod by its own name only: a generateName pod is printed without a name (apierrors.NewForbidden)', async () => {
    const affinity = {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('topology.kubernetes.io/zone')] },
    };
    const result = await validate({ object: podWith(affinity, { generateName: 'web-', namespace: 'foo' }) });
    expect(deniedMessage(result)).toBe(
      'pods is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed',
    );
  });

  it('pod affinity (not anti-affinity) may use any topology key', async () => {
    const affinity = {
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('topology.kubernetes.io/zone')] },
    };
    expect(deniedMessage(await validate({ object: podWith(affinity) }))).toBeUndefined();
  });
});

describe('TestHandles', () => {
  const bad = podWith({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone')] } });
  itHandles(plugin, ['CREATE', 'UPDATE'], { object: bad });

  it('declares exactly CREATE and UPDATE on pods, and only validates', () => {
    expect(plugin.metadata.validating!.rules).toEqual([
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ]);
    expect(plugin.metadata.validating!.failurePolicy).toBe('Fail');
    expect(plugin.metadata.mutating).toBeUndefined();
  });
});

describe('TestOtherResources', () => {
  const bad = podWith(
    { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone')] } },
    { name: 'testname', namespace: 'testnamespace' },
  );
  itLeavesAlone(plugin, otherResources('Pod', 'pods', 'eviction'), { object: bad });

  it('non-pod object', async () => {
    const result = await validate({
      object: { kind: 'Service', metadata: { name: 'testname' }, spec: {} },
      kind: { kind: 'Pod' },
    });
    expect(result.wire.response!.status).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'Resource was marked with kind Pod but was unable to be converted',
    });
  });
});

describe('v1beta1', () => {
  it('answers a v1beta1 review in kind, with the same uid and the denial', async () => {
    const bad = podWith({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone')] } });
    const result = await validate({ apiVersion: 'admission.k8s.io/v1beta1', object: bad, uid: 'beta-uid' });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: false, status: { code: 403 } });
  });
});
