// PodTolerationRestriction: taints keep workloads off nodes (dedicated tenants, special hardware),
// and a toleration is all it takes to get past one. In a shared cluster the operator, not the pod
// author, should decide which taints a namespace's pods may tolerate. This plugin gives each
// namespace default tolerations (merged into its new pods) and a whitelist (tolerations outside it
// are refused), through the namespace annotations `scheduler.alpha.kubernetes.io/defaultTolerations`
// and `scheduler.alpha.kubernetes.io/tolerationsWhitelist`, with cluster-wide fallbacks in the
// plugin's configuration. Upstream: plugin/pkg/admission/podtolerationrestriction.
//
// Served as a mutating webhook (upstream Admit: merge the defaults, add the memory-pressure
// toleration to pods that are not BestEffort, then check the whitelist) and a validating twin
// (upstream Validate: check the final pod against the whitelist once every mutation has run).
// Namespaces come from this plugin's own learning webhook (learned state) or `npm run sync`. A
// namespace never seen (created before installation and not yet synced) may carry annotations of
// its own, so neither the cluster's defaults nor its whitelist can be trusted for it: by default
// (POD_TOLERATION_RESTRICTION_UNKNOWN_NAMESPACE=warn) no default toleration is merged, no
// whitelist is checked (the memory-pressure toleration, which depends on the pod alone, is still
// added), and the validating webhook warns, naming the sync. `=default` treats the namespace as
// one without the annotations (the cluster's default and whitelist apply); `=reject` refuses as
// upstream refuses a namespace it cannot find.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, badRequest, denied, errored, notFound, patched, withWarnings } from '../../lib/admission/decision.js';
import { FieldPath } from '../../lib/admission/field.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { ConfigFields, validationError } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import type { Pod } from '../../lib/kube/pod.js';
import { Quantity } from '../../lib/kube/quantity.js';
import { equalTolerations, mergeTolerations, verifyAgainstWhitelist } from '../../lib/kube/toleration-sets.js';
import { validateTolerations } from '../../lib/kube/toleration-validation.js';
import type { Toleration } from '../../lib/kube/tolerations.js';
import { isToleration, tolerationsOf } from '../../lib/kube/tolerations.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';
import type { LearnedNamespace, PluginState } from '../../lib/admission/ports.js';

const UPSTREAM_NAME = 'PodTolerationRestriction';
const NAME = 'pod-toleration-restriction';
export const NS_DEFAULT_TOLERATIONS = 'scheduler.alpha.kubernetes.io/defaultTolerations';
export const NS_WHITELIST_TOLERATIONS = 'scheduler.alpha.kubernetes.io/tolerationsWhitelist';
const CONFIG_VERSIONS = [
  'podtolerationrestriction.admission.k8s.io/v1alpha1',
  'podtolerationrestriction.admission.k8s.io/v1',
];
const TOLERATION_FIELDS = ['key', 'operator', 'value', 'effect', 'tolerationSeconds'] as const;
const POD_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'pods', 'Namespaced');

/** Pods that request or limit any CPU or memory may be evicted under memory pressure last. */
const MEMORY_PRESSURE: Toleration = {
  key: 'node.kubernetes.io/memory-pressure',
  operator: 'Exists',
  effect: 'NoSchedule',
};

export interface PodTolerationRestrictionConfig {
  /** Configuration.default: merged into new pods of namespaces without their own defaults. */
  readonly default: readonly Toleration[];
  /** Configuration.whitelist: for namespaces without their own whitelist; empty allows any. */
  readonly whitelist: readonly Toleration[];
  readonly unknownNamespace: 'warn' | 'default' | 'reject';
}

