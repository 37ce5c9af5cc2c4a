// autoscaling.openshift.io/ClusterResourceOverride: developers set limits and requests badly, and
// an administrator who wants a fixed overcommit ratio can compute requests (and the CPU limit) from
// the limits the developer set: memory request = a percentage of the memory limit, CPU limit = a
// percentage of "1 core per GiB" of memory limit, CPU request = a percentage of the CPU limit.
// Source: openshift/kubernetes openshift-kube-apiserver/admission/autoscaling/clusterresourceoverride
// (the in-tree plugin; OpenShift 4 serves the same logic from its ClusterResourceOverride operator's
// webhook, for namespaces that opt in with a label).
//
// Configuration, in OpenShift's own format, under the AdmissionConfiguration entry named
// autoscaling.openshift.io/ClusterResourceOverride (no entry: the plugin is disabled):
//
//   - name: autoscaling.openshift.io/ClusterResourceOverride
//     configuration:
//       apiVersion: autoscaling.openshift.io/v1
//       kind: ClusterResourceOverrideConfig
//       limitCPUToMemoryPercent: 200
//       cpuRequestToLimitPercent: 25
//       memoryRequestToLimitPercent: 50
//
// Which namespaces: those labelled `clusterresourceoverrides.admission.autoscaling.openshift.io/
// enabled: "true"` (the operator's opt-in), minus the in-tree plugin's exemptions: the annotation
// `autoscaling.openshift.io/cluster-resource-override-enabled` set to anything but "true", and the
// names openshift, kubernetes, kube and the prefixes openshift-, kubernetes-, kube-. Namespace
// labels and annotations are learned; a namespace never seen may have opted in, so by default
// (CLUSTER_RESOURCE_OVERRIDE_UNKNOWN_NAMESPACE=warn) its pods are left unchanged and the validating
// webhook warns, naming the sync; `=skip` leaves them unchanged without a word, `=reject` refuses as
// upstream refuses a namespace it cannot find.
//
// No value is set below the namespace's LimitRange minimums (the lowest Container `min` of cpu and
// of memory among its LimitRanges), as upstream: LimitRanges are learned as LimitRanger learns them
// (the plugin's learning webhook and `npm run sync`); a namespace with none learned has no floor.
// LimitRange defaults need nothing here: the apiserver's own LimitRanger applied them before any
// webhook was called.
//
// Served as a mutating webhook (upstream's Admit) and a validating twin (upstream's Validate: the
// final pod must hold exactly the values the mutation would set), on pod CREATE.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, patched, withWarnings } from '../../lib/admission/decision.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { openShiftConfig } from '../../lib/config/fields.js';
import type { LimitRange } from '../../lib/kube/limit-ranges.js';
import { limitRangeOf } from '../../lib/kube/limit-ranges.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import type { QuantityFormat } from '../../lib/kube/quantity.js';
import { Quantity } from '../../lib/kube/quantity.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';
import type { PluginState } from '../../lib/admission/ports.js';

const PLUGIN = 'autoscaling.openshift.io/ClusterResourceOverride';
const NAME = 'cluster-resource-override';
export const OPT_IN_LABEL = 'clusterresourceoverrides.admission.autoscaling.openshift.io/enabled';
export const PROJECT_ANNOTATION = 'autoscaling.openshift.io/cluster-resource-override-enabled';
const FORBIDDEN_NAMES = ['openshift', 'kubernetes', 'kube'];
const FORBIDDEN_PREFIXES = ['openshift-', 'kubernetes-', 'kube-'];

/** 1000 millicores per GiB. Exactly representable, as Go's constant is. */
const CPU_BASE_SCALE_FACTOR = 1000.0 / (1024.0 * 1024.0 * 1024.0);
const CPU_FLOOR = Quantity.parse('1m');
const MEM_FLOOR = Quantity.parse('1Mi');
const NANO = 10n ** 9n;
const NANO_PER_MILLI = 10n ** 6n;

