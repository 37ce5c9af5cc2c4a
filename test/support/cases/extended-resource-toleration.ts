// Upstream's ExtendedResourceToleration table (plugin/pkg/admission/extendedresourcetoleration/
// admission_test.go, TestAdmit), held once for the plugin's tests and the native policies' proof:
// each suite builds its pod around the spec.

export const extendedResource1 = 'example.com/device-ek';
export const extendedResource2 = 'example.com/device-do';
const container = (name: string, requests: Record<string, string>) => ({ name, image: 'i', resources: { requests } });
export const containerRequestingCPU = container('cpu', { cpu: '2' });
export const containerRequestingMemory = container('memory', { memory: '2048' });
export const containerRequestingExtendedResource1 = container('er1', { [extendedResource1]: '1' });
export const containerRequestingExtendedResource2 = container('er2', { [extendedResource2]: '2' });
/** The toleration the plugin adds for an extended resource. */
export const exists = (key: string) => ({ key, operator: 'Exists', effect: 'NoSchedule' });

export interface PodSpec {
  readonly containers?: readonly unknown[];
  readonly initContainers?: readonly unknown[];
  readonly tolerations?: readonly unknown[];
}

export interface AdmitCase {
  readonly description: string;
  readonly requested: PodSpec;
  /** The pod's tolerations after admission; none: it has no tolerations field. */
  readonly expected: readonly unknown[] | undefined;
}

export const ADMIT_CASES: readonly AdmitCase[] = [
  {
    description: 'empty pod without any extended resources, expect no change in tolerations',
    requested: {},
    expected: undefined,
  },
  {
    description: 'pod with container without any extended resources, expect no change in tolerations',
    requested: { containers: [containerRequestingCPU] },
    expected: undefined,
  },
  {
    description: 'pod with init container without any extended resources, expect no change in tolerations',
    requested: { initContainers: [containerRequestingMemory] },
    expected: undefined,
  },
  {
    description: 'pod with container with extended resource, expect toleration to be added',
    requested: { containers: [containerRequestingExtendedResource1] },
    expected: [exists(extendedResource1)],
  },
  {
    description: 'pod with init container with extended resource, expect toleration to be added',
    requested: { initContainers: [containerRequestingExtendedResource2] },
    expected: [exists(extendedResource2)],
  },
  {
    description:
      'pod with existing tolerations and container with extended resource, expect existing tolerations to be preserved and new toleration to be added',
    requested: {
      containers: [containerRequestingCPU, containerRequestingExtendedResource1],
      tolerations: [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }],
    },
    expected: [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }, exists(extendedResource1)],
  },
  {
    description: 'pod with multiple extended resources, expect multiple tolerations to be added',
    requested: {
      containers: [containerRequestingMemory, containerRequestingExtendedResource1],
      initContainers: [containerRequestingCPU, containerRequestingExtendedResource2],
    },
    // Sorted by key: device-do before device-ek.
    expected: [exists(extendedResource2), exists(extendedResource1)],
  },
  {
    description:
      'pod with container requesting extended resource and existing correct toleration, expect no change in tolerations',
    requested: {
      containers: [containerRequestingCPU, containerRequestingMemory, containerRequestingExtendedResource1],
      tolerations: [exists(extendedResource1)],
    },
    expected: [exists(extendedResource1)],
  },
  {
    description:
      'pod with container requesting extended resource and existing toleration with the same key but different effect and value, expect existing tolerations to be preserved and new toleration to be added',
    requested: {
      containers: [containerRequestingCPU, containerRequestingMemory, containerRequestingExtendedResource1],
      tolerations: [{ key: extendedResource1, operator: 'Equal', value: 'foo', effect: 'NoExecute' }],
    },
    expected: [
      { key: extendedResource1, operator: 'Equal', value: 'foo', effect: 'NoExecute' },
      exists(extendedResource1),
    ],
  },
  {
    description:
      'pod with wildcard toleration and container requesting extended resource, expect existing tolerations to be preserved and new toleration to be added',
    requested: {
      containers: [containerRequestingCPU, containerRequestingMemory, containerRequestingExtendedResource1],
      tolerations: [{ operator: 'Exists' }],
    },
    expected: [{ operator: 'Exists' }, exists(extendedResource1)],
  },
];