/** A toleration decoded from JSON the way Go decodes a v1.Toleration: typed fields, others ignored. */
function decodeToleration(value: unknown, where: string): Toleration {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${where}: cannot unmarshal ${JSON.stringify(value)} into a Toleration`);
  const raw = value as Record<string, unknown>;
  const t: Toleration = {};
  for (const field of ['key', 'operator', 'value', 'effect'] as const) {
    const v = raw[field];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string')
      throw new Error(`${where}.${field}: cannot unmarshal ${JSON.stringify(v)} into a string`);
    t[field] = v;
  }
  const seconds = raw.tolerationSeconds;
  if (seconds !== undefined && seconds !== null) {
    if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds))
      throw new Error(`${where}.tolerationSeconds: cannot unmarshal ${JSON.stringify(seconds)} into an int64`);
    t.tolerationSeconds = seconds;
  }
  return t;
}

function decodeTolerations(value: unknown, where: string): Toleration[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value))
    throw new Error(`${where}: cannot unmarshal ${JSON.stringify(value)} into a list of tolerations`);
  return value.map((t, i) => decodeToleration(t, `${where}[${i}]`));
}

/**
 * extractNSTolerations: undefined when the namespace does not carry the annotation (fall back to
 * the cluster's), [] when it is set to "" (override the cluster's with nothing), else its list.
 */
function namespaceTolerations(namespace: LearnedNamespace | undefined, key: string): Toleration[] | undefined {
  const annotation = namespace?.annotations[key];
  if (annotation === undefined) return undefined;
  if (annotation === '') return [];
  return decodeTolerations(JSON.parse(annotation), key);
}

/** qos.ComputePodQOS: BestEffort when no container requests or limits any CPU or memory. */
export function isBestEffort(pod: Pod): boolean {
  const spec = pod.spec as
    | (Pod['spec'] & { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } })
    | undefined;
  const sets: (Record<string, unknown> | undefined)[] = [spec?.resources?.requests, spec?.resources?.limits];
  for (const containers of [spec?.containers, spec?.initContainers]) {
    if (!Array.isArray(containers)) continue;
    for (const c of containers)
      sets.push(
        c?.resources?.requests as Record<string, unknown> | undefined,
        c?.resources?.limits as Record<string, unknown> | undefined,
      );
  }
  for (const set of sets) {
    if (typeof set !== 'object' || set === null) continue;
    for (const name of ['cpu', 'memory']) {
      const quantity = set[name];
      if (typeof quantity !== 'string' && typeof quantity !== 'number') continue;
      try {
        if (Quantity.parse(String(quantity)).cmp(Quantity.zero()) > 0) return false;
      } catch {
        // An unparsable quantity is refused by validation after admission; it sets no QoS here.
      }
    }
  }
  return true;
}

const internal = (message: string) => errored(500, 'InternalError', `Internal error occurred: ${message}`);
const namespaceNotFound = (name: string) => notFound('namespaces', name);

/** A pod whose tolerations are not objects would not have decoded upstream: a bad request. */
const malformed = (tolerations: readonly unknown[]) =>
  tolerations.every(isToleration) ? undefined : badRequest('spec.tolerations: every toleration must be an object');

/** Upstream's shouldIgnore, plus its Handles: CREATE and UPDATE of pods proper. */
function shouldIgnore(request: AdmissionRequest): boolean {
  return POD_WRITES.ignore(request) || !isObjectOfKind<Pod>(request.object, 'Pod');
}

/** The learned namespace, upstream's refusal, or `unknown`: never seen, under the `warn` rule. */
type Lookup = { namespace: LearnedNamespace | undefined } | { decision: Decision } | { unknown: true };

async function lookupNamespace(
  request: AdmissionRequest,
  config: PodTolerationRestrictionConfig,
  state: PluginState,
): Promise<Lookup> {
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined && config.unknownNamespace === 'reject')
    return { decision: namespaceNotFound(request.namespace) };
  if (namespace === undefined && config.unknownNamespace === 'warn') return { unknown: true };
  return { namespace };
}

/** Upstream's Validate: the pod's tolerations must fall inside the namespace (or cluster) whitelist. */
async function checkWhitelist(
  request: AdmissionRequest,
  tolerations: readonly Toleration[],
  config: PodTolerationRestrictionConfig,
  state: PluginState,
  known?: Lookup,
): Promise<Decision> {
  if (tolerations.length === 0) return allowed();
  const lookup = known ?? (await lookupNamespace(request, config, state));
  if ('decision' in lookup) return lookup.decision;
  if ('unknown' in lookup) return allowed();
  let whitelist: readonly Toleration[] | undefined;
  try {
    whitelist = namespaceTolerations(lookup.namespace, NS_WHITELIST_TOLERATIONS);
  } catch (error) {
    return internal((error as Error).message);
  }
  const scope = whitelist === undefined ? 'cluster' : 'namespace';
  whitelist ??= config.whitelist;
  if (verifyAgainstWhitelist(tolerations, whitelist)) return allowed();
  return denied(
    `pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`,
    403,
    'Forbidden',
    {
      name: request.name || (request.object?.metadata?.name ?? ''),
      group: '',
      kind: 'pods',
    },
  );
}

/** A list of tolerations in the configuration: read strictly, then validated as upstream validates them. */
function configuredTolerations(entry: ConfigFields, field: 'default' | 'whitelist'): Toleration[] {
  const tolerations = entry.list(field).map((fields) => {
    fields.allow(...TOLERATION_FIELDS);
    const toleration: Toleration = {};
    for (const key of ['key', 'operator', 'value', 'effect'] as const) {
      const value = fields.string(key);
      if (value !== undefined) toleration[key] = value;
    }
    const seconds = fields.optionalInteger('tolerationSeconds');
    if (seconds !== undefined) toleration.tolerationSeconds = seconds;
    return toleration;
  });
  const invalid = validationError(UPSTREAM_NAME, validateTolerations(tolerations, FieldPath.of(field)));
  if (invalid) throw invalid;
  return tolerations;
}

function parseConfig(raw: unknown): Pick<PodTolerationRestrictionConfig, 'default' | 'whitelist'> {
  const entry = ConfigFields.of(UPSTREAM_NAME, raw, `a ${CONFIG_VERSIONS[0]} Configuration`)
    .typeMeta(CONFIG_VERSIONS, ['Configuration'])
    .allow('apiVersion', 'kind', 'default', 'whitelist');
  return { default: configuredTolerations(entry, 'default'), whitelist: configuredTolerations(entry, 'whitelist') };
}

export default definePlugin<PodTolerationRestrictionConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: NAME,
    summary:
      "Merges the namespace's default tolerations (or the cluster's) into new pods and refuses tolerations outside the namespace's whitelist.",
    ...mutatingWithTwin(POD_WRITES.rules),
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
  },

  configure(raw): PodTolerationRestrictionConfig {
    return {
      ...parseConfig(raw),
      unknownNamespace: unknownNamespaceRule(UPSTREAM_NAME, NAME, ['warn', 'default', 'reject'] as const, 'warn'),
    };
  },

  async admit(request, { config, state }) {
    if (shouldIgnore(request)) return allowed();
    const pod = request.object as Pod;
    const own = tolerationsOf(pod.spec);
    const bad = malformed(own);
    if (bad) return bad;
    let extra: Toleration[] = [];
    let lookup: Lookup | undefined;
    if (request.operation === 'CREATE') {
      lookup = await lookupNamespace(request, config, state);
      if ('decision' in lookup) return lookup.decision;
      if (!('unknown' in lookup)) {
        try {
          extra = [...(namespaceTolerations(lookup.namespace, NS_DEFAULT_TOLERATIONS) ?? config.default)];
        } catch (error) {
          return internal((error as Error).message);
        }
      }
    }
    if (!isBestEffort(pod)) extra.push(MEMORY_PRESSURE);
    const merged = extra.length > 0 ? mergeTolerations(own, extra) : own;
    const verdict = await checkWhitelist(request, merged, config, state, lookup);
    if (verdict.kind === 'denied') return verdict;
    const unchanged =
      merged.length === own.length && merged.every((t, i) => t === own[i] || equalTolerations(t, own[i]));
    if (unchanged) return allowed();
    // Only the changed path is new; everything else is shared with the object as received.
    return patched({
      ...pod,
      spec: { ...(pod.spec ?? {}), tolerations: merged.map((t) => ({ ...t })) } as Pod['spec'],
    });
  },

  async validate(request, { config, state }) {
    if (shouldIgnore(request)) return allowed();
    const tolerations = tolerationsOf((request.object as Pod).spec);
    const bad = malformed(tolerations);
    if (bad) return bad;
    // A create in a never-seen namespace is warned even without tolerations: its defaults were not merged.
    if (tolerations.length === 0 && request.operation !== 'CREATE') return allowed();
    const lookup = await lookupNamespace(request, config, state);
    if ('unknown' in lookup) {
      const consequence = 'its default tolerations and toleration whitelist were not applied';
      return withWarnings(allowed(), neverSeenWarning(UPSTREAM_NAME, request.namespace, consequence));
    }
    return checkWhitelist(request, tolerations, config, state, lookup);
  },
});
