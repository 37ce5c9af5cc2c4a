// TaintNodesByCondition (a new Node starts tainted not-ready) and StorageObjectInUseProtection (a
// new claim, volume or attributes class starts with its protection finalizer) as
// MutatingAdmissionPolicies with their validating twins, on CREATE only, Kubernetes 1.36+.
import type { NativeCompiler } from '../policy.js';
import { mutatingUnavailable } from '../policy.js';

const NODE_CREATES = [
  { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'], scope: 'Cluster' },
] as const;

const HAS_TAINT =
  "object.?spec.?taints.orValue([]).exists(t, t.?key.orValue('') == 'node.kubernetes.io/not-ready' && t.?effect.orValue('') == 'NoSchedule')";
const TAINT = "Object.spec.taints{key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule'}";

export const taintNodesByCondition: NativeCompiler = {
  name: 'taint-nodes-by-condition',
  compile(_config, version) {
    const unavailable = mutatingUnavailable(version);
    if (unavailable !== undefined) return { webhook: unavailable };
    return {
      policies: [
        {
          kind: 'MutatingAdmissionPolicy',
          rules: NODE_CREATES,
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: {
                expression: `${HAS_TAINT} ? [] : has(object.spec) ? (has(object.spec.taints) ? [JSONPatch{op: 'add', path: '/spec/taints/-', value: ${TAINT}}] : [JSONPatch{op: 'add', path: '/spec/taints', value: [${TAINT}]}]) : [JSONPatch{op: 'add', path: '/spec', value: Object.spec{taints: [${TAINT}]}}]`,
              },
            },
          ],
          reinvocationPolicy: 'IfNeeded',
        },
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: NODE_CREATES,
          validations: [
            {
              expression: HAS_TAINT,
              message:
                'spec.taints: Required value: a new Node must carry the taint node.kubernetes.io/not-ready:NoSchedule until the node controller sees it Ready',
            },
          ],
        },
      ],
    };
  },
};

const PROTECTION_RULES = [
  {
    operations: ['CREATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['persistentvolumeclaims'],
    scope: 'Namespaced',
  },
  { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['persistentvolumes'], scope: 'Cluster' },
  {
    operations: ['CREATE'],
    apiGroups: ['storage.k8s.io'],
    apiVersions: ['v1', 'v1beta1', 'v1alpha1'],
    resources: ['volumeattributesclasses'],
    scope: 'Cluster',
  },
] as const;

const PROTECTION = [
  {
    name: 'finalizer',
    expression:
      "{'persistentvolumeclaims': 'kubernetes.io/pvc-protection', 'persistentvolumes': 'kubernetes.io/pv-protection', 'volumeattributesclasses': 'kubernetes.io/vac-protection'}[request.resource.resource]",
  },
  {
    name: 'kind',
    expression:
      "{'persistentvolumeclaims': 'PersistentVolumeClaim', 'persistentvolumes': 'PersistentVolume', 'volumeattributesclasses': 'VolumeAttributesClass'}[request.resource.resource]",
  },
  { name: 'protected', expression: 'variables.finalizer in object.metadata.?finalizers.orValue([])' },
];

export const storageObjectInUseProtection: NativeCompiler = {
  name: 'storage-object-in-use-protection',
  compile(_config, version) {
    const unavailable = mutatingUnavailable(version);
    if (unavailable !== undefined) return { webhook: unavailable };
    return {
      policies: [
        {
          kind: 'MutatingAdmissionPolicy',
          rules: PROTECTION_RULES,
          variables: PROTECTION,
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: {
                expression:
                  "variables.protected ? [] : has(object.metadata.finalizers) ? [JSONPatch{op: 'add', path: '/metadata/finalizers/-', value: variables.finalizer}] : [JSONPatch{op: 'add', path: '/metadata/finalizers', value: [variables.finalizer]}]",
              },
            },
          ],
          reinvocationPolicy: 'IfNeeded',
        },
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: PROTECTION_RULES,
          variables: PROTECTION,
          validations: [
            {
              expression: 'variables.protected',
              messageExpression:
                "'metadata.finalizers: Required value: a new ' + variables.kind + ' must carry the \"' + variables.finalizer + '\" finalizer'",
            },
          ],
        },
      ],
    };
  },
};
