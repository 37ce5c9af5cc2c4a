// Priority: a pod's scheduling priority comes from its PriorityClass (or the cluster's global
// default), never from a number its author typed, so that preemption follows what the cluster's
// operators declared. Upstream: plugin/pkg/admission/priority.
//
// Upstream's Admit resolves pods' spec.priority (and preemptionPolicy) from the PriorityClass
// named in spec.priorityClassName, or the global default; its Validate refuses a second global
// default. It reads an informer; here the PriorityClasses are the ones this plugin's learning
// webhook saw written and those `npm run sync` loaded. The two system classes, which every
// apiserver creates at start and recreates when deleted, are known without being learned.
// Upstream's informer never holds the class being written, while the learning webhook, called
// concurrently for the same write, may record it before the judge reads: the judge sets the
// learned class of that name aside (classesBeforeWrite).
//
// A class never learned is upstream's "no PriorityClass with name ... was found": the pod is
// refused. So the plugin is opt-in: run `npm run sync` (or write each class once) before naming
// it in the AdmissionConfiguration, or every pod naming a class that predates the webhook is
// refused.

import { allowed, badRequest, forbidden, patched } from '../../lib/admission/decision.js';
import type { PluginContext } from '../../lib/admission/plugin.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin, judgedResource } from '../../lib/admission/plugin.js';
import type { PluginState } from '../../lib/admission/ports.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';

const POD_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'pods', 'Namespaced');
const CLASS_WRITES = judgedResource(['CREATE', 'UPDATE'], 'scheduling.k8s.io', 'priorityclasses', 'Cluster');

/** scheduling.DefaultPriorityWhenNoDefaultClassExists */
const DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0;
/** What getDefaultPriority gives a pod when no class is the global default: no name, 0, preempting. */
const NO_DEFAULT_CLASS = {
  name: '',
  value: DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS,
  preemptionPolicy: 'PreemptLowerPriority',
} as const;

/** A PriorityClass as the plugin reads it. */
interface PriorityClass {
  readonly name: string;
  readonly value: number;
  readonly globalDefault: boolean;
  /** undefined when the class does not say (v1 defaults it to PreemptLowerPriority). */
  readonly preemptionPolicy: string | undefined;
}

/** scheduling.SystemPriorityClasses(): created by every apiserver at start. */
const SYSTEM_CLASSES: ReadonlyMap<string, PriorityClass> = new Map(
  [
    { name: 'system-node-critical', value: 2000001000 },
    { name: 'system-cluster-critical', value: 2000000000 },
  ].map(({ name, value }) => [name, { name, value, globalDefault: false, preemptionPolicy: 'PreemptLowerPriority' }]),
);

function priorityClassOf(name: string, object: KubeObject): PriorityClass {
  const { value, globalDefault, preemptionPolicy } = object as {
    value?: unknown;
    globalDefault?: unknown;
    preemptionPolicy?: unknown;
  };
  return {
    name,
    value: typeof value === 'number' ? value : 0,
    globalDefault: globalDefault === true,
    preemptionPolicy: typeof preemptionPolicy === 'string' ? preemptionPolicy : undefined,
  };
}

async function learnedClass(state: PluginState, name: string): Promise<PriorityClass | undefined> {
  const learned = await state.learnedObjects.get('priorityclasses', name);
  return learned ? priorityClassOf(learned.name, learned.object) : SYSTEM_CLASSES.get(name);
}

/**
 * Upstream's getDefaultPriorityClass over `classes`: of the global defaults (two may exist after a
 * race), the one with the lowest value; of equal values, the lower name (upstream takes the
 * informer's order).
 */
function defaultOf(classes: readonly PriorityClass[]): PriorityClass | undefined {
  let found: PriorityClass | undefined;
  for (const pc of classes) {
    if (!pc.globalDefault) continue;
    if (!found || pc.value < found.value || (pc.value === found.value && pc.name < found.name)) found = pc;
  }
  return found;
}

async function learnedClasses(state: PluginState): Promise<PriorityClass[]> {
  return (await state.learnedObjects.list('priorityclasses')).map(({ name, object }) => priorityClassOf(name, object));
}

const defaultPriorityClass = async (state: PluginState) => defaultOf(await learnedClasses(state));

interface PodSpecFields {
  priorityClassName?: unknown;
  priority?: unknown;
  preemptionPolicy?: unknown;
  [field: string]: unknown;
}
const specOf = (pod: KubeObject): PodSpecFields => (pod.spec as PodSpecFields | undefined) ?? {};
const isSet = (value: unknown) => value !== undefined && value !== null;

const unconvertible = (kind: string) =>
  badRequest(`resource was marked with kind ${kind} but was unable to be converted`);

