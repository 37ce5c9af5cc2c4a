// autoscaling.openshift.io/RunOnceDuration: a run-once pod (restartPolicy Never or OnFailure) that
// hangs holds its resources forever. OpenShift caps how long such pods may be active by setting
// spec.activeDeadlineSeconds to at most a limit: the namespace's
// `openshift.io/active-deadline-seconds-override` annotation when present, else the cluster limit.
// A pod that asks for less keeps its own value.
// Source: openshift/kubernetes openshift-kube-apiserver/admission/autoscaling/runonceduration.
//
// Configuration, in OpenShift's own format, under the AdmissionConfiguration entry named
// autoscaling.openshift.io/RunOnceDuration (no entry: the plugin is disabled, as in OpenShift):
//
//   - name: autoscaling.openshift.io/RunOnceDuration
//     configuration:
//       apiVersion: autoscaling.openshift.io/v1
//       kind: RunOnceDurationConfig
//       activeDeadlineSecondsOverride: 3600   # a limit despite its name; absent: annotation only
//
// Served as a mutating webhook (upstream's Admit) and our validating twin, which refuses, on pod
// CREATE only, a run-once pod whose deadline the mutation would still lower (it was undone or
// the mutating webhook failed open). Upstream only mutates, in the same process as the rest of
// admission, so its cap always applies; here the mutating webhook fails open (a timeout, a 429
// or a 5xx admits the pod uncapped), so the cap holds only if the twin fails closed. It does,
// and a matchCondition sends it run-once pods only: an outage stops those, never other pods.
//
// Namespace annotations are learned. A namespace never seen (RUN_ONCE_DURATION_UNKNOWN_NAMESPACE):
// `warn`, the default, is the answer that cannot be wrong: the namespace's annotation may raise or
// lower the limit, so no deadline is set or required, and one warning names the fix. `default`
// applies the cluster limit as if the namespace had no annotation; `reject` is upstream's refusal
// of a namespace it cannot find.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, patched, withWarnings } from '../../lib/admission/decision.js';
import { FieldPath, invalid, required } from '../../lib/admission/field.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { openShiftConfig } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';
import type { PluginState } from '../../lib/admission/ports.js';

const PLUGIN = 'autoscaling.openshift.io/RunOnceDuration';
const NAME = 'run-once-duration';
/** A limit, not an override, despite its name (kept for compatibility upstream). */
export const ACTIVE_DEADLINE_SECONDS_LIMIT_ANNOTATION = 'openshift.io/active-deadline-seconds-override';
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

export interface RunOnceDurationConfig {
  /** False when the AdmissionConfiguration has no entry: OpenShift then disables the plugin. */
  readonly enabled: boolean;
  readonly activeDeadlineSecondsLimit?: number;
  readonly unknownNamespace: (typeof UNKNOWN_NAMESPACE_RULES)[number];
}

const UNKNOWN_NAMESPACE_RULES = ['warn', 'default', 'reject'] as const;

function configure(raw: unknown): RunOnceDurationConfig {
  const unknownNamespace = unknownNamespaceRule(PLUGIN, NAME, UNKNOWN_NAMESPACE_RULES, 'warn');
  const entry = openShiftConfig(PLUGIN, raw, 'autoscaling.openshift.io/v1', 'RunOnceDurationConfig', [
    'activeDeadlineSecondsOverride',
  ]);
  if (entry === undefined) return { enabled: false, unknownNamespace };
  const limit = entry.optionalInteger('activeDeadlineSecondsOverride');
  if (limit === undefined) return { enabled: true, unknownNamespace };
  // ValidateRunOnceDurationConfig.
  if (limit <= 0) throw entry.error('activeDeadlineSecondsOverride', `Invalid value: ${limit}: must be greater than 0`);
  return { enabled: true, activeDeadlineSecondsLimit: limit, unknownNamespace };
}

interface Pod extends KubeObject {
  spec?: { restartPolicy?: string; activeDeadlineSeconds?: number; [key: string]: unknown };
}

