// DefaultTolerationSeconds: when a node becomes not-ready or unreachable, the node lifecycle
// controller taints it NoExecute and evicts pods that do not tolerate the taint. Evicting at once
// would turn every network blip into a rescheduling storm, so every pod that does not say otherwise
// tolerates both taints for a bounded time (300 seconds unless configured). Upstream:
// plugin/pkg/admission/defaulttolerationseconds.
//
// Upstream reads the two durations from kube-apiserver flags; here they come from the plugin's
// AdmissionConfiguration entry:
//
//   - name: DefaultTolerationSeconds
//     configuration: {defaultNotReadyTolerationSeconds: 300, defaultUnreachableTolerationSeconds: 300}
//
// Served as a mutating webhook (upstream Admit: add the tolerations) and a validating twin that
// checks the pod still tolerates both taints once every other mutating webhook has run. Pod
// updates may only add tolerations, so the twin never refuses an otherwise valid later change.

import { allowed, badRequest, forbidden, patched } from '../../lib/admission/decision.js';
import { FieldPath, required } from '../../lib/admission/field.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import { ConfigFields } from '../../lib/config/fields.js';
import type { Pod } from '../../lib/kube/pod.js';
import { goTypeName, ofKind } from '../../lib/kube/objects.js';
import type { Toleration } from '../../lib/kube/tolerations.js';
import { isToleration, tolerationsOf } from '../../lib/kube/tolerations.js';

const PLUGIN = 'DefaultTolerationSeconds';
const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
const NO_EXECUTE = 'NoExecute';
const UPSTREAM_DEFAULT_SECONDS = 300;

const POD_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'pods', 'Namespaced');
/**
 * Our twin (upstream never refuses, it only adds): it checks new pods only, where a later webhook
 * could have undone the mutation; a pod that predates the webhook is not refused on its updates.
 * It fails open: tolerations are a convenience, not a security boundary, and an outage must not
 * stop every pod write.
 */
const NEW_PODS = judgedResource(['CREATE'], '', 'pods', 'Namespaced');

export interface DefaultTolerationSecondsConfig {
  /** --default-not-ready-toleration-seconds */
  readonly defaultNotReadyTolerationSeconds: number;
  /** --default-unreachable-toleration-seconds */
  readonly defaultUnreachableTolerationSeconds: number;
}

const CONFIG_FIELDS = ['defaultNotReadyTolerationSeconds', 'defaultUnreachableTolerationSeconds'] as const;

const UPSTREAM_DEFAULTS: DefaultTolerationSecondsConfig = {
  defaultNotReadyTolerationSeconds: UPSTREAM_DEFAULT_SECONDS,
  defaultUnreachableTolerationSeconds: UPSTREAM_DEFAULT_SECONDS,
};

function configure(raw: unknown): DefaultTolerationSecondsConfig {
  if (raw === undefined || raw === null) return UPSTREAM_DEFAULTS;
  const entry = ConfigFields.of(PLUGIN, raw, `an object with ${CONFIG_FIELDS.join(' and ')}`).allow(...CONFIG_FIELDS);
  // A number of seconds, never negative.
  const seconds = (field: (typeof CONFIG_FIELDS)[number]) => entry.integer(field, UPSTREAM_DEFAULT_SECONDS, 0);
  return {
    defaultNotReadyTolerationSeconds: seconds('defaultNotReadyTolerationSeconds'),
    defaultUnreachableTolerationSeconds: seconds('defaultUnreachableTolerationSeconds'),
  };
}

const PODS: ObjectGuard<Pod> = {
  // Other resources and subresources (pods/status, pods/ephemeralcontainers...) are left alone.
  ignore: POD_WRITES.ignore,
  accepts: ofKind<Pod>('Pod'),
  otherwise: (request) => badRequest(`expected *api.Pod but got ${goTypeName(request.object)}`),
};

/**
 * Upstream's test, kept as is: a toleration with this key or no key, for NoExecute or every effect.
 * The operator and value are not looked at.
 */
function toleratesNoExecute(tolerations: readonly Toleration[], taintKey: string): boolean {
  return tolerations.some(
    (t) =>
      isToleration(t) &&
      ((t.key ?? '') === taintKey || (t.key ?? '') === '') &&
      ((t.effect ?? '') === NO_EXECUTE || (t.effect ?? '') === ''),
  );
}

export default definePlugin({
  metadata: {
    upstreamName: PLUGIN,
    name: 'default-toleration-seconds',
    summary:
      'Adds not-ready and unreachable NoExecute tolerations with default tolerationSeconds to pods that have none.',
    ...mutatingWithTwin(POD_WRITES.rules, { twinRules: NEW_PODS.rules, twinFailurePolicy: 'Ignore' }),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  configure,

  admit: guardedPhase<Pod, DefaultTolerationSecondsConfig>(PODS, (pod, _request, context) => {
    // A caller that skipped configure gets upstream's flag defaults, never NaN seconds.
    const config = context.config ?? UPSTREAM_DEFAULTS;
    const tolerations = tolerationsOf(pod.spec);
    const added: Toleration[] = [];
    if (!toleratesNoExecute(tolerations, TAINT_NODE_NOT_READY)) {
      added.push({
        key: TAINT_NODE_NOT_READY,
        operator: 'Exists',
        effect: NO_EXECUTE,
        tolerationSeconds: config.defaultNotReadyTolerationSeconds,
      });
    }
    if (!toleratesNoExecute(tolerations, TAINT_NODE_UNREACHABLE)) {
      added.push({
        key: TAINT_NODE_UNREACHABLE,
        operator: 'Exists',
        effect: NO_EXECUTE,
        tolerationSeconds: config.defaultUnreachableTolerationSeconds,
      });
    }
    if (added.length === 0) return allowed();
    // Copies only the path that changes; a pod without a spec gets one holding just the tolerations.
    const spec = { ...pod.spec, tolerations: [...tolerations, ...added] } as NonNullable<Pod['spec']>;
    return patched({ ...pod, spec });
  }),

  validate: guardedPhase({ ...PODS, ignore: NEW_PODS.ignore }, (pod, request) => {
    const tolerations = tolerationsOf(pod.spec);
    const path = FieldPath.of('spec', 'tolerations');
    const errors = [TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE]
      .filter((key) => !toleratesNoExecute(tolerations, key))
      .map((key) =>
        required(
          path,
          `a toleration for the taint ${key}:${NO_EXECUTE} is needed (${PLUGIN} adds one with tolerationSeconds)`,
        ),
      );
    return errors.length === 0 ? allowed() : forbidden(request, errors);
  }),
});
