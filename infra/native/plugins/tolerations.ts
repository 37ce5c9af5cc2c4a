// DefaultTolerationSeconds and ExtendedResourceToleration as MutatingAdmissionPolicies (JSON
// patches of spec.tolerations) with their validating twins on new pods,
// Kubernetes 1.36+. Tolerations are an atomic list, so no apply configuration could add to them;
// the Object types a patch value needs exist only in mutations, so variables hold plain data.
import type { DefaultTolerationSecondsConfig } from '../../../functions/default-toleration-seconds/plugin.js';
import defaultTolerations from '../../../functions/default-toleration-seconds/plugin.js';
import extendedTolerations from '../../../functions/extended-resource-toleration/plugin.js';
import { listed } from '../cel.js';
import { mutatingUnavailable, requiring, webhookRules } from '../policy.js';

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** Upstream's test: a toleration with this key or none, for NoExecute or every effect. */
const toleratesNoExecute = (key: string) =>
  `variables.tolerations.exists(t, (t.?key.orValue('') == '${key}' || t.?key.orValue('') == '') && (t.?effect.orValue('') == 'NoExecute' || t.?effect.orValue('') == ''))`;

export const defaultTolerationSeconds = requiring<DefaultTolerationSecondsConfig>(
  'default-toleration-seconds',
  mutatingUnavailable,
  (config) => {
    const toleration = (key: string, seconds: number) =>
      `Object.spec.tolerations{key: '${key}', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: ${seconds}}`;
    const tolerations = { name: 'tolerations', expression: 'object.spec.?tolerations.orValue([])' };
    return {
      policies: [
        {
          kind: 'MutatingAdmissionPolicy',
          rules: webhookRules(defaultTolerations, 'mutating'),
          variables: [
            tolerations,
            { name: 'notReady', expression: `!${toleratesNoExecute(NOT_READY)}` },
            { name: 'unreachable', expression: `!${toleratesNoExecute(UNREACHABLE)}` },
          ],
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: {
                // Each appended on its own (an empty list added first where the pod has none): a
                // list holding an Object value makes a v1.36 apiserver panic converting the patch.
                expression: `!variables.notReady && !variables.unreachable ? [] : (has(object.spec.tolerations) ? [] : [JSONPatch{op: 'add', path: '/spec/tolerations', value: []}]) + (variables.notReady ? [JSONPatch{op: 'add', path: '/spec/tolerations/-', value: ${toleration(NOT_READY, config.defaultNotReadyTolerationSeconds)}}] : []) + (variables.unreachable ? [JSONPatch{op: 'add', path: '/spec/tolerations/-', value: ${toleration(UNREACHABLE, config.defaultUnreachableTolerationSeconds)}}] : [])`,
              },
            },
          ],
          reinvocationPolicy: 'IfNeeded',
        },
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: webhookRules(defaultTolerations, 'validating'),
          variables: [
            tolerations,
            {
              name: 'missing',
              expression: `[${[NOT_READY, UNREACHABLE]
                .map(
                  (key) =>
                    `${toleratesNoExecute(key)} ? '' : 'spec.tolerations: Required value: a toleration for the taint ${key}:NoExecute is needed (DefaultTolerationSeconds adds one with tolerationSeconds)'`,
                )
                .join(', ')}].filter(e, e != '')`,
            },
          ],
          validations: [{ expression: 'size(variables.missing) == 0', messageExpression: listed('variables.missing') }],
        },
      ],
      differences: ["both missing tolerations are listed once after the apiserver's prefix, `[e1, e2]`"],
    };
  },
);

/** helper.IsExtendedResourceName on `n`: not native, not `requests.`, a qualified name once prefixed with it. */
const EXTENDED = `n.contains('/') && !n.contains('kubernetes.io/') && !n.startsWith('requests.') && ('requests.' + n).matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$') && size('requests.' + n.substring(0, n.indexOf('/'))) <= 253 && size(n.substring(n.indexOf('/') + 1)) <= 63`;

/** Toleration.MatchToleration of `t` with the one for resource `r` (key r, Exists, NoSchedule, no value). */
const matches = (t: string, r: string) =>
  `(${t}.?key.orValue('') == ${r} && ${t}.?effect.orValue('') == 'NoSchedule' && ${t}.?operator.orValue('') == 'Exists' && ${t}.?value.orValue('') == '')`;

export const extendedResourceToleration = requiring('extended-resource-toleration', mutatingUnavailable, () => {
  const common = [
    {
      // Requested by regular and init containers (ephemeral ones request nothing), sorted.
      name: 'resources',
      expression: `(object.spec.?containers.orValue([]) + object.spec.?initContainers.orValue([])).map(c, c.?resources.?requests.orValue({}).map(n, n).filter(n, ${EXTENDED})).flatten().distinct().sort()`,
    },
    { name: 'tolerations', expression: 'object.spec.?tolerations.orValue([])' },
  ];
  return {
    policies: [
      {
        kind: 'MutatingAdmissionPolicy',
        rules: webhookRules(extendedTolerations, 'mutating'),
        variables: [
          ...common,
          {
            // helper.AddOrUpdateTolerationInPod: a match that sets tolerationSeconds is replaced.
            name: 'stale',
            expression: `variables.tolerations.exists(t, t.?tolerationSeconds.orValue(null) != null && variables.resources.exists(r, ${matches('t', 'r')}))`,
          },
          {
            name: 'missing',
            expression: `variables.resources.filter(r, !variables.tolerations.exists(t, ${matches('t', 'r')}))`,
          },
          { name: 'changed', expression: 'variables.stale || size(variables.missing) > 0' },
        ],
        mutations: [
          {
            patchType: 'JSONPatch',
            jsonPatch: {
              // A stale match replaced in place, the missing ones appended (an empty list added
              // first where the pod has none), each Object value in a patch of its own: a list
              // holding one makes a v1.36 apiserver panic converting the patch.
              expression: `!variables.changed ? [] : (has(object.spec.tolerations) ? [] : [JSONPatch{op: 'add', path: '/spec/tolerations', value: []}]) + variables.tolerations.transformList(i, t, t.?tolerationSeconds.orValue(null) != null && variables.resources.exists(r, ${matches('t', 'r')}), JSONPatch{op: 'replace', path: '/spec/tolerations/' + string(i), value: Object.spec.tolerations{key: t.key, operator: 'Exists', effect: 'NoSchedule'}}) + variables.missing.map(r, JSONPatch{op: 'add', path: '/spec/tolerations/-', value: Object.spec.tolerations{key: r, operator: 'Exists', effect: 'NoSchedule'}})`,
            },
          },
        ],
        reinvocationPolicy: 'IfNeeded',
      },
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(extendedTolerations, 'validating'),
        variables: [
          ...common,
          {
            name: 'missing',
            expression: `variables.resources.filter(r, !variables.tolerations.exists(t, ${matches('t', 'r')})).map(r, 'spec.tolerations: Required value: a toleration with key "' + r + '", operator "Exists" and effect "NoSchedule" is needed for the requested extended resource "' + r + '"')`,
          },
        ],
        validations: [{ expression: 'size(variables.missing) == 0', messageExpression: listed('variables.missing') }],
      },
    ],
    differences: ["several missing tolerations are listed once after the apiserver's prefix, `[e1, e2]`"],
  };
});
