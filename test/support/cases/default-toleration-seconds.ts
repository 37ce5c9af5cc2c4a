// Upstream's DefaultTolerationSeconds table (plugin/pkg/admission/defaulttolerationseconds/
// admission_test.go, TestForgivenessAdmission), held once for the plugin's tests and the native
// policies' proof, with the default 300 seconds for both taints.

export const NOT_READY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE = 'node.kubernetes.io/unreachable';
export const DEPRECATED_NOT_READY = 'node.alpha.kubernetes.io/notReady';
const DEPRECATED_UNREACHABLE = 'node.alpha.kubernetes.io/unreachable';

/** A toleration of `key`'s NoExecute taint for `tolerationSeconds`. */
export const noExecute = (key: string, tolerationSeconds: number) => ({
  key,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds,
});

export interface ForgivenessCase {
  readonly description: string;
  /** The pod's tolerations; none: the pod has no tolerations field. */
  readonly requested?: readonly unknown[];
  readonly expected: readonly unknown[];
}

export const FORGIVENESS_CASES: readonly ForgivenessCase[] = [
  {
    description: 'pod has no tolerations, expect add tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`',
    requested: undefined,
    expected: [noExecute(NOT_READY, 300), noExecute(UNREACHABLE, 300)],
  },
  {
    description:
      'pod has alpha tolerations, expect add tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`, the alpha tolerations will not be touched',
    requested: [noExecute(DEPRECATED_NOT_READY, 300), noExecute(DEPRECATED_UNREACHABLE, 300)],
    expected: [
      noExecute(DEPRECATED_NOT_READY, 300),
      noExecute(DEPRECATED_UNREACHABLE, 300),
      noExecute(NOT_READY, 300),
      noExecute(UNREACHABLE, 300),
    ],
  },
  {
    description:
      'pod has alpha not-ready toleration, expect add tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`, the alpha tolerations will not be touched',
    requested: [noExecute(DEPRECATED_NOT_READY, 300)],
    expected: [noExecute(DEPRECATED_NOT_READY, 300), noExecute(NOT_READY, 300), noExecute(UNREACHABLE, 300)],
  },
  {
    description:
      'pod has alpha unreachable toleration, expect add tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`, the alpha tolerations will not be touched',
    requested: [noExecute(DEPRECATED_UNREACHABLE, 300)],
    expected: [noExecute(DEPRECATED_UNREACHABLE, 300), noExecute(NOT_READY, 300), noExecute(UNREACHABLE, 300)],
  },
  {
    description:
      'pod has tolerations, but none is for taint `not-ready:NoExecute` or `unreachable:NoExecute`, expect add tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`',
    requested: [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule', tolerationSeconds: 700 }],
    expected: [
      { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule', tolerationSeconds: 700 },
      noExecute(NOT_READY, 300),
      noExecute(UNREACHABLE, 300),
    ],
  },
  {
    description:
      'pod specified a toleration for taint `not-ready:NoExecute`, expect add toleration for `unreachable:NoExecute`',
    requested: [noExecute(NOT_READY, 700)],
    expected: [noExecute(NOT_READY, 700), noExecute(UNREACHABLE, 300)],
  },
  {
    description:
      'pod specified a toleration for taint `unreachable:NoExecute`, expect add toleration for `not-ready:NoExecute`',
    requested: [noExecute(UNREACHABLE, 700)],
    expected: [noExecute(UNREACHABLE, 700), noExecute(NOT_READY, 300)],
  },
  {
    description:
      'pod specified tolerations for both `not-ready:NoExecute` and `unreachable:NoExecute`, expect no change',
    requested: [noExecute(NOT_READY, 700), noExecute(UNREACHABLE, 700)],
    expected: [noExecute(NOT_READY, 700), noExecute(UNREACHABLE, 700)],
  },
  {
    description: 'pod specified toleration for taint `unreachable`, expect add toleration for `not-ready:NoExecute`',
    requested: [{ key: UNREACHABLE, operator: 'Exists', tolerationSeconds: 700 }],
    expected: [{ key: UNREACHABLE, operator: 'Exists', tolerationSeconds: 700 }, noExecute(NOT_READY, 300)],
  },
  {
    description: 'pod has wildcard toleration for all kind of taints, expect no change',
    requested: [{ operator: 'Exists', tolerationSeconds: 700 }],
    expected: [{ operator: 'Exists', tolerationSeconds: 700 }],
  },
];