async function admitPod(request: AdmissionRequest, { state }: PluginContext<undefined>) {
  const pod = request.object;
  if (!isObjectOfKind(pod, 'Pod')) return unconvertible('Pod');
  const spec = specOf(pod);

  if (request.operation === 'UPDATE') {
    const old = request.oldObject;
    if (!isObjectOfKind(old, 'Pod')) return unconvertible('Pod');
    // The plugin set priority and preemptionPolicy on create: an update that drops them keeps them
    // (API validation refuses any other change to them).
    const oldSpec = specOf(old);
    const kept: PodSpecFields = {};
    if (!isSet(spec.priority) && isSet(oldSpec.priority)) kept.priority = oldSpec.priority;
    if (!isSet(spec.preemptionPolicy) && isSet(oldSpec.preemptionPolicy))
      kept.preemptionPolicy = oldSpec.preemptionPolicy;
    return Object.keys(kept).length === 0 ? allowed() : patched({ ...pod, spec: { ...spec, ...kept } });
  }

  const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  let resolved: { name: string; value: number; preemptionPolicy: string | undefined };
  if (className === '') {
    resolved = (await defaultPriorityClass(state)) ?? NO_DEFAULT_CLASS;
  } else {
    const pc = await learnedClass(state, className);
    if (!pc) return forbidden(request, [`no PriorityClass with name ${className} was found`]);
    resolved = pc;
  }
  // A pod that carries a priority other than the one its class resolves to is refused.
  if (isSet(spec.priority) && spec.priority !== resolved.value) {
    return forbidden(request, [
      `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; ` +
        `priority admission controller computed ${resolved.value} from the given PriorityClass name`,
    ]);
  }
  const next: PodSpecFields = { ...spec, priorityClassName: resolved.name, priority: resolved.value };
  if (resolved.preemptionPolicy !== undefined) {
    if (isSet(spec.preemptionPolicy) && spec.preemptionPolicy !== resolved.preemptionPolicy) {
      return forbidden(request, [
        `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; ` +
          `priority admission controller computed ${resolved.preemptionPolicy} from the given PriorityClass name`,
      ]);
    }
    next.preemptionPolicy = resolved.preemptionPolicy;
  }
  // Upstream sets priorityClassName to "" when nothing resolves; an absent field stays absent.
  if (resolved.name === '' && !isSet(spec.priorityClassName)) delete next.priorityClassName;
  return patched({ ...pod, spec: next });
}

/**
 * The classes upstream's lister holds while it judges this write: never the object being written.
 * The learning webhook, called concurrently for the same write, may already have recorded it, so
 * the learned entry of that name is set aside; on UPDATE the stored object (oldObject) is what the
 * informer holds under that name until the write lands.
 */
async function classesBeforeWrite(request: AdmissionRequest, name: string, state: PluginState) {
  const others = (await learnedClasses(state)).filter((pc) => pc.name !== name);
  const stored = request.operation === 'UPDATE' ? request.oldObject : null;
  return isObjectOfKind(stored, 'PriorityClass') ? [...others, priorityClassOf(name, stored)] : others;
}

/** Upstream's validatePriorityClass: one global default at most. */
async function validatePriorityClass(request: AdmissionRequest, { state }: PluginContext<undefined>) {
  const pc = request.object;
  if (!isObjectOfKind(pc, 'PriorityClass')) return unconvertible('PriorityClass');
  if ((pc as { globalDefault?: unknown }).globalDefault !== true) return allowed();
  const name = request.name || String(pc.metadata?.name ?? '');
  const dpc = defaultOf(await classesBeforeWrite(request, name, state));
  // A second default created, or another class marked default while one exists.
  if (dpc && (request.operation === 'CREATE' || dpc.name !== name)) {
    return forbidden(request, [`PriorityClass ${dpc.name} is already marked as default. Only one default can exist`]);
  }
  return allowed();
}

export default definePlugin({
  metadata: {
    upstreamName: 'Priority',
    name: 'priority',
    summary:
      "Resolves pods' priority from their PriorityClass or the global default; one global default at most (learned PriorityClasses).",
    mutating: {
      rules: POD_WRITES.rules,
      // Upstream's Admit both sets and refuses; failing open keeps pods schedulable in an outage,
      // with the priority their author gave or none (the apiserver's own Priority plugin, on by
      // default, still resolves it where it runs).
      failurePolicy: 'Ignore',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
      reinvocationPolicy: 'IfNeeded',
    },
    validating: { rules: CLASS_WRITES.rules, failurePolicy: 'Fail', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS },
    writes: false,
    needs: ['priorityclasses'],
    systemNamespaces: 'exclude',
    // Refuses pods naming a class never learned: enabled only by its entry, after `npm run sync`.
    optIn: true,
  },

  admit(request, context) {
    return POD_WRITES.ignore(request) ? allowed() : admitPod(request, context);
  },

  validate(request, context) {
    return CLASS_WRITES.ignore(request) ? allowed() : validatePriorityClass(request, context);
  },
});
