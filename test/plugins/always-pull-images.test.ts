// Upstream's tables (plugin/pkg/admission/alwayspullimages/admission_test.go) ported: TestAdmission,
// TestValidate, TestOtherResources, TestUpdatePod; plus the operations it handles and v1beta1.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/always-pull-images/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { itHandles, itLeavesAlone, otherResources } from '../support/handles.js';
import {
  ANNOTATED_POD,
  OLD_POD,
  REIMAGED_POD,
  VALIDATE_EXPECTED_ERROR,
  upstreamPod,
} from '../support/cases/always-pull-images.js';

type Spec = {
  initContainers: { imagePullPolicy?: string }[];
  containers: { imagePullPolicy?: string }[];
  ephemeralContainers?: { imagePullPolicy?: string }[];
  volumes: { image: { pullPolicy?: string } }[];
};
const specOf = (o: KubeObject | null) => o!.spec as Spec;

describe('TestAdmission: every container and image volume of a new pod is set to Always', () => {
  it('mutates init containers, containers and image volumes, and the patch applies', async () => {
    const result = await mutateIdempotently(plugin, { object: upstreamPod(['Never', 'IfNotPresent', 'Always']) });
    const spec = specOf(result.patchedObject);
    expect(spec.initContainers.map((c) => c.imagePullPolicy)).toEqual(['Always', 'Always', 'Always', 'Always']);
    expect(spec.containers.map((c) => c.imagePullPolicy)).toEqual(['Always', 'Always', 'Always', 'Always']);
    expect(spec.volumes.map((v) => v.image.pullPolicy)).toEqual(['Always', 'Always', 'Always']);
  });

  it('touches only what must change: one operation per container or volume not already Always', async () => {
    const result = await runPhase(plugin, 'mutate', { object: upstreamPod(['Never', 'IfNotPresent', 'Always']) });
    const paths = result.patch.map((op) => op.path).sort();
    expect(paths).toEqual(
      [
        '/spec/containers/0/imagePullPolicy',
        '/spec/containers/1/imagePullPolicy',
        '/spec/containers/2/imagePullPolicy',
        '/spec/initContainers/0/imagePullPolicy',
        '/spec/initContainers/1/imagePullPolicy',
        '/spec/initContainers/2/imagePullPolicy',
        '/spec/volumes/0/image/pullPolicy',
        '/spec/volumes/1/image/pullPolicy',
      ].sort(),
    );
  });

  it('includes ephemeral containers, as pods.VisitContainersWithPath does', async () => {
    const pod = upstreamPod([]);
    (pod.spec as Spec).ephemeralContainers = [{ imagePullPolicy: 'Never' }];
    const result = await mutateIdempotently(plugin, { object: pod });
    expect(specOf(result.patchedObject).ephemeralContainers![0].imagePullPolicy).toBe('Always');
  });

  it('answers a pod that already pulls Always with no patch at all', async () => {
    const pod: KubeObject = {
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'i', imagePullPolicy: 'Always' }] },
    };
    const result = await runPhase(plugin, 'mutate', { object: pod });
    expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
  });
});

describe('TestValidate: every violation is reported with its field path, as upstream prints it', () => {
  it('matches upstream expectedError exactly', async () => {
    const result = await runPhase(plugin, 'validate', { object: upstreamPod(['', 'Never', 'IfNotPresent', 'Always']) });
    expect(deniedMessage(result)).toBe(VALIDATE_EXPECTED_ERROR);
    expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden', status: 'Failure' });
  });

  it('prints a single violation without brackets, and names a generateName pod by its prefix', async () => {
    const pod: KubeObject = {
      kind: 'Pod',
      metadata: { generateName: 'web-' },
      spec: { containers: [{ name: 'c', image: 'i', imagePullPolicy: 'Never' }] },
    };
    const result = await runPhase(plugin, 'validate', { object: pod, namespace: 'ns' });
    expect(deniedMessage(result)).toBe(
      'pods "web-" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"',
    );
  });

  it('admits the mutated pod: the validating twin agrees with the mutation', async () => {
    const mutated = await runPhase(plugin, 'mutate', { object: upstreamPod(['Never']) });
    const result = await runPhase(plugin, 'validate', { object: mutated.patchedObject });
    expect(deniedMessage(result)).toBeUndefined();
  });
});

