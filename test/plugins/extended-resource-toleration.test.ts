// Upstream's tables (plugin/pkg/admission/extendedresourcetoleration/admission_test.go) ported:
// TestAdmit, TestHandles; plus the validating twin, other resources and subresources, extended
// resource names, and v1beta1. Every mutation goes through mutateIdempotently.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/extended-resource-toleration/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { isExtendedResourceName } from '../../lib/kube/resources.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { itHandles, itLeavesAlone, otherResources } from '../support/handles.js';
import type { PodSpec } from '../support/cases/extended-resource-toleration.js';
import {
  ADMIT_CASES,
  containerRequestingCPU,
  containerRequestingExtendedResource1,
  containerRequestingExtendedResource2,
  exists,
  extendedResource1,
} from '../support/cases/extended-resource-toleration.js';

type Spec = PodSpec;
const pod = (spec: Spec): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'name', namespace: 'foo' },
  spec: { containers: [], ...spec },
});
const tolerationsOf = (object: KubeObject | null) => (object!.spec as Spec).tolerations;

describe('TestAdmit', () => {
  it.each(ADMIT_CASES)('$description', async ({ requested, expected }) => {
    const input: ReviewInput = { object: pod(requested) };
    const result = await mutateIdempotently(plugin, input);
    expect(tolerationsOf(result.patchedObject)).toEqual(expected);
    // Only spec.tolerations is ever touched.
    for (const op of result.patch) expect(op.path).toMatch(/^\/spec\/tolerations(\/|$)/);
    if (expected === undefined || JSON.stringify(expected) === JSON.stringify(requested.tolerations))
      expect(result.patch).toEqual([]);
    // The validating twin agrees with the mutated pod.
    expect(deniedMessage(await runPhase(plugin, 'validate', { object: result.patchedObject }))).toBeUndefined();
  });

  it('appends one operation per new toleration, leaving the existing ones in place', async () => {
    const result = await runPhase(plugin, 'mutate', {
      object: pod({
        containers: [containerRequestingExtendedResource1],
        tolerations: [{ key: 'foo', operator: 'Exists' }],
      }),
    });
    expect(result.patch).toEqual([{ op: 'add', path: '/spec/tolerations/1', value: exists(extendedResource1) }]);
  });

  it('counts requests, not limits alone (the apiserver defaults requests from limits before admission)', async () => {
    const limitsOnly = { name: 'l', image: 'i', resources: { limits: { [extendedResource1]: '1' } } };
    expect((await mutateIdempotently(plugin, { object: pod({ containers: [limitsOnly] }) })).patch).toEqual([]);
  });

  it('a matching toleration with tolerationSeconds is replaced by the plain one, as AddOrUpdateTolerationInPod does', async () => {
    const result = await mutateIdempotently(plugin, {
      object: pod({
        containers: [containerRequestingExtendedResource1],
        tolerations: [{ ...exists(extendedResource1), tolerationSeconds: 5 }],
      }),
    });
    expect(tolerationsOf(result.patchedObject)).toEqual([exists(extendedResource1)]);
  });

  it('mutates on UPDATE too', async () => {
    const old = pod({ containers: [containerRequestingExtendedResource1] });
    const result = await mutateIdempotently(plugin, { operation: 'UPDATE', object: old, oldObject: old });
    expect(tolerationsOf(result.patchedObject)).toEqual([exists(extendedResource1)]);
  });
});

describe('the validating twin refuses a pod that lost a toleration after the mutation', () => {
  it('names every missing toleration with its field path', async () => {
    const result = await runPhase(plugin, 'validate', {
      object: pod({
        containers: [containerRequestingExtendedResource1],
        initContainers: [containerRequestingExtendedResource2],
        tolerations: [{ operator: 'Exists' }],
      }),
    });
    expect(deniedMessage(result)).toBe(
      '[' +
        'pods "name" is forbidden: spec.tolerations: Required value: a toleration with key "example.com/device-do", operator "Exists" and effect "NoSchedule" is needed for the requested extended resource "example.com/device-do", ' +
        'pods "name" is forbidden: spec.tolerations: Required value: a toleration with key "example.com/device-ek", operator "Exists" and effect "NoSchedule" is needed for the requested extended resource "example.com/device-ek"' +
        ']',
    );
    expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('admits a pod that requests no extended resource', async () => {
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { object: pod({ containers: [containerRequestingCPU] }) })),
    ).toBeUndefined();
  });
});

describe('extended resource names (helper.IsExtendedResourceName)', () => {
  it.each([
    ['example.com/device-ek', true],
    ['nvidia.com/gpu', true],
    ['cpu', false],
    ['memory', false],
    ['hugepages-2Mi', false],
    ['kubernetes.io/something', false],
    ['requests.example.com/gpu', false],
    ['example.com/', false],
    ['Example.com/gpu', false],
    ['example.com/a/b', false],
    [`example.com/${'x'.repeat(64)}`, false],
  ] as const)('%s: %s', (name, extended) => {
    expect(isExtendedResourceName(name)).toBe(extended);
  });
});

describe('other resources and subresources are ignored', () => {
  const requesting = pod({ containers: [containerRequestingExtendedResource1] });
  itLeavesAlone(plugin, otherResources('Pod', 'pods', 'status'), { object: requesting });

  it('non-pod object sent as a pod is a BadRequest, as upstream', async () => {
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: {} };
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, { object: service, kind: { kind: 'Pod' } });
      expect(result.wire.response!.status).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'expected *core.Pod but got *core.Service',
      });
    }
  });
});

describe('TestHandles', () => {
  const requesting = pod({ containers: [containerRequestingExtendedResource1] });
  // Upstream mutates on CREATE and UPDATE; our twin refuses only new pods without what the mutation adds.
  describe('mutate', () => itHandles(plugin, ['CREATE', 'UPDATE'], { object: requesting, phases: ['mutate'] }));
  describe('validate (our twin)', () => itHandles(plugin, ['CREATE'], { object: requesting, phases: ['validate'] }));

  it('declares CREATE and UPDATE on pods for the mutation, and a fail-open twin on CREATE only', () => {
    const rules = [
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ];
    expect(plugin.metadata.mutating).toMatchObject({
      rules,
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      timeoutSeconds: 3,
    });
    expect(plugin.metadata.validating).toMatchObject({
      rules: [{ ...rules[0], operations: ['CREATE'] }],
      failurePolicy: 'Ignore',
      timeoutSeconds: 3,
    });
  });

  it('answers a v1beta1 review in kind, with the same uid and a patch', async () => {
    const result = await mutateIdempotently(plugin, {
      apiVersion: 'admission.k8s.io/v1beta1',
      object: requesting,
      uid: 'beta-uid',
    });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: true, patchType: 'JSONPatch' });
  });
});