/** Go's strconv.ParseInt(s, 10, 64), with its error text. */
function parseInt64(text: string): number | Error {
  if (!/^[+-]?\d+$/.test(text)) return new Error(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  const value = BigInt(text);
  if (value > INT64_MAX || value < INT64_MIN)
    return new Error(`strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`);
  return Number(value);
}

const minOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * The pod's deadline after upstream's Admit, or the refusal Admit answers; `unknown`: the namespace
 * was never seen and the warn rule leaves the pod alone.
 */
async function admittedDeadline(
  request: AdmissionRequest,
  pod: Pod,
  config: RunOnceDurationConfig,
  state: PluginState,
): Promise<{ deadline: number | undefined } | { decision: Decision } | { unknown: string }> {
  const own = typeof pod.spec?.activeDeadlineSeconds === 'number' ? pod.spec.activeDeadlineSeconds : undefined;
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined && config.unknownNamespace === 'reject') {
    return {
      decision: forbidden(request, [
        `error looking up pod namespace: namespace ${JSON.stringify(request.namespace)} not found`,
      ]),
    };
  }
  if (namespace === undefined && config.unknownNamespace === 'warn') {
    const consequence = 'its activeDeadlineSeconds limit was not applied';
    return { unknown: neverSeenWarning(PLUGIN, request.namespace, consequence) };
  }
  const annotation = namespace?.annotations[ACTIVE_DEADLINE_SECONDS_LIMIT_ANNOTATION];
  if (annotation !== undefined) {
    const limit = parseInt64(annotation);
    if (limit instanceof Error) {
      return {
        decision: forbidden(request, [
          `cannot parse the ActiveDeadlineSeconds limit (${annotation}) for project ${request.namespace}: ${limit.message}`,
        ]),
      };
    }
    return { deadline: minOf(limit, own) };
  }
  return { deadline: minOf(config.activeDeadlineSecondsLimit, own) };
}

/** Upstream's handler: pod CREATE, not subresources, and only run-once pods. */
function runOncePod(request: AdmissionRequest, config: RunOnceDurationConfig): Pod | undefined {
  if (!config.enabled || request.operation !== 'CREATE' || !isMainResource(request, '', 'pods')) return undefined;
  const pod = request.object;
  if (!isObjectOfKind<Pod>(pod, 'Pod')) return undefined;
  const policy = pod.spec?.restartPolicy;
  return policy === 'Never' || policy === 'OnFailure' ? pod : undefined;
}

const POD_RULES = judgedResource(['CREATE'], '', 'pods', 'Namespaced').rules;

/** Only run-once pods reach the twin (upstream's restartPolicy test, as a matchCondition). */
export const RUN_ONCE_PODS = {
  name: 'run-once-pods',
  expression: "has(object.spec.restartPolicy) && object.spec.restartPolicy in ['Never', 'OnFailure']",
};

/** The twin fails closed (mutatingWithTwin's default), on run-once pods only. */
function runOnceTwin(phases: ReturnType<typeof mutatingWithTwin>): ReturnType<typeof mutatingWithTwin> {
  const { validating } = phases;
  if (validating === undefined) return phases;
  return { ...phases, validating: { ...validating, matchConditions: [RUN_ONCE_PODS] } };
}

export default definePlugin<RunOnceDurationConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: NAME,
    summary:
      "Caps activeDeadlineSeconds of run-once pods at the namespace's override annotation or the cluster limit (OpenShift autoscaling.openshift.io/RunOnceDuration).",
    ...runOnceTwin(mutatingWithTwin(POD_RULES)),
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure,

  async admit(request, { config, state }) {
    const pod = runOncePod(request, config);
    if (pod === undefined) return allowed();
    const result = await admittedDeadline(request, pod, config, state);
    if ('decision' in result) return result.decision;
    if ('unknown' in result) return withWarnings(allowed(), result.unknown);
    if (result.deadline === undefined || result.deadline === pod.spec?.activeDeadlineSeconds) return allowed();
    return patched({ ...pod, spec: { ...pod.spec, activeDeadlineSeconds: result.deadline } });
  },

  async validate(request, { config, state }) {
    const pod = runOncePod(request, config);
    if (pod === undefined) return allowed();
    const result = await admittedDeadline(request, pod, config, state);
    if ('unknown' in result) return withWarnings(allowed(), result.unknown);
    // Only what the mutation would have fixed is refused here; its own refusals stay its own.
    if ('decision' in result || result.deadline === undefined) return allowed();
    const own = pod.spec?.activeDeadlineSeconds;
    if (own === result.deadline) return allowed();
    const path = FieldPath.of('spec', 'activeDeadlineSeconds');
    const detail = `must be at most ${result.deadline} for run-once pods in namespace ${request.namespace}`;
    return forbidden(request, [own === undefined ? required(path, detail) : invalid(path, own, detail)]);
  },
});