export interface ClusterResourceOverrideConfig {
  /** False when the AdmissionConfiguration has no entry: OpenShift then disables the plugin. */
  readonly enabled: boolean;
  readonly limitCPUToMemoryRatio: number;
  readonly cpuRequestToLimitRatio: number;
  readonly memoryRequestToLimitRatio: number;
  readonly unknownNamespace: 'warn' | 'skip' | 'reject';
}

const PERCENT_FIELDS = ['limitCPUToMemoryPercent', 'cpuRequestToLimitPercent', 'memoryRequestToLimitPercent'] as const;

function configure(raw: unknown): ClusterResourceOverrideConfig {
  const unknownNamespace = unknownNamespaceRule(PLUGIN, NAME, ['warn', 'skip', 'reject'] as const, 'warn');
  const entry = openShiftConfig(
    PLUGIN,
    raw,
    'autoscaling.openshift.io/v1',
    'ClusterResourceOverrideConfig',
    PERCENT_FIELDS,
  );
  if (entry === undefined)
    return {
      enabled: false,
      limitCPUToMemoryRatio: 0,
      cpuRequestToLimitRatio: 0,
      memoryRequestToLimitRatio: 0,
      unknownNamespace,
    };
  const percent: Record<string, number> = {};
  for (const field of PERCENT_FIELDS) percent[field] = entry.integer(field, 0);
  // validation.Validate, in its order.
  if (PERCENT_FIELDS.every((f) => percent[f] === 0))
    throw entry.error('', 'Forbidden: plugin enabled but no percentages were specified');
  if (percent.limitCPUToMemoryPercent < 0)
    throw entry.error('limitCPUToMemoryPercent', `Invalid value: ${percent.limitCPUToMemoryPercent}: must be positive`);
  for (const field of ['cpuRequestToLimitPercent', 'memoryRequestToLimitPercent']) {
    if (percent[field] < 0 || percent[field] > 100)
      throw entry.error(field, `Invalid value: ${percent[field]}: must be between 0 and 100`);
  }
  return {
    enabled: true,
    limitCPUToMemoryRatio: percent.limitCPUToMemoryPercent / 100,
    cpuRequestToLimitRatio: percent.cpuRequestToLimitPercent / 100,
    memoryRequestToLimitRatio: percent.memoryRequestToLimitPercent / 100,
    unknownNamespace,
  };
}

type ResourceList = Record<string, string | number>;
interface Container {
  resources?: { limits?: ResourceList; requests?: ResourceList };
  [key: string]: unknown;
}
interface Pod extends KubeObject {
  spec?: { initContainers?: Container[]; containers?: Container[]; [key: string]: unknown };
}

function quantityOf(list: ResourceList | undefined, name: string): Quantity | undefined {
  const value = list?.[name];
  if (value === undefined || value === null) return undefined;
  try {
    return Quantity.parse(String(value));
  } catch {
    return undefined;
  }
}

const ceilDiv = (a: bigint, b: bigint) => (a % b === 0n ? a / b : a / b + (a > 0n ? 1n : 0n));
/** resource.Quantity.Value(): whole units, rounded up. */
const wholeUnitsOf = (q: Quantity) => ceilDiv(q.nano, NANO);
/** resource.Quantity.MilliValue(): thousandths, rounded up. */
const milliValueOf = (q: Quantity) => ceilDiv(q.nano, NANO_PER_MILLI);
/** Go's int64(float64): truncation toward zero. */
const truncToBigInt = (x: number) => BigInt(Math.trunc(x));
const atLeast = (q: Quantity, floor: Quantity) => (floor.cmp(q) > 0 ? floor : q);

/** The namespace's floors: the lowest Container minimum of each resource, when a LimitRange sets one. */
interface Floors {
  readonly cpu?: Quantity;
  readonly memory?: Quantity;
}

