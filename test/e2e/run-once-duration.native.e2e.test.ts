// run-once-duration natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// `emit --native` compiles, applied to a real apiserver, answer OpenShift's
// TestRunOnceDurationAdmit (test/support/cases) as the webhooks do on another apiserver: each row's
// project is a real Namespace with the row's override annotation (created once the webhooks are in
// place, which learn it), under one configuration whose cluster limit is 10 s. The row that needs
// no cluster limit is compared, not checked against OpenShift's expectation (the in-process proof
// runs it under its own configuration). Annotation values that strconv.ParseInt reads, and does
// not, are projects too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from './support/kube.js';
import { create, pod } from './support/kube.js';
import { typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { expectSameOutcome, namespaceWithAccount, startNativePair } from './support/native-pair.js';
import {
  ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION,
  RUN_ONCE_DURATION_ADMIT_CASES,
  projectLimitAnnotations,
} from '../support/cases/run-once-duration.js';

const LIMIT = 10;
const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: autoscaling.openshift.io/RunOnceDuration
    configuration:
      apiVersion: autoscaling.openshift.io/v1
      kind: RunOnceDurationConfig
      activeDeadlineSecondsOverride: ${LIMIT}
`;

/** Project annotations (test/native/openshift-scheduling.test.ts's), each on a pod asking 7200 s. */
const ANNOTATIONS = [
  '+0100',
  '-5',
  '0',
  'abc',
  '1.5',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '',
];

const runOnce = (namespace: string, restartPolicy: string, activeDeadlineSeconds?: number): KubeObject =>
  pod(namespace, 'pod', {
    restartPolicy,
    ...(activeDeadlineSeconds !== undefined && { activeDeadlineSeconds }),
  });
const deadlineOf = (object: KubeObject | undefined) =>
  (object?.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds;

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    seed: (cluster) => namespaceWithAccount(cluster, 'probe'),
    inForce: async (cluster) =>
      deadlineOf((await create(cluster, runOnce('probe', 'Never'), { dryRun: true })).object) === LIMIT,
    after: async (cluster) => {
      for (const [index, row] of RUN_ONCE_DURATION_ADMIT_CASES.entries()) {
        const annotations = projectLimitAnnotations(row);
        await namespaceWithAccount(cluster, `row-${index}`, annotations ? { annotations } : {});
      }
      for (const [index, annotation] of ANNOTATIONS.entries())
        await namespaceWithAccount(cluster, `annotated-${index}`, {
          annotations: { [ACTIVE_DEADLINE_SECONDS_OVERRIDE_ANNOTATION]: annotation },
        });
    },
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('run-once-duration (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  RUN_ONCE_DURATION_ADMIT_CASES.forEach((row, index) => {
    it(`answers as the webhooks do: ${row.name}`, async () => {
      const [webhook, native] = await pair.both((cluster) =>
        create(cluster, runOnce(`row-${index}`, row.restartPolicy, row.podDeadline)),
      );
      expect(webhook.status, webhook.message).toBe(201);
      // OpenShift's expectation holds where the row's cluster limit is this configuration's, or a
      // project limit or the pod's own lower deadline decides.
      if (row.limit === LIMIT || row.projectLimit !== undefined || (row.podDeadline ?? Infinity) <= LIMIT)
        expect(deadlineOf(webhook.object)).toBe(row.expectedActiveDeadlineSeconds);
      expectSameOutcome(webhook, native);
    });
  });

  ANNOTATIONS.forEach((annotation, index) => {
    it(`reads the project limit ${JSON.stringify(annotation)} as the webhooks do`, async () => {
      const [webhook, native] = await pair.both((cluster) =>
        create(cluster, runOnce(`annotated-${index}`, 'Never', 7200)),
      );
      expectSameOutcome(webhook, native);
    });
  });
});
