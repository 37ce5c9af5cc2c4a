// LimitRanger: a namespace's LimitRanges give its containers default requests and limits, and
// bound what a container, a pod as a whole and a PersistentVolumeClaim may ask for, so that one
// workload cannot take a node (or a storage pool) from its neighbours. Upstream:
// plugin/pkg/admission/limitranger (the logic is lib/kube/limit-ranges.ts).
//
// Upstream lists the namespace's LimitRanges from an informer; here they are the LimitRanges this
// plugin's learning webhook saw written, and those `npm run sync` loaded from
// `kubectl get limitranges -A -o json`. A namespace with no learned LimitRange is what upstream
// sees in a namespace without one: nothing to default, nothing to refuse. So the plugin never
// refuses for lack of learning, and it is on by default, as upstream's is; until `npm run sync`
// has run, LimitRanges created before installation are simply not applied by this webhook (the
// apiserver's own LimitRanger, on by default on managed clusters, applies them anyway).
//
// Project extension (kubernetes#80537, #132320): `configuration.defaultLimitRange` is a LimitRange
// spec for the whole cluster, applied only in namespaces that have no learned LimitRange of their
// own. The apiserver's built-in LimitRanger runs before any webhook, so a namespace's own
// LimitRanges keep precedence there; this default fills in only what they left unset.
//
// Served as upstream's Admit (a mutating webhook that fails open) and Validate (a validating
// webhook that also fails open: the built-in LimitRanger still enforces namespace LimitRanges in
// an outage, and failing closed would put every pod and claim create behind this Lambda).

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, patched } from '../../lib/admission/decision.js';
import { aggregateMessage } from '../../lib/admission/field.js';
import type { PluginContext, WebhookRule } from '../../lib/admission/plugin.js';
import { definePlugin, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import type { ConfigFields } from '../../lib/config/fields.js';
import { ConfigFields as Fields, suggestion } from '../../lib/config/fields.js';
import type { LimitRange, LimitRangeItem, LimitType } from '../../lib/kube/limit-ranges.js';
import {
  LIMIT_TYPES,
  limitRangeOf,
  MAX_MILLI_VALUE,
  milliValueOf,
  wholeValueOf,
  persistentVolumeClaimValidateLimitFunc,
  podMutateLimitFunc,
  podValidateLimitFunc,
} from '../../lib/kube/limit-ranges.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import { Quantity, QuantityError } from '../../lib/kube/quantity.js';
import { isExtendedResourceName, isNativeResourceName, isQualifiedName } from '../../lib/kube/resources.js';

const PLUGIN = 'LimitRanger';
/** The name the cluster-wide default goes by (it is no object of the cluster). */
export const DEFAULT_LIMIT_RANGE_NAME = 'cluster-default';

export interface LimitRangerConfig {
  /** The cluster-wide default (`configuration.defaultLimitRange`), for namespaces with no learned LimitRange. */
  readonly defaultLimitRange?: LimitRange;
}

const rule = (operations: WebhookRule['operations'], resource: string): WebhookRule => ({
  operations,
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: [resource],
  scope: 'Namespaced',
});
// Upstream's handler takes CREATE and UPDATE; SupportsAttributes leaves out pod updates (their
// containers are immutable) except in-place resizes (pods/resize, kubernetes#128266), and every
// other subresource.
const POD_RULES = [rule(['CREATE'], 'pods'), rule(['UPDATE'], 'pods/resize')];
const CLAIM_RULES = [rule(['CREATE', 'UPDATE'], 'persistentvolumeclaims')];

/** SupportsAttributes and the handler's operations: what the request is about, or undefined to ignore it. */
function judged(request: AdmissionRequest): 'pods' | 'persistentvolumeclaims' | undefined {
  const { group, resource } = request.resource;
  if (group !== '' || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return undefined;
  if (resource === 'pods' && request.subResource === 'resize')
    return request.operation === 'UPDATE' ? 'pods' : undefined;
  if (request.subResource !== '') return undefined;
  if (resource === 'pods') return request.operation === 'CREATE' ? 'pods' : undefined;
  return resource === 'persistentvolumeclaims' ? resource : undefined;
}

const KIND = { pods: 'Pod', persistentvolumeclaims: 'PersistentVolumeClaim' } as const;

/** The request's object when the plugin judges it; undefined to allow untouched. */
function judgedObject(request: AdmissionRequest): { resource: keyof typeof KIND; object: KubeObject } | undefined {
  const resource = judged(request);
  if (resource === undefined || !isObjectOfKind(request.object, KIND[resource])) return undefined;
  // "ignore all objects marked for deletion"
  const old = request.oldObject?.metadata?.deletionTimestamp;
  if (old !== undefined && old !== null) return undefined;
  return { resource, object: request.object };
}

/** The namespace's learned LimitRanges (by name), else the cluster-wide default, else none. */
async function limitRangesFor(
  request: AdmissionRequest,
  { config, state }: PluginContext<LimitRangerConfig>,
): Promise<LimitRange[]> {
  const learned = await state.learnedObjects.list('limitranges', request.namespace);
  if (learned.length > 0) return learned.map(({ name, object }) => limitRangeOf(name, object));
  // A handler given no configuration at all (tests, benches) has no default either.
  const clusterDefault = (config as LimitRangerConfig | undefined)?.defaultLimitRange;
  return clusterDefault ? [clusterDefault] : [];
}

async function admit(request: AdmissionRequest, context: PluginContext<LimitRangerConfig>): Promise<Decision> {
  const judgedPod = judgedObject(request);
  if (judgedPod?.resource !== 'pods') return allowed();
  let pod = judgedPod.object;
  for (const limitRange of await limitRangesFor(request, context)) pod = podMutateLimitFunc(limitRange, pod);
  return pod === judgedPod.object ? allowed() : patched(pod);
}

async function validate(request: AdmissionRequest, context: PluginContext<LimitRangerConfig>): Promise<Decision> {
  const target = judgedObject(request);
  if (target === undefined) return allowed();
  const check = target.resource === 'pods' ? podValidateLimitFunc : persistentVolumeClaimValidateLimitFunc;
  // Upstream answers with the first LimitRange that is violated, every violation of it aggregated.
  for (const limitRange of await limitRangesFor(request, context)) {
    const errors = check(limitRange, target.object);
    if (errors.length > 0) return forbidden(request, [aggregateMessage(errors)]);
  }
  return allowed();
}

// ---------------------------------------------------------------------------------------------
// Configuration: the cluster-wide default LimitRange
// ---------------------------------------------------------------------------------------------

const ITEM_FIELDS = ['type', 'max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** Resource names a Pod or Container item may bound without a domain (helper.IsStandardContainerResourceName). */
const CONTAINER_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];

/**
 * validateLimitRangeResourceName: for Pod and Container items a container resource (cpu, memory,
 * ephemeral-storage, hugepages-*) or an extended one, so that a typo fails with the closest name;
 * for PersistentVolumeClaim items a qualified name (only `storage` bounds anything there).
 */
function checkResourceName(fields: ConfigFields, type: LimitType, at: string, name: string): void {
  const invalid = (why: string) => fields.error(at, `Invalid value: ${JSON.stringify(name)}: ${why}`);
  if (!isQualifiedName(name)) throw invalid('must be a qualified name');
  if (name.includes('/')) {
    if (!isNativeResourceName(name) && !isExtendedResourceName(name))
      throw invalid("doesn't follow extended resource name standard");
    return;
  }
  if (type === 'PersistentVolumeClaim' || CONTAINER_RESOURCES.includes(name) || name.startsWith('hugepages-')) return;
  throw invalid(`must be a standard resource for containers; ${suggestion(name, CONTAINER_RESOURCES)}`);
}

/** A ResourceList of the configuration: every name a resource, every value a quantity, kept in canonical form. */
function resourceList(fields: ConfigFields, key: string, type: LimitType): Record<string, string> | undefined {
  const raw = fields.child(key);
  if (raw === undefined) return undefined;
  const list: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw.value)) {
    checkResourceName(fields, type, `${key}.${name}`, name);
    if (typeof value !== 'string' && typeof value !== 'number')
      throw fields.error(`${key}.${name}`, `must be a quantity, got ${JSON.stringify(value)}`);
    let quantity: Quantity;
    try {
      quantity = Quantity.parse(String(value));
    } catch (error) {
      if (!(error instanceof QuantityError)) throw error;
      throw fields.error(`${key}.${name}`, `Invalid value: ${JSON.stringify(value)}: ${error.message}`);
    }
    if (quantity.cmp(Quantity.zero()) < 0)
      throw fields.error(
        `${key}.${name}`,
        `Invalid value: ${JSON.stringify(value)}: must be greater than or equal to 0`,
      );
    list[name] = quantity.toString();
  }
  return list;
}

