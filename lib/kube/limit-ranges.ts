// What a LimitRange asks of a pod or a claim, as upstream's limitranger computes it
// (plugin/pkg/admission/limitranger/admission.go): the Container defaults merged into containers
// with the `kubernetes.io/limit-ranger` annotation, and the min, max and maxLimitRequestRatio checks
// of Container, Pod and PersistentVolumeClaim items with upstream's messages. Pure functions over
// JSON objects; the LimitRanger plugin decides which LimitRanges apply.
import type { KubeObject } from '../admission/types.js';
import { isPlainObject } from '../admission/types.js';
import { Quantity } from './quantity.js';

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

export type LimitType = 'Container' | 'Pod' | 'PersistentVolumeClaim';
export const LIMIT_TYPES: readonly LimitType[] = ['Pod', 'Container', 'PersistentVolumeClaim'];

/** A ResourceList as JSON: resource name → quantity (a string on the wire). */
export type ResourceList = Record<string, unknown>;

/** One LimitRangeItem, as the LimitRange object spells it. */
export interface LimitRangeItem {
  readonly type?: unknown;
  readonly max?: ResourceList;
  readonly min?: ResourceList;
  readonly default?: ResourceList;
  readonly defaultRequest?: ResourceList;
  readonly maxLimitRequestRatio?: ResourceList;
}

/** What the plugin reads of a LimitRange: its name and spec.limits. */
export interface LimitRange {
  readonly name: string;
  readonly limits: readonly LimitRangeItem[];
}

export function limitRangeOf(name: string, object: KubeObject): LimitRange {
  const limits = (object.spec as { limits?: unknown } | undefined)?.limits;
  return { name, limits: Array.isArray(limits) ? limits.filter(isPlainObject) : [] };
}

interface Resources {
  limits?: ResourceList;
  requests?: ResourceList;
  [field: string]: unknown;
}
interface Container {
  name?: unknown;
  restartPolicy?: unknown;
  resources?: Resources;
  [field: string]: unknown;
}
interface PodSpec {
  containers?: unknown;
  initContainers?: unknown;
  resources?: Resources;
  [field: string]: unknown;
}

const listOf = (value: unknown): ResourceList => (isPlainObject(value) ? value : {});
const containersOf = (value: unknown): Container[] =>
  Array.isArray(value) ? value.map((c) => (isPlainObject(c) ? (c as Container) : {})) : [];
