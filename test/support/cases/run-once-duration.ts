// OpenShift's RunOnceDuration table (openshift/kubernetes openshift-kube-apiserver/admission/
// autoscaling/runonceduration/admission_test.go, TestRunOnceDurationAdmit), held once for the
// plugin's tests and the native policies' proof.

export const ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION = 'openshift.io/active-deadline-seconds-override';

export interface RunOnceDurationAdmitCase {
  readonly name: string;
  /** The configuration's activeDeadlineSecondsOverride: the cluster's limit (none: no limit). */
  readonly limit?: number;
  readonly restartPolicy: string;
  readonly podDeadline?: number;
  /** The project's override annotation (none: the project has no annotation). */
  readonly projectLimit?: string;
  readonly expectedActiveDeadlineSeconds?: number;
}

/** The project's annotations for a case. */
export const projectLimitAnnotations = (c: RunOnceDurationAdmitCase): Record<string, string> | undefined =>
  c.projectLimit === undefined ? undefined : { [ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION]: c.projectLimit };

export const RUN_ONCE_DURATION_ADMIT_CASES: readonly RunOnceDurationAdmitCase[] = [
  {
    name: 'expect globally configured duration to be set',
    limit: 10,
    restartPolicy: 'Never',
    expectedActiveDeadlineSeconds: 10,
  },
  { name: 'empty config, no duration to be set', restartPolicy: 'Never' },
  {
    name: 'expect configured duration to not limit lower existing duration',
    limit: 10,
    restartPolicy: 'Never',
    podDeadline: 5,
    expectedActiveDeadlineSeconds: 5,
  },
  {
    name: 'expect empty config to not limit existing duration',
    restartPolicy: 'Never',
    podDeadline: 5,
    expectedActiveDeadlineSeconds: 5,
  },
  {
    name: 'expect project limit to be used with nil global value',
    restartPolicy: 'Never',
    podDeadline: 2000,
    projectLimit: '1000',
    expectedActiveDeadlineSeconds: 1000,
  },
  {
    name: 'expect project limit to not limit a smaller set value',
    restartPolicy: 'Never',
    podDeadline: 10,
    projectLimit: '1000',
    expectedActiveDeadlineSeconds: 10,
  },
  {
    name: 'expect project limit to have priority over global config value',
    limit: 10,
    restartPolicy: 'Never',
    podDeadline: 2000,
    projectLimit: '1000',
    expectedActiveDeadlineSeconds: 1000,
  },
  { name: 'make no change to a pod that is not a run-once pod', limit: 10, restartPolicy: 'Always' },
  {
    name: 'update a pod that has a RestartOnFailure policy',
    limit: 10,
    restartPolicy: 'OnFailure',
    expectedActiveDeadlineSeconds: 10,
  },
];