describe('TestOtherResources: other resources, subresources and non-pods', () => {
  const pod: KubeObject = {
    kind: 'Pod',
    metadata: { name: 'testname', namespace: 'testnamespace' },
    spec: { containers: [{ name: 'ctr2', image: 'image', imagePullPolicy: 'Never' }] },
  };
  itLeavesAlone(plugin, otherResources('Pod', 'pods', 'exec'), { object: pod });

  it('non-pod object sent as a pod is a BadRequest, as upstream', async () => {
    const service: KubeObject = { kind: 'Service', metadata: { name: 'testname' }, spec: {} };
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, {
        object: service,
        kind: { kind: 'Pod' },
        resource: { resource: 'pods' },
      });
      expect(result.wire.response!.status).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'Resource was marked with kind Pod but was unable to be converted',
      });
    }
  });
});

describe('TestUpdatePod: an update that brings no new image is left alone', () => {
  it('update IfNotPresent pod annotations: ignored by both phases', async () => {
    expect(
      (await runPhase(plugin, 'mutate', { operation: 'UPDATE', object: ANNOTATED_POD, oldObject: OLD_POD })).patch,
    ).toEqual([]);
    expect(
      deniedMessage(
        await runPhase(plugin, 'validate', { operation: 'UPDATE', object: ANNOTATED_POD, oldObject: OLD_POD }),
      ),
    ).toBeUndefined();
  });

  it('update IfNotPresent pod image: mutated, and the validating twin refuses the unmutated form', async () => {
    const mutated = await mutateIdempotently(plugin, { operation: 'UPDATE', object: REIMAGED_POD, oldObject: OLD_POD });
    expect(mutated.patch).toEqual([{ op: 'replace', path: '/spec/containers/0/imagePullPolicy', value: 'Always' }]);
    expect(
      deniedMessage(
        await runPhase(plugin, 'validate', { operation: 'UPDATE', object: REIMAGED_POD, oldObject: OLD_POD }),
      ),
    ).toContain('spec.containers[0].imagePullPolicy');
  });

  it('a new image volume reference counts as a new image', async () => {
    const withVolume: KubeObject = {
      ...ANNOTATED_POD,
      spec: {
        ...(ANNOTATED_POD.spec as object),
        volumes: [{ name: 'v', image: { reference: 'artifact:1', pullPolicy: 'Never' } }],
      },
    };
    const result = await runPhase(plugin, 'mutate', { operation: 'UPDATE', object: withVolume, oldObject: OLD_POD });
    expect(result.patch.map((op) => op.path).sort()).toEqual([
      '/spec/containers/0/imagePullPolicy',
      '/spec/volumes/0/image/pullPolicy',
    ]);
  });
});

describe('handles CREATE and UPDATE only', () => {
  const pod: KubeObject = {
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'i', imagePullPolicy: 'Never' }] },
  };
  // The stored pod runs another image: an UPDATE that brings no new image is not handled.
  const before: KubeObject = {
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'old', imagePullPolicy: 'Never' }] },
  };
  itHandles(plugin, ['CREATE', 'UPDATE'], { object: pod, oldObject: before });

  it('answers a v1beta1 review in kind, with the same uid and a patch', async () => {
    const result = await runPhase(plugin, 'mutate', {
      apiVersion: 'admission.k8s.io/v1beta1',
      object: pod,
      uid: 'beta-uid',
    });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: true, patchType: 'JSONPatch' });
  });
});

describe('a null container, as Go decodes it (the zero-value Container)', () => {
  // Found by the fuzzer: `containers: [null]` crashed the handler (HTTP 500) instead of being read
  // as an empty container, which is what the apiserver's decoding makes of it.
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [null as never] },
  };

  it('mutate sets Always on it, and the patch applies', async () => {
    const result = await runPhase(plugin, 'mutate', { object: pod });
    expect(result.wire.response!.allowed).toBe(true);
    expect(
      (result.patchedObject!.spec as { containers: { imagePullPolicy?: string }[] }).containers[0].imagePullPolicy,
    ).toBe('Always');
  });

  it('validate refuses it with the field path', async () => {
    expect(deniedMessage(await runPhase(plugin, 'validate', { object: pod }))).toContain(
      'spec.containers[0].imagePullPolicy: Unsupported value: ""',
    );
  });
});
