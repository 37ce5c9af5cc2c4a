// LimitPodHardAntiAffinityTopology natively: upstream's TestInterPodAffinityAdmission, TestHandles
// and TestOtherResources (plugin/pkg/admission/antiaffinity/admission_test.go), as
// test/support/cases holds them, answered by the plugin and by its compiled policy on every version
// from 1.30.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/limit-pod-hard-anti-affinity-topology/plugin.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import { INTER_POD_AFFINITY_CASES, term } from '../support/cases/limit-pod-hard-anti-affinity-topology.js';
import { titled } from '../support/titled.js';
import { NativeCluster, configured, expectSameValidationOf, nativeObjectsOf } from './support/proof.js';

function pod(affinity: unknown, name = 'name'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'foo' }, spec: { affinity } };
}

// Beyond upstream's TestInterPodAffinityAdmission: [what, affinity, refused]
const MORE: [string, unknown, boolean][] = [
  // A term without topologyKey, and the first of two offenders is named.
  [
    'a required term without topologyKey',
    { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{}] } },
    true,
  ],
  [
    'two offending terms',
    { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone'), term('region')] } },
    true,
  ],
];

const zonal = pod({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone')] } });
const HANDLES: [Operation, boolean][] = [
  ['CREATE', true],
  ['UPDATE', true],
  ['DELETE', false],
  ['CONNECT', false],
];

const cases: { name: string; input: ReviewInput; refused: boolean }[] = [
  ...INTER_POD_AFFINITY_CASES.map(({ name, affinity, errorExpected }) => ({
    name,
    refused: errorExpected,
    input: { object: pod(affinity) },
  })),
  ...MORE.map(([name, affinity, refused]) => ({ name, refused, input: { object: pod(affinity) } })),
  ...HANDLES.map(([operation, refused]) => ({
    name: `TestHandles ${operation}`,
    refused,
    input: {
      operation,
      object: operation === 'DELETE' ? null : zonal,
      oldObject: operation === 'CREATE' ? null : zonal,
    },
  })),
  // TestOtherResources (its non-pod object, which the apiserver never sends as a pod, has no native counterpart).
  {
    name: 'non-pod resource',
    refused: false,
    input: { kind: { kind: 'Foo' }, resource: { resource: 'foos' }, object: zonal },
  },
  { name: 'pod subresource', refused: false, input: { subResource: 'eviction', object: zonal } },
];

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  const cluster = new NativeCluster(nativeObjectsOf(configured(plugin), version), version);

  it.each(titled(cases, (c) => c.name))('%s', async (_title, { input, refused }) => {
    const webhook = await expectSameValidationOf(plugin, undefined, cluster, input);
    expect(webhook.wire.response?.allowed).toBe(!refused);
  });

  it('names a generateName-only pod by its prefix, where upstream prints none (a listed difference)', async () => {
    const generated = { ...zonal, metadata: { generateName: 'web-', namespace: 'foo' } };
    const native = await cluster.validate({ object: generated });
    const webhook = await runPhase(plugin, 'validate', { object: generated });
    expect(webhook.wire.response?.status?.message).toMatch(/^pods is forbidden: /);
    expect(native.wire.response?.status?.message).toMatch(/^pods "web-" is forbidden: ValidatingAdmissionPolicy /);
  });
});
