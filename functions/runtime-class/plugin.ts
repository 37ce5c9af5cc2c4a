// RuntimeClass: a pod that names a RuntimeClass gets the class's pod overhead (what the sandbox
// itself costs: kata's VM, gVisor's sentry) and its scheduling constraints (the nodes that run
// that handler), so quota, scheduling and eviction count what the pod really uses. Upstream:
// plugin/pkg/admission/runtimeclass.
//
// Upstream's Admit sets spec.overhead and merges the class's nodeSelector and tolerations; its
// Validate refuses an overhead that is not the class's. It reads an informer and falls back to a
// live GET; here the RuntimeClasses are the ones this plugin's learning webhook saw written and
// those `npm run sync` loaded. A class never learned is upstream's answer to one the live GET
// cannot find either: `pod rejected: RuntimeClass "<name>" not found`. So the plugin is opt-in:
// run `npm run sync` first, then name it in the AdmissionConfiguration.
//
// Upstream changed how a pod without an overhead is judged after 1.36 (kubernetes/kubernetes
// #124899): up to 1.36, Validate refuses a pod naming a class with an overhead when the pod has
// none (nil is not the class's overhead), and both phases count an empty `overhead: {}` as set;
// later, a pod with no or an empty overhead passes Validate, and Admit treats `{}` as none. The
// operator names the Kubernetes version whose behaviour to serve (default 1.36, the newest
// released one), as ValidatingAdmissionPolicy's `celEnvironment` names its CEL environment's:
//
//   - name: RuntimeClass
//     configuration:
//       kubernetesVersion: "1.37"

import { allowed, badRequest, forbidden, patched } from '../../lib/admission/decision.js';
import type { Decision } from '../../lib/admission/decision.js';
import type { PluginContext } from '../../lib/admission/plugin.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import { ConfigFields } from '../../lib/config/fields.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import { Quantity } from '../../lib/kube/quantity.js';
import { mergeTolerations } from '../../lib/kube/toleration-sets.js';
import type { Toleration } from '../../lib/kube/tolerations.js';
import { tolerationsOf } from '../../lib/kube/tolerations.js';

const UPSTREAM_NAME = 'RuntimeClass';
const NEW_PODS = judgedResource(['CREATE'], '', 'pods', 'Namespaced');

/** The Kubernetes versions whose RuntimeClass plugin this one can answer as (`kubernetesVersion`). */
export const KUBERNETES_VERSIONS = ['1.30', '1.31', '1.32', '1.33', '1.34', '1.35', '1.36', '1.37'] as const;
export type KubernetesVersion = (typeof KUBERNETES_VERSIONS)[number];
export const DEFAULT_KUBERNETES_VERSION: KubernetesVersion = '1.36';
/** The first version in which a pod with no (or an empty) overhead passes Validate. */
const EMPTY_OVERHEAD_IS_NONE_SINCE: KubernetesVersion = '1.37';

export interface RuntimeClassConfig {
  readonly kubernetesVersion: KubernetesVersion;
}

const minorOf = (version: string) => Number(version.split('.')[1]);

/** How the served version reads a pod's spec.overhead. */
interface OverheadRules {
  /** Whether the pod carries an overhead the plugin must judge: any non-null map, or a non-empty one. */
  readonly carried: (overhead: ResourceList | null | undefined) => boolean;
  /** Whether Validate passes a pod that carries none (the later change), or compares it with the class's. */
  readonly noneAlwaysPasses: boolean;
}

function overheadRules(config: RuntimeClassConfig | undefined): OverheadRules {
  const version = config?.kubernetesVersion ?? DEFAULT_KUBERNETES_VERSION;
  const later = minorOf(version) >= minorOf(EMPTY_OVERHEAD_IS_NONE_SINCE);
  // Up to 1.36 upstream tests `pod.Spec.Overhead != nil`; later, `len(pod.Spec.Overhead) > 0`.
  return later ? { carried: hasResources, noneAlwaysPasses: true } : { carried: isSet, noneAlwaysPasses: false };
}

type ResourceList = Record<string, unknown>;
interface PodSpecFields {
  runtimeClassName?: unknown;
  overhead?: ResourceList | null;
  nodeSelector?: Record<string, string> | null;
  tolerations?: unknown;
  [field: string]: unknown;
}
interface RuntimeClassFields {
  overhead?: { podFixed?: ResourceList | null } | null;
  scheduling?: { nodeSelector?: Record<string, string> | null; tolerations?: Toleration[] | null } | null;
}

const specOf = (pod: KubeObject): PodSpecFields => (pod.spec as PodSpecFields | undefined) ?? {};
const isSet = (value: unknown): boolean => value !== undefined && value !== null;
/** A resource list with at least one entry. */
const hasResources = (list: ResourceList | null | undefined): list is ResourceList =>
  list !== null && list !== undefined && Object.keys(list).length > 0;

/** apiequality.Semantic.DeepEqual of two ResourceLists: the same names, quantities equal by value. */
function sameResources(a: ResourceList, b: ResourceList): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((name) => {
    if (!Object.hasOwn(b, name)) return false;
    try {
      return Quantity.parse(String(a[name])).cmp(Quantity.parse(String(b[name]))) === 0;
    } catch {
      return a[name] === b[name];
    }
  });
}

const OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

type Prepared = { pod: KubeObject; runtimeClass: RuntimeClassFields | undefined } | { answer: Decision };

/** Upstream's prepareObjects: the pod and the class it names (none named: undefined). */
async function prepareObjects(
  request: AdmissionRequest,
  { state }: PluginContext<RuntimeClassConfig>,
): Promise<Prepared> {
  const pod = request.object;
  if (!isObjectOfKind(pod, 'Pod')) {
    return { answer: badRequest('Resource was marked with kind Pod but was unable to be converted') };
  }
  const name = specOf(pod).runtimeClassName;
  if (!isSet(name)) return { pod, runtimeClass: undefined };
  const learned = await state.learnedObjects.get('runtimeclasses', String(name));
  if (!learned) {
    return { answer: forbidden(request, [`pod rejected: RuntimeClass ${JSON.stringify(String(name))} not found`]) };
  }
  return { pod, runtimeClass: learned.object as RuntimeClassFields };
}

/** setOverhead and setScheduling: the pod as the class makes it, or the refusal. */
function applyClass(
  request: AdmissionRequest,
  pod: KubeObject,
  rc: RuntimeClassFields | undefined,
  rules: OverheadRules,
): Decision {
  const spec = specOf(pod);
  const next: PodSpecFields = { ...spec };
  if (rc && isSet(rc.overhead)) {
    const podFixed = rc.overhead?.podFixed;
    // Semantic.DeepEqual: a nil and an empty ResourceList are equal.
    if (rules.carried(spec.overhead) && !sameResources(podFixed ?? {}, spec.overhead ?? {})) {
      return forbidden(request, [OVERHEAD_MISMATCH]);
    }
    if (podFixed) next.overhead = podFixed;
    else delete next.overhead;
  }
  const scheduling = rc?.scheduling;
  if (scheduling) {
    const runtimeSelector = scheduling.nodeSelector ?? {};
    if (!isSet(spec.nodeSelector)) {
      if (isSet(scheduling.nodeSelector)) next.nodeSelector = { ...runtimeSelector };
    } else {
      const merged = { ...spec.nodeSelector };
      for (const key of Object.keys(runtimeSelector).sort()) {
        const value = runtimeSelector[key];
        if (Object.hasOwn(merged, key) && merged[key] !== value) {
          return forbidden(request, [
            `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${merged[key]}`,
          ]);
        }
        merged[key] = value;
      }
      next.nodeSelector = merged;
    }
    const tolerations = mergeTolerations(tolerationsOf(spec), scheduling.tolerations ?? []);
    // MergeTolerations answers nil for nothing: a pod that had none keeps none.
    if (tolerations.length > 0 || isSet(spec.tolerations)) next.tolerations = tolerations;
  }
  return patched({ ...pod, spec: next });
}

/** Upstream's validateOverhead, as the served version has it. */
function validateOverhead(
  request: AdmissionRequest,
  pod: KubeObject,
  rc: RuntimeClassFields | undefined,
  rules: OverheadRules,
): Decision {
  const overhead = specOf(pod).overhead;
  if (rules.noneAlwaysPasses && !rules.carried(overhead)) return allowed();
  if (rc && isSet(rc.overhead)) {
    const same = sameResources(rc.overhead?.podFixed ?? {}, overhead ?? {});
    return same ? allowed() : forbidden(request, [OVERHEAD_MISMATCH]);
  }
  if (!rules.carried(overhead)) return allowed();
  return forbidden(request, ['pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead']);
}

export default definePlugin<RuntimeClassConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'runtime-class',
    summary:
      "Sets pods' overhead and scheduling from their RuntimeClass, and refuses overheads that are not the class's (learned RuntimeClasses).",
    // Upstream's Validate is the twin: an overhead a later webhook changed is refused (fails closed,
    // as overhead is what quota and eviction count).
    ...mutatingWithTwin(NEW_PODS.rules),
    writes: false,
    needs: ['runtimeclasses'],
    systemNamespaces: 'exclude',
    // Refuses pods naming a class never learned: enabled only by its entry, after `npm run sync`.
    optIn: true,
  },

  configure(raw): RuntimeClassConfig {
    // Upstream takes no configuration; without an entry's configuration, the default version.
    if (raw === undefined || raw === null) return { kubernetesVersion: DEFAULT_KUBERNETES_VERSION };
    const entry = ConfigFields.of(UPSTREAM_NAME, raw, 'an object with kubernetesVersion').allow('kubernetesVersion');
    return { kubernetesVersion: entry.oneOf('kubernetesVersion', KUBERNETES_VERSIONS, DEFAULT_KUBERNETES_VERSION) };
  },

  async admit(request, context) {
    if (NEW_PODS.ignore(request)) return allowed();
    const prepared = await prepareObjects(request, context);
    if ('answer' in prepared) return prepared.answer;
    return applyClass(request, prepared.pod, prepared.runtimeClass, overheadRules(context.config));
  },

  async validate(request, context) {
    if (NEW_PODS.ignore(request)) return allowed();
    const prepared = await prepareObjects(request, context);
    if ('answer' in prepared) return prepared.answer;
    return validateOverhead(request, prepared.pod, prepared.runtimeClass, overheadRules(context.config));
  },
});
