// AlwaysPullImages as a MutatingAdmissionPolicy (every container and image volume set to Always)
// and a ValidatingAdmissionPolicy (its twin: the final pod must pull Always), Kubernetes 1.36+.
// Both skip an update that brings no new image, as upstream's shouldIgnore does.
import type { NativeCompiler } from '../policy.js';
import { mutatingUnavailable } from '../policy.js';

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;
const POD_WRITES = [
  { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
] as const;

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

export const alwaysPullImages: NativeCompiler = {
  name: 'always-pull-images',
  compile(_config, version) {
    const unavailable = mutatingUnavailable(version);
    if (unavailable !== undefined) return { webhook: unavailable };
    return {
      policies: [
        {
          kind: 'MutatingAdmissionPolicy',
          rules: POD_WRITES,
          matchConditions: [NEW_IMAGES],
          mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: PATCHES } }],
          reinvocationPolicy: 'IfNeeded',
        },
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: POD_WRITES,
          matchConditions: [NEW_IMAGES],
          variables: [{ name: 'violations', expression: VIOLATIONS }],
          validations: [
            {
              expression: 'size(variables.violations) == 0',
              messageExpression:
                "size(variables.violations) == 1 ? variables.violations[0] : '[' + variables.violations.join(', ') + ']'",
            },
          ],
        },
      ],
      differences: [
        'several violations are listed once after the apiserver\'s prefix, `[e1, e2]`, where upstream repeats `pods "p" is forbidden:` before each',
      ],
    };
  },
};
