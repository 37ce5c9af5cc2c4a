// AlwaysPullImages natively (Kubernetes 1.36+: MutatingAdmissionPolicy): upstream's TestAdmission,
// TestValidate, TestOtherResources and TestUpdatePod (plugin/pkg/admission/alwayspullimages/
// admission_test.go), ported anew. Each case: the mutation leaves the pod as the webhook's patch
// does, and the validating policy answers as the twin, before and after the mutation.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/always-pull-images/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import { NativeCluster, configured, expectSameAdmission, nativeObjectsOf, refusalReason } from './support/proof.js';

const containers = (prefix: string, policies: (string | undefined)[]) =>
  policies.map((p, i) => ({
    name: `${prefix}${i + 1}`,
    image: 'image',
    ...(p !== undefined && { imagePullPolicy: p }),
  }));

/** TestAdmission's and TestValidate's pod: four init containers and four containers, every policy. */
function upstreamPod(volumePolicies: (string | undefined)[] = []): KubeObject {
  const policies = [undefined, 'Never', 'IfNotPresent', 'Always'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: '123', namespace: 'test' },
    spec: {
      initContainers: containers('init', policies),
      containers: containers('ctr', policies),
      ...(volumePolicies.length > 0 && {
        volumes: volumePolicies.map((p, i) => ({
          name: `volume${i + 1}`,
          image: p === undefined ? {} : { pullPolicy: p },
        })),
      }),
    },
  };
}

const otherPod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'testname', namespace: 'testnamespace' },
  spec: { containers: [{ name: 'ctr2', image: 'image', imagePullPolicy: 'IfNotPresent' }] },
};
const annotated: KubeObject = { ...otherPod, metadata: { ...otherPod.metadata, annotations: { test: 'test' } } };
const reimaged: KubeObject = {
  ...annotated,
  spec: { containers: [{ name: 'ctr2', image: 'image2', imagePullPolicy: 'IfNotPresent' }] },
};

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
        ...otherPod,
        spec: { ...(otherPod.spec as object), ephemeralContainers: containers('debug', ['Never']) },
      },
    },
    mutated: true,
  },
  {
    name: 'a pod already pulling Always',
    input: { object: { ...otherPod, spec: { containers: containers('c', ['Always']) } } },
    mutated: false,
  },
  // TestOtherResources (its non-pod object has no native counterpart: the apiserver decodes the pod).
  {
    name: 'non-pod resource',
    input: { kind: { kind: 'Foo' }, resource: { resource: 'foos' }, object: otherPod },
    mutated: false,
  },
  { name: 'pod subresource', input: { subResource: 'exec', object: otherPod }, mutated: false },
  // TestUpdatePod
  {
    name: 'update IfNotPresent pod annotations',
    input: { operation: 'UPDATE', object: annotated, oldObject: otherPod },
    mutated: false,
  },
  {
    name: 'update IfNotPresent pod image',
    input: { operation: 'UPDATE', object: reimaged, oldObject: otherPod },
    mutated: true,
  },
  {
    name: 'a new image volume reference counts as a new image',
    input: {
      operation: 'UPDATE',
      object: {
        ...annotated,
        spec: {
          ...(annotated.spec as object),
          volumes: [{ name: 'v', image: { reference: 'artifact:1', pullPolicy: 'Never' } }],
        },
      },
      oldObject: otherPod,
    },
    mutated: true,
  },
  { name: 'DELETE', input: { operation: 'DELETE', object: null, oldObject: otherPod }, mutated: false },
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
    expect(webhook.wire.response?.status?.message).toBe(
      `[${[
        'spec.initContainers[0].imagePullPolicy: Unsupported value: ""',
        'spec.initContainers[1].imagePullPolicy: Unsupported value: "Never"',
        'spec.initContainers[2].imagePullPolicy: Unsupported value: "IfNotPresent"',
        'spec.containers[0].imagePullPolicy: Unsupported value: ""',
        'spec.containers[1].imagePullPolicy: Unsupported value: "Never"',
        'spec.containers[2].imagePullPolicy: Unsupported value: "IfNotPresent"',
        'spec.volumes[0].image.pullPolicy: Unsupported value: ""',
        'spec.volumes[1].image.pullPolicy: Unsupported value: "Never"',
        'spec.volumes[2].image.pullPolicy: Unsupported value: "IfNotPresent"',
      ]
        .map((e) => `pods "123" is forbidden: ${e}: supported values: "Always"`)
        .join(', ')}]`,
    );
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
