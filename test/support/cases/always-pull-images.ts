// Upstream's AlwaysPullImages fixtures (plugin/pkg/admission/alwayspullimages/admission_test.go):
// TestAdmission's and TestValidate's pod with its expected error, and TestUpdatePod's pods, held
// once for the plugin's tests and the native policies' proof.
import type { KubeObject } from '../../../lib/admission/types.js';

/** Containers `<prefix>1`, `<prefix>2`... of image `image`, one per pull policy (undefined: none set). */
export const containers = (prefix: string, policies: readonly (string | undefined)[]) =>
  policies.map((p, i) => ({
    name: `${prefix}${i + 1}`,
    image: 'image',
    ...(p !== undefined && { imagePullPolicy: p }),
  }));

/**
 * TestAdmission's and TestValidate's pod: four init containers and four containers, every pull
 * policy, and an image volume per policy given (no volumes field when none are).
 */
export function upstreamPod(volumePolicies?: readonly (string | undefined)[]): KubeObject {
  const policies = [undefined, 'Never', 'IfNotPresent', 'Always'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: '123', namespace: 'test' },
    spec: {
      initContainers: containers('init', policies),
      containers: containers('ctr', policies),
      ...(volumePolicies !== undefined && {
        volumes: volumePolicies.map((p, i) => ({
          name: `volume${i + 1}`,
          image: p === undefined ? {} : { pullPolicy: p },
        })),
      }),
    },
  };
}

/** TestValidate's expectedError for upstreamPod with volumes pulling "", Never, IfNotPresent (and Always). */
export const VALIDATE_EXPECTED_ERROR = `[${[
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
  .join(', ')}]`;

/** TestUpdatePod's stored pod: one container pulling IfNotPresent. */
export const OLD_POD: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'testname', namespace: 'testnamespace' },
  spec: { containers: [{ name: 'ctr2', image: 'image', imagePullPolicy: 'IfNotPresent' }] },
};
/** The update that only annotates it (no new image: left alone). */
export const ANNOTATED_POD: KubeObject = {
  ...OLD_POD,
  metadata: { ...OLD_POD.metadata, annotations: { test: 'test' } },
};
/** The update that changes its image (a new image: judged). */
export const REIMAGED_POD: KubeObject = {
  ...ANNOTATED_POD,
  spec: { containers: [{ name: 'ctr2', image: 'image2', imagePullPolicy: 'IfNotPresent' }] },
};