const sortedEntries = (list: ResourceList | undefined) =>
  Object.entries(listOf(list)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The quantities of a ResourceList; a value that does not parse (the apiserver validated it) is absent. */
type Quantities = Map<string, Quantity>;
function quantities(list: unknown): Quantities {
  const out: Quantities = new Map();
  for (const [name, value] of Object.entries(listOf(list))) {
    if (value === undefined || value === null) continue;
    try {
      out.set(name, Quantity.parse(String(value)));
    } catch {
      // not a quantity: nothing to compare
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Admit: defaults
// ---------------------------------------------------------------------------------------------

/** defaultContainerResourceRequirements: the Container items' defaultRequest and default (later items win). */
export function defaultContainerResourceRequirements(limitRange: LimitRange): {
  requests: Record<string, string>;
  limits: Record<string, string>;
} {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  for (const item of limitRange.limits) {
    if (item.type !== 'Container') continue;
    for (const [name, value] of Object.entries(listOf(item.defaultRequest))) requests[name] = String(value);
    for (const [name, value] of Object.entries(listOf(item.default))) limits[name] = String(value);
  }
  return { requests, limits };
}

/** mergeContainerResources: the defaults a container lacks, and the annotation's words for them. */
function mergeContainerResources(
  container: Container,
  defaults: ReturnType<typeof defaultContainerResourceRequirements>,
  prefix: string,
  annotations: string[],
): Container {
  const resources: Resources = isPlainObject(container.resources) ? container.resources : {};
  const merge = (kind: 'limits' | 'requests') => {
    const own = listOf(resources[kind]);
    const set = Object.keys(defaults[kind]).filter((name) => own[name] === undefined);
    return { set: set.sort(), list: { ...own, ...Object.fromEntries(set.map((n) => [n, defaults[kind][n]])) } };
  };
  const limits = merge('limits');
  const requests = merge('requests');
  const name = typeof container.name === 'string' ? container.name : '';
  if (requests.set.length > 0) annotations.push(`${requests.set.join(', ')} request for ${prefix} ${name}`);
  if (limits.set.length > 0) annotations.push(`${limits.set.join(', ')} limit for ${prefix} ${name}`);
  if (limits.set.length === 0 && requests.set.length === 0) return container;
  return {
    ...container,
    resources: {
      ...resources,
      ...(limits.set.length > 0 && { limits: limits.list }),
      ...(requests.set.length > 0 && { requests: requests.list }),
    },
  };
}

/**
 * PodMutateLimitFunc: containers and init containers get the defaults they lack; the annotation
 * says what was set ("LimitRanger plugin set: cpu, memory request for container nginx; ...").
 * Returns the pod itself when nothing was set.
 */
export function podMutateLimitFunc(limitRange: LimitRange, pod: KubeObject): KubeObject {
  const defaults = defaultContainerResourceRequirements(limitRange);
  const spec = (isPlainObject(pod.spec) ? pod.spec : {}) as PodSpec;
  const annotations: string[] = [];
  const merged = (list: unknown, prefix: string) =>
    Array.isArray(list)
      ? containersOf(list).map((c) => mergeContainerResources(c, defaults, prefix, annotations))
      : list;
  const containers = merged(spec.containers, 'container');
  const initContainers = merged(spec.initContainers, 'init container');
  if (annotations.length === 0) return pod;
  const metadata = pod.metadata ?? {};
  return {
    ...pod,
    metadata: {
      ...metadata,
      annotations: {
        ...(metadata.annotations ?? {}),
        [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${annotations.join('; ')}`,
      },
    },
    spec: {
      ...spec,
      ...(containers !== undefined && { containers }),
      ...(initContainers !== undefined && { initContainers }),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Validate: min, max, maxLimitRequestRatio
// ---------------------------------------------------------------------------------------------

const NANO = 10n ** 9n;
const NANO_PER_MILLI = 10n ** 6n;
const INT64_MAX = 2n ** 63n - 1n;
/** resource.MaxMilliValue: the largest value whose MilliValue() fits an int64. */
export const MAX_MILLI_VALUE = INT64_MAX / 1000n;

const ceilDiv = (a: bigint, b: bigint) => (a % b === 0n ? a / b : a / b + (a > 0n ? 1n : 0n));
const clamp = (v: bigint) => (v > INT64_MAX ? INT64_MAX : v < -INT64_MAX - 1n ? -INT64_MAX - 1n : v);
/** Quantity.Value(): whole units, rounded up. */
export const wholeValueOf = (q: Quantity | undefined) => clamp(ceilDiv(q?.nano ?? 0n, NANO));
/** Quantity.MilliValue(): thousandths, rounded up. */
export const milliValueOf = (q: Quantity | undefined) => clamp(ceilDiv(q?.nano ?? 0n, NANO_PER_MILLI));

/** requestLimitEnforcedValues: the three at a common precision (milli-units unless one would overflow). */
function requestLimitEnforcedValues(
  request?: Quantity,
  limit?: Quantity,
  enforced?: Quantity,
): [bigint, bigint, bigint] {
  const whole: [bigint, bigint, bigint] = [wholeValueOf(request), wholeValueOf(limit), wholeValueOf(enforced)];
  if (whole.every((v) => v <= MAX_MILLI_VALUE))
    return [milliValueOf(request), milliValueOf(limit), milliValueOf(enforced)];
  return whole;
}

type Constraint = (
  limitType: string,
  resource: string,
  enforced: Quantity,
  requests: Quantities,
  limits: Quantities,
) => string | undefined;

/** minConstraint */
const minConstraint: Constraint = (limitType, resource, enforced, requests, limits) => {
  const req = requests.get(resource);
  const lim = limits.get(resource);
  const [observedReq, observedLim, enforcedValue] = requestLimitEnforcedValues(req, lim, enforced);
  const at = `minimum ${resource} usage per ${limitType} is ${enforced}`;
  if (req === undefined) return `${at}.  No request is specified`;
  if (observedReq < enforcedValue) return `${at}, but request is ${req}`;
  if (lim !== undefined && observedLim < enforcedValue) return `${at}, but limit is ${lim}`;
  return undefined;
};

/** maxRequestConstraint: for PersistentVolumeClaims, whose limits are not user input. */
const maxRequestConstraint: Constraint = (limitType, resource, enforced, requests) => {
  const req = requests.get(resource);
  const [observedReq, , enforcedValue] = requestLimitEnforcedValues(req, undefined, enforced);
  const at = `maximum ${resource} usage per ${limitType} is ${enforced}`;
  if (req === undefined) return `${at}.  No request is specified`;
  if (observedReq > enforcedValue) return `${at}, but request is ${req}`;
  return undefined;
};

/** maxConstraint */
const maxConstraint: Constraint = (limitType, resource, enforced, requests, limits) => {
  const req = requests.get(resource);
  const lim = limits.get(resource);
  const [observedReq, observedLim, enforcedValue] = requestLimitEnforcedValues(req, lim, enforced);
  const at = `maximum ${resource} usage per ${limitType} is ${enforced}`;
  if (lim === undefined) return `${at}.  No limit is specified`;
  if (observedLim > enforcedValue) return `${at}, but limit is ${lim}`;
  if (req !== undefined && observedReq > enforcedValue) return `${at}, but request is ${req}`;
  return undefined;
};

/** limitRequestRatioConstraint: the ratio in float64, as upstream computes and prints it (%f). */
const limitRequestRatioConstraint: Constraint = (limitType, resource, enforced, requests, limits) => {
  const req = requests.get(resource);
  const lim = limits.get(resource);
  const [observedReq, observedLim] = requestLimitEnforcedValues(req, lim, enforced);
  const at = `${resource} max limit to request ratio per ${limitType} is ${enforced}`;
  if (req === undefined || observedReq === 0n) return `${at}, but no request is specified or request is 0`;
  if (lim === undefined || observedLim === 0n) return `${at}, but no limit is specified or limit is 0`;
  let observedRatio = Number(observedLim) / Number(observedReq);
  const displayObservedRatio = observedRatio;
  let maxLimitRequestRatio = Number(wholeValueOf(enforced));
  if (wholeValueOf(enforced) <= MAX_MILLI_VALUE) {
    observedRatio *= 1000;
    maxLimitRequestRatio = Number(milliValueOf(enforced));
  }
  if (observedRatio > maxLimitRequestRatio) return `${at}, but provided ratio is ${displayObservedRatio.toFixed(6)}`;
  return undefined;
};

/** Every violation of `constraint` for the resources of `list`, in the order of their names. */
function check(
  list: ResourceList | undefined,
  constraint: Constraint,
  limitType: LimitType,
  requests: Quantities,
  limits: Quantities,
  errors: string[],
): void {
  for (const [resource, enforced] of quantities(Object.fromEntries(sortedEntries(list)))) {
    const error = constraint(limitType, resource, enforced, requests, limits);
    if (error !== undefined) errors.push(error);
  }
}

/** A Container or Pod item: min, max, maxLimitRequestRatio over one set of requests and limits. */
function checkItem(
  item: LimitRangeItem,
  limitType: LimitType,
  requests: Quantities,
  limits: Quantities,
  errors: string[],
) {
  check(item.min, minConstraint, limitType, requests, limits, errors);
  check(item.max, maxConstraint, limitType, requests, limits, errors);
  check(item.maxLimitRequestRatio, limitRequestRatioConstraint, limitType, requests, limits, errors);
}

/** addResourceList */
function addResourceList(list: Quantities, added: Quantities): void {
  for (const [name, q] of added) list.set(name, list.get(name)?.add(q) ?? q);
}

/** maxResourceList */
function maxResourceList(list: Quantities, other: Quantities): void {
  for (const [name, q] of other) {
    const current = list.get(name);
    if (current === undefined || q.cmp(current) > 0) list.set(name, q);
  }
}

/** Resources a pod may set at pod level (PodLevelResources): they override the containers' sum. */
const POD_LEVEL_RESOURCES = new Set(['cpu', 'memory']);

/**
 * podRequests / podLimits: the containers' sum, and the init containers' largest (each plus the
 * restartable init containers before it; sidecars add to the sum), whichever is larger; a pod-level
 * value (spec.resources, which the apiserver keeps only with PodLevelResources on) overrides.
 */
export function podResources(pod: KubeObject, kind: 'requests' | 'limits'): Quantities {
  const spec = (isPlainObject(pod.spec) ? pod.spec : {}) as PodSpec;
  const total: Quantities = new Map();
  for (const container of containersOf(spec.containers))
    addResourceList(total, quantities(container.resources?.[kind]));
  const restartable: Quantities = new Map();
  const init: Quantities = new Map();
  for (const container of containersOf(spec.initContainers)) {
    const own = quantities(container.resources?.[kind]);
    let effective: Quantities;
    if (container.restartPolicy === 'Always') {
      addResourceList(total, own);
      addResourceList(restartable, own);
      effective = restartable;
    } else {
      effective = new Map();
      addResourceList(effective, own);
      addResourceList(effective, restartable);
    }
    maxResourceList(init, effective);
  }
  maxResourceList(total, init);
  for (const [name, q] of quantities(spec.resources?.[kind])) if (POD_LEVEL_RESOURCES.has(name)) total.set(name, q);
  return total;
}

/** PodValidateLimitFunc: every violation of the LimitRange's Container and Pod items. */
export function podValidateLimitFunc(limitRange: LimitRange, pod: KubeObject): string[] {
  const errors: string[] = [];
  const spec = (isPlainObject(pod.spec) ? pod.spec : {}) as PodSpec;
  for (const item of limitRange.limits) {
    if (item.type === 'Container') {
      for (const container of [...containersOf(spec.containers), ...containersOf(spec.initContainers)]) {
        const resources = container.resources ?? {};
        checkItem(item, 'Container', quantities(resources.requests), quantities(resources.limits), errors);
      }
    }
    if (item.type === 'Pod') {
      checkItem(item, 'Pod', podResources(pod, 'requests'), podResources(pod, 'limits'), errors);
    }
  }
  return errors;
}

/** PersistentVolumeClaimValidateLimitFunc: min and max of storage requests (claims' limits are not user input). */
export function persistentVolumeClaimValidateLimitFunc(limitRange: LimitRange, claim: KubeObject): string[] {
  const errors: string[] = [];
  const requests = quantities((claim.spec as { resources?: Resources } | undefined)?.resources?.requests);
  for (const item of limitRange.limits) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    check(item.min, minConstraint, 'PersistentVolumeClaim', requests, new Map(), errors);
    check(item.max, maxRequestConstraint, 'PersistentVolumeClaim', requests, new Map(), errors);
  }
  return errors;
}
