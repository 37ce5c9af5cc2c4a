// AlwaysPullImages natively (Kubernetes 1.36+: MutatingAdmissionPolicy): upstream's TestAdmission,
// TestValidate, TestOtherResources and TestUpdatePod (plugin/pkg/admission/alwayspullimages/
// admission_test.go), as test/support/cases holds them. Each case: the mutation leaves the pod as
// the webhook's patch does, and the validating policy answers as the twin, before and after the
// mutation.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/always-pull-images/plugin.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import {
  ANNOTATED_POD,
  OLD_POD,
  REIMAGED_POD,
  VALIDATE_EXPECTED_ERROR,
  containers,
  upstreamPod,
} from '../support/cases/always-pull-images.js';
import { NativeCluster, configured, expectSameAdmission, nativeObjectsOf, refusalReason } from './support/proof.js';

const cases: { name: string; input: ReviewInput; mutated: boolean }[] = [
  { name: 'TestAdmission: every container set to Always', input: { object: upstreamPod() }, mutated: true },
  {
    name: 'TestAdmission with image volumes',
    input: { object: upstreamPod([undefined, 'Never', 'IfNotPresent', 'Always']) },
    mutated: true,
  },
  {
    name: 'ephemeral containers too',
    input: {
      object: {
        ...OLD_POD,
        spec: { ...(OLD_POD.spec as object), ephemeralContainers: containers('debug', ['Never']) },
      },
    },
    mutated: true,
  },
  {
    name: 'a pod already pulling Always',
    input: { object: { ...OLD_POD, spec: { containers: containers('c', ['Always']) } } },
    mutated: false,
  },
  // TestOtherResources (its non-pod object has no native counterpart: the apiserver decodes the pod).
  {
    name: 'non-pod resource',
    input: { kind: { kind: 'Foo' }, resource: { resource: 'foos' }, object: OLD_POD },
    mutated: false,
  },
  { name: 'pod subresource', input: { subResource: 'exec', object: OLD_POD }, mutated: false },
  // TestUpdatePod
  {
    name: 'update IfNotPresent pod annotations',
    input: { operation: 'UPDATE', object: ANNOTATED_POD, oldObject: OLD_POD },
    mutated: false,
  },
  {
    name: 'update IfNotPresent pod image',
    input: { operation: 'UPDATE', object: REIMAGED_POD, oldObject: OLD_POD },
    mutated: true,
  },
  {
    name: 'a new image volume reference counts as a new image',
    input: {
      operation: 'UPDATE',
      object: {
        ...ANNOTATED_POD,
        spec: {
          ...(ANNOTATED_POD.spec as object),
          volumes: [{ name: 'v', image: { reference: 'artifact:1', pullPolicy: 'Never' } }],
        },
      },
      oldObject: OLD_POD,
    },
    mutated: true,
  },
  { name: 'DELETE', input: { operation: 'DELETE', object: null, oldObject: OLD_POD }, mutated: false },
];

describe('on Kubernetes 1.36', () => {
  const cluster = new NativeCluster(nativeObjectsOf(configured(plugin), '1.36'), '1.36');

  it.each(cases)('$name', async ({ input, mutated }) => {
    const { webhook } = await expectSameAdmission(plugin, undefined, cluster, input);
    expect(webhook.patch.length > 0).toBe(mutated);
  });

  it("TestValidate: upstream's expected errors, listed once after the policy's prefix", async () => {
    const input = { object: upstreamPod([undefined, 'Never', 'IfNotPresent']) };
    const webhook = await runPhase(plugin, 'validate', input);
    expect(webhook.wire.response?.status?.message).toBe(VALIDATE_EXPECTED_ERROR);
    const native = await cluster.validate(input);
    expect(refusalReason(native)).toMatch(
      /^ValidatingAdmissionPolicy '.*' denied request: \[spec\.initContainers\[0\]\.imagePullPolicy: /,
    );
  });
});

describe.each(['1.30', '1.32', '1.34', '1.35'] as const)('on Kubernetes %s', (version) => {
  it('stays a webhook, saying why', () => {
    const plan = planPlugin(configured(plugin), version);
    expect(plan.objects).toBeUndefined();
    expect(plan.line).toMatch(/^webhook: AlwaysPullImages \(always-pull-images\): it mutates, and .*GA in 1\.36/);
  });
});