type Lists = Partial<Record<Exclude<(typeof ITEM_FIELDS)[number], 'type'>, Record<string, string>>>;

/**
 * The pairs ValidateLimitRange orders, in its words: the lower list, the higher list, the list the
 * error names and the list whose value it shows, and how it reads.
 */
const ORDERED: readonly [keyof Lists, keyof Lists, keyof Lists, keyof Lists, (low: string, high: string) => string][] =
  [
    ['min', 'max', 'min', 'min', (l, h) => `min value ${l} is greater than max value ${h}`],
    [
      'min',
      'defaultRequest',
      'defaultRequest',
      'defaultRequest',
      (l, h) => `min value ${l} is greater than default request value ${h}`,
    ],
    [
      'defaultRequest',
      'max',
      'defaultRequest',
      'defaultRequest',
      (l, h) => `default request value ${l} is greater than max value ${h}`,
    ],
    [
      'defaultRequest',
      'default',
      'defaultRequest',
      'defaultRequest',
      (l, h) => `default request value ${l} is greater than default limit value ${h}`,
    ],
    ['min', 'default', 'default', 'min', (l, h) => `min value ${l} is greater than default value ${h}`],
    ['default', 'max', 'default', 'max', (l, h) => `default value ${l} is greater than max value ${h}`],
  ];

