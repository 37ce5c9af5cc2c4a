// AlwaysPullImages as a MutatingAdmissionPolicy (every container and image volume set to Always)
// and a ValidatingAdmissionPolicy (its twin: the final pod must pull Always), Kubernetes 1.36+.
// Both skip an update that brings no new image, as upstream's shouldIgnore does.
import plugin from '../../../functions/always-pull-images/plugin.js';
import { listed } from '../cel.js';
import { mutatingUnavailable, requiring, webhookRules } from '../policy.js';

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/** Every image the pod `of` references: containers of all kinds, then image volumes. */
const images = (of: string) =>
  [
    ...CONTAINER_LISTS.map((list) => `${of}.spec.?${list}.orValue([]).map(c, c.?image.orValue(''))`),
    `${of}.spec.?volumes.orValue([]).filter(v, has(v.image)).map(v, v.image.?reference.orValue(''))`,
  ].join(' + ');

const NEW_IMAGES = {
  name: 'new-images',
  expression: `request.operation != 'UPDATE' || oldObject == null || !(${images('object')}).all(i, i in (${images('oldObject')}))`,
};

/** Every field that is not Always, as upstream's field error (pods.VisitContainersWithPath order). */
const VIOLATIONS = [
  ...CONTAINER_LISTS.map(
    (list) =>
      `object.spec.?${list}.orValue([]).transformList(i, c, c.?imagePullPolicy.orValue('') != 'Always', 'spec.${list}[' + string(i) + '].imagePullPolicy: Unsupported value: "' + c.?imagePullPolicy.orValue('') + '": supported values: "Always"')`,
  ),
  `object.spec.?volumes.orValue([]).transformList(i, v, has(v.image) && v.image.?pullPolicy.orValue('') != 'Always', 'spec.volumes[' + string(i) + '].image.pullPolicy: Unsupported value: "' + v.image.?pullPolicy.orValue('') + '": supported values: "Always"')`,
].join(' + ');

const PATCHES = [
  ...CONTAINER_LISTS.map(
    (list) =>
      `object.spec.?${list}.orValue([]).transformList(i, c, c.?imagePullPolicy.orValue('') != 'Always', JSONPatch{op: 'add', path: '/spec/${list}/' + string(i) + '/imagePullPolicy', value: 'Always'})`,
  ),
  `object.spec.?volumes.orValue([]).transformList(i, v, has(v.image) && v.image.?pullPolicy.orValue('') != 'Always', JSONPatch{op: 'add', path: '/spec/volumes/' + string(i) + '/image/pullPolicy', value: 'Always'})`,
].join(' + ');

export const alwaysPullImages = requiring('always-pull-images', mutatingUnavailable, () => ({
  policies: [
    {
      kind: 'MutatingAdmissionPolicy',
      rules: webhookRules(plugin, 'mutating'),
      matchConditions: [NEW_IMAGES],
      mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: PATCHES } }],
      reinvocationPolicy: 'IfNeeded',
    },
    {
      kind: 'ValidatingAdmissionPolicy',
      rules: webhookRules(plugin, 'validating'),
      matchConditions: [NEW_IMAGES],
      variables: [{ name: 'violations', expression: VIOLATIONS }],
      validations: [
        { expression: 'size(variables.violations) == 0', messageExpression: listed('variables.violations') },
      ],
    },
  ],
  differences: [
    'several violations are listed once after the apiserver\'s prefix, `[e1, e2]`, where upstream repeats `pods "p" is forbidden:` before each',
  ],
}));
