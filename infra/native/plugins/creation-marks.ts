// TaintNodesByCondition (a new Node starts tainted not-ready) and StorageObjectInUseProtection (a
// new claim, volume or attributes class starts with its protection finalizer) as
// MutatingAdmissionPolicies with their validating twins, on CREATE only, Kubernetes 1.36+.
import storageProtection, { PROTECTED } from '../../../functions/storage-object-in-use-protection/plugin.js';
import taintNodes, { NOT_READY_TAINT } from '../../../functions/taint-nodes-by-condition/plugin.js';
import { mutatingUnavailable, requiring, webhookRules } from '../policy.js';

const { key, effect } = NOT_READY_TAINT;
const HAS_TAINT = `object.?spec.?taints.orValue([]).exists(t, t.?key.orValue('') == '${key}' && t.?effect.orValue('') == '${effect}')`;
const TAINT = `Object.spec.taints{key: '${key}', effect: '${effect}'}`;

export const taintNodesByCondition = requiring('taint-nodes-by-condition', mutatingUnavailable, () => ({
  policies: [
    {
      kind: 'MutatingAdmissionPolicy',
      rules: webhookRules(taintNodes, 'mutating'),
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            // The taint is appended on its own: a list holding an Object value makes a v1.36
            // apiserver panic converting the patch (the request fails with its connection reset).
            expression: `${HAS_TAINT} ? [] : (has(object.spec) ? [] : [JSONPatch{op: 'add', path: '/spec', value: Object.spec{}}]) + (has(object.spec) && has(object.spec.taints) ? [] : [JSONPatch{op: 'add', path: '/spec/taints', value: []}]) + [JSONPatch{op: 'add', path: '/spec/taints/-', value: ${TAINT}}]`,
          },
        },
      ],
      reinvocationPolicy: 'IfNeeded',
    },
    {
      kind: 'ValidatingAdmissionPolicy',
      rules: webhookRules(taintNodes, 'validating'),
      validations: [
        {
          expression: HAS_TAINT,
          message: `spec.taints: Required value: a new Node must carry the taint ${key}:${effect} until the node controller sees it Ready`,
        },
      ],
    },
  ],
}));

/** A CEL map from each protected resource to its `field`, read for the request's resource. */
const perResource = (field: 'finalizer' | 'kind') =>
  `{${PROTECTED.map((p) => `'${p.resource}': '${p[field]}'`).join(', ')}}[request.resource.resource]`;

const PROTECTION = [
  { name: 'finalizer', expression: perResource('finalizer') },
  { name: 'kind', expression: perResource('kind') },
  { name: 'protected', expression: 'variables.finalizer in object.metadata.?finalizers.orValue([])' },
];

export const storageObjectInUseProtection = requiring('storage-object-in-use-protection', mutatingUnavailable, () => ({
  policies: [
    {
      kind: 'MutatingAdmissionPolicy',
      rules: webhookRules(storageProtection, 'mutating'),
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
      rules: webhookRules(storageProtection, 'validating'),
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
}));