/** ValidateLimitRange's checks between an item's lists, resource by resource, in its words. */
function checkItemConsistency(type: LimitType, lists: Lists, fields: ConfigFields): void {
  if (type === 'PersistentVolumeClaim' && lists.min?.storage === undefined && lists.max?.storage === undefined)
    throw fields.error(
      'limits',
      'Required value: either minimum or maximum storage value is required, but neither was provided',
    );
  const names = new Set(Object.values(lists).flatMap((list) => Object.keys(list ?? {})));
  for (const name of [...names].sort()) {
    const at = (list: keyof Lists) => lists[list]?.[name];
    for (const [low, high, named, shown, words] of ORDERED) {
      const [l, h] = [at(low), at(high)];
      if (l !== undefined && h !== undefined && Quantity.parse(l).cmp(Quantity.parse(h)) > 0)
        throw fields.error(`${named}.${name}`, `Invalid value: ${JSON.stringify(at(shown))}: ${words(l, h)}`);
    }
    const ratio = at('maxLimitRequestRatio');
    if (ratio === undefined) continue;
    const invalidRatio = (words: string) =>
      fields.error(`maxLimitRequestRatio.${name}`, `Invalid value: ${JSON.stringify(ratio)}: ${words}`);
    if (Quantity.parse(ratio).cmp(Quantity.parse('1')) < 0) throw invalidRatio(`ratio ${ratio} is less than 1`);
    const [min, max] = [at('min'), at('max')];
    if (min === undefined || max === undefined) continue;
    // float64 arithmetic at milli precision where nothing overflows, as upstream's.
    const [r, lo, hi] = [ratio, min, max].map((q) => Quantity.parse(q));
    const milli = [r, lo, hi].every((q) => wholeValueOf(q) < MAX_MILLI_VALUE);
    const value = milli ? milliValueOf : wholeValueOf;
    const ratioValue = Number(value(r)) / (milli ? 1000 : 1);
    const limit = Number(value(hi)) / Number(value(lo));
    if (ratioValue > limit) throw invalidRatio(`ratio ${ratio} is greater than max/min = ${limit.toFixed(6)}`);
  }
  for (const name of [...names].sort()) {
    const [def, defReq] = [lists.default?.[name], lists.defaultRequest?.[name]];
    const overcommit = isNativeResourceName(name) && !name.startsWith('hugepages-');
    if (
      !overcommit &&
      def !== undefined &&
      defReq !== undefined &&
      Quantity.parse(def).cmp(Quantity.parse(defReq)) !== 0
    )
      throw fields.error(
        `defaultRequest.${name}`,
        `Invalid value: ${JSON.stringify(defReq)}: default value ${def} must equal to defaultRequest value ${defReq} in ${name}`,
      );
  }
}

function limitRangeItem(fields: ConfigFields): LimitRangeItem {
  fields.allow(...ITEM_FIELDS);
  const type = fields.string('type', true) as LimitType;
  if (!LIMIT_TYPES.includes(type)) {
    const supported = LIMIT_TYPES.map((t) => JSON.stringify(t)).join(', ');
    throw fields.error('type', `Unsupported value: ${JSON.stringify(type)}: supported values: ${supported}`);
  }
  const lists: Lists = {};
  for (const field of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const) {
    const list = resourceList(fields, field, type);
    if (list !== undefined) lists[field] = list;
  }
  if (type === 'Pod') {
    for (const field of ['default', 'defaultRequest'] as const) {
      if (Object.keys(lists[field] ?? {}).length > 0)
        throw fields.error(field, "Forbidden: may not be specified when `type` is 'Pod'");
    }
  }
  checkItemConsistency(type, lists, fields);
  return { type, ...lists };
}

function configure(raw: unknown): LimitRangerConfig {
  const fields = Fields.of(PLUGIN, raw).allow('defaultLimitRange');
  const spec = fields.child('defaultLimitRange');
  if (spec === undefined) return {};
  spec.allow('limits');
  const limits = spec.list('limits').map(limitRangeItem);
  if (limits.length === 0) throw new ConfigError(PLUGIN, spec.at('limits'), 'Required value: at least one item');
  return { defaultLimitRange: { name: DEFAULT_LIMIT_RANGE_NAME, limits } };
}

export default definePlugin<LimitRangerConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: 'limit-ranger',
    summary:
      "Defaults containers' requests and limits and bounds pods' and claims' resources by the namespace's LimitRanges (learned), or a cluster-wide default.",
    ...mutatingWithTwin(POD_RULES, { twinFailurePolicy: 'Ignore', twinRules: [...POD_RULES, ...CLAIM_RULES] }),
    writes: false,
    needs: ['limitranges'],
    systemNamespaces: 'exclude',
  },
  configure,
  admit,
  validate,
});