/** minResourceLimits: the lowest Container-type `min` of `resource` among the LimitRanges. */
function minResourceLimits(limitRanges: readonly LimitRange[], resource: 'cpu' | 'memory'): Quantity | undefined {
  let lowest: Quantity | undefined;
  for (const { limits } of limitRanges) {
    for (const item of limits) {
      const min = item.type === 'Container' ? quantityOf(item.min as ResourceList | undefined, resource) : undefined;
      if (min !== undefined && (lowest === undefined || min.cmp(lowest) < 0)) lowest = min;
    }
  }
  return lowest;
}

async function namespaceFloors(state: PluginState, namespace: string): Promise<Floors> {
  const learned = await state.learnedObjects.list('limitranges', namespace);
  const limitRanges = learned.map(({ name, object }) => limitRangeOf(name, object));
  return { cpu: minResourceLimits(limitRanges, 'cpu'), memory: minResourceLimits(limitRanges, 'memory') };
}

/** Upstream's "don't mutate resource requirements below the namespace limit minimums". */
const notBelow = (q: Quantity, floor: Quantity | undefined) => (floor !== undefined && q.cmp(floor) < 0 ? floor : q);

/** One value the plugin sets: where, and what. */
interface Override {
  readonly list: 'requests' | 'limits';
  readonly resource: 'memory' | 'cpu';
  readonly value: Quantity;
}

/** updateContainerResources: the values upstream sets on one container, in its order. */
function overridesFor(container: Container, config: ClusterResourceOverrideConfig, floors: Floors): Override[] {
  const overrides: Override[] = [];
  const limits = container.resources?.limits;
  const memLimit = quantityOf(limits, 'memory');
  if (memLimit !== undefined && config.memoryRequestToLimitRatio !== 0) {
    // Whole bytes, rounded down to the MiB (or MB for decimal limits) for ease of reading.
    let amount = (wholeUnitsOf(memLimit) * truncToBigInt(config.memoryRequestToLimitRatio * 100)) / 100n;
    const mod = memLimit.format === 'BinarySI' ? 1024n * 1024n : 1000n * 1000n;
    amount -= amount % mod;
    overrides.push({
      list: 'requests',
      resource: 'memory',
      value: notBelow(atLeast(Quantity.fromNano(amount * NANO, memLimit.format), MEM_FLOOR), floors.memory),
    });
  }
  let cpuLimit = quantityOf(limits, 'cpu');
  if (memLimit !== undefined && config.limitCPUToMemoryRatio !== 0) {
    const amount = Number(wholeUnitsOf(memLimit)) * config.limitCPUToMemoryRatio * CPU_BASE_SCALE_FACTOR;
    cpuLimit = notBelow(
      atLeast(Quantity.fromNano(truncToBigInt(amount) * NANO_PER_MILLI, 'DecimalSI'), CPU_FLOOR),
      floors.cpu,
    );
    overrides.push({ list: 'limits', resource: 'cpu', value: cpuLimit });
  }
  if (cpuLimit !== undefined && config.cpuRequestToLimitRatio !== 0) {
    const amount = Number(milliValueOf(cpuLimit)) * config.cpuRequestToLimitRatio;
    const format: QuantityFormat = cpuLimit.format;
    overrides.push({
      list: 'requests',
      resource: 'cpu',
      value: notBelow(
        atLeast(Quantity.fromNano(truncToBigInt(amount) * NANO_PER_MILLI, format), CPU_FLOOR),
        floors.cpu,
      ),
    });
  }
  return overrides;
}

const isExemptedNamespace = (name: string) =>
  FORBIDDEN_NAMES.includes(name) || FORBIDDEN_PREFIXES.some((p) => name.startsWith(p));

/**
 * The pod when the plugin applies to it, a refusal, `unknown` (a never-seen namespace under the
 * `warn` rule), or undefined to leave it alone.
 */
async function applicablePod(
  request: AdmissionRequest,
  config: ClusterResourceOverrideConfig,
  state: PluginState,
): Promise<{ pod: Pod; floors: Floors } | { decision: Decision } | { unknown: true } | undefined> {
  if (!config.enabled || request.operation !== 'CREATE' || !isMainResource(request, '', 'pods')) return undefined;
  const pod = request.object;
  if (!isObjectOfKind<Pod>(pod, 'Pod')) return undefined;
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined) {
    if (config.unknownNamespace === 'reject')
      return { decision: forbidden(request, [`namespace ${JSON.stringify(request.namespace)} not found`]) };
    return config.unknownNamespace === 'warn' ? { unknown: true } : undefined;
  }
  if (namespace.labels[OPT_IN_LABEL] !== 'true') return undefined;
  const projectEnabled = namespace.annotations[PROJECT_ANNOTATION];
  if (projectEnabled !== undefined && projectEnabled !== 'true') return undefined;
  if (isExemptedNamespace(namespace.name)) return undefined;
  return { pod, floors: await namespaceFloors(state, request.namespace) };
}

const CONTAINER_LISTS = ['initContainers', 'containers'] as const;
const POD_RULES = judgedResource(['CREATE'], '', 'pods', 'Namespaced').rules;

export default definePlugin<ClusterResourceOverrideConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: NAME,
    summary:
      'Overrides container requests (and the CPU limit) as ratios of the limits, in namespaces that opt in (OpenShift autoscaling.openshift.io/ClusterResourceOverride).',
    ...mutatingWithTwin(POD_RULES),
    writes: false,
    needs: ['namespaces', 'limitranges'],
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure,

  async admit(request, { config, state }) {
    const applicable = await applicablePod(request, config, state);
    // A never-seen namespace: the validating twin warns.
    if (applicable === undefined || 'unknown' in applicable) return allowed();
    if ('decision' in applicable) return applicable.decision;
    const { pod, floors } = applicable;
    const spec = { ...pod.spec };
    let changed = false;
    for (const list of CONTAINER_LISTS) {
      const containers = spec[list];
      if (!Array.isArray(containers)) continue;
      spec[list] = containers.map((container) => {
        let resources = container?.resources;
        for (const { list: which, resource, value } of overridesFor(container ?? {}, config, floors)) {
          const current = quantityOf(resources?.[which], resource);
          if (current !== undefined && current.cmp(value) === 0) continue;
          resources = { ...resources, [which]: { ...resources?.[which], [resource]: value.toString() } };
          changed = true;
        }
        return resources === container?.resources ? container : { ...container, resources };
      });
    }
    return changed ? patched({ ...pod, spec }) : allowed();
  },

  async validate(request, { config, state }) {
    const applicable = await applicablePod(request, config, state);
    // A namespace the mutation refused stays its refusal: the twin refuses only what it would fix.
    if (applicable === undefined || 'decision' in applicable) return allowed();
    if ('unknown' in applicable) {
      const consequence = 'whether it opted in to resource overrides is unknown and none were applied';
      return withWarnings(allowed(), neverSeenWarning(PLUGIN, request.namespace, consequence));
    }
    for (const list of CONTAINER_LISTS) {
      const containers = applicable.pod.spec?.[list];
      if (!Array.isArray(containers)) continue;
      for (let i = 0; i < containers.length; i++) {
        for (const { list: which, resource, value } of overridesFor(containers[i] ?? {}, config, applicable.floors)) {
          // applyQuantity(..., mutationAllowed=false): the first difference, as upstream.
          const current = quantityOf(containers[i]?.resources?.[which], resource);
          const problem =
            current === undefined
              ? `mutated, expected: ${value}, now absent`
              : current.cmp(value) !== 0
                ? `mutated, expected: ${value}, got ${current}`
                : undefined;
          if (problem !== undefined)
            return forbidden(request, [`spec.${list}[${i}].resources.${which}.${resource} ${problem}`]);
        }
      }
    }
    return allowed();
  },
});
