// ResourceQuota: caps what a namespace may consume (pods, object counts, CPU and memory requests
// and limits), so one tenant cannot exhaust a shared cluster. Upstream:
// staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota, which increments each quota's
// status.used at admission and leaves reconciliation to the quota controller.
//
// Here the counting is a side effect in our own ledger (lib/state quotaLedger), keyed by object
// identity: a charge per object, reserved at CREATE (expiring unless confirmed), confirmed by any
// later UPDATE of the object (the kubelet's status updates), freed at DELETE, recounted by
// `npm run sync`. ResourceQuotas are learned from their own writes (this webhook subscribes to
// them); a quota never seen is not enforced until it is written or loaded by `npm run sync`.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden } from '../../lib/admission/decision.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { qualifiedResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { rejectUnknownFields } from '../../lib/config/fields.js';
import { Quantity } from '../../lib/kube/quantity.js';
import { isExtendedResourceName } from '../../lib/kube/resources.js';
import type { Charge, ChargedObject, LearnedQuota, QuotaSnapshot } from '../../lib/admission/ports.js';

const UPSTREAM_NAME = 'ResourceQuota';

/** apiserver.config.k8s.io/v1 ResourceQuotaConfiguration's limitedResources. */
export interface LimitedResource {
  readonly apiGroup: string;
  readonly resource: string;
  readonly matchContains: readonly string[];
}

export interface ResourceQuotaConfig {
  readonly limitedResources: readonly LimitedResource[];
}

/** Core resources whose object count has a legacy quota name besides count/<resource>. */
const LEGACY_COUNTS = new Set(['pods', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas']);

/** The resources this webhook counts (its rules subscribe to their CREATE and DELETE). */
export const COUNTED: readonly { group: string; resources: readonly string[] }[] = [
  { group: '', resources: ['pods', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers'] },
  { group: 'apps', resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'] },
  { group: 'batch', resources: ['jobs', 'cronjobs'] },
];

/** Only a CREATE can exceed a quota: the judging webhook sees creates alone, and fails closed. */
const RULES: WebhookRule[] = COUNTED.map(({ group, resources }) => ({ operations: ['CREATE'] as const, apiGroups: [group], apiVersions: ['*'], resources: [...resources], scope: 'Namespaced' as const }));

/**
 * What the ledger only records, never refuses: an UPDATE confirms a reservation (the kubelet's
 * pod status updates above all), a DELETE releases a charge. These reach the plugin through its
 * fail-open learning webhook, so an outage never blocks an update or a delete (a release missed
 * then is corrected by `npm run sync`).
 */
const OBSERVES: WebhookRule[] = [
  ...COUNTED.map(({ group, resources }) => ({ operations: ['UPDATE', 'DELETE'] as const, apiGroups: [group], apiVersions: ['*'], resources: [...resources], scope: 'Namespaced' as const })),
  { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'], scope: 'Namespaced' },
];

type Resources = Record<string, string>;
interface ContainerLike {
  name?: string;
  resources?: { requests?: Resources; limits?: Resources };
}
interface PodLike extends KubeObject {
  spec?: { containers?: ContainerLike[]; initContainers?: ContainerLike[]; overhead?: Resources; activeDeadlineSeconds?: number; priorityClassName?: string };
  status?: { phase?: string };
}

/** What a pod must name for quotas that cap it (upstream's pod evaluator constraints). */
const COMPUTE = ['cpu', 'memory'] as const;
/** Charged as `<r>`, `requests.<r>` and `limits.<r>` (upstream's podComputeUsageHelper). */
const POD_COMPUTE_USAGE = ['cpu', 'memory', 'ephemeral-storage'] as const;
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

interface ClaimLike extends KubeObject {
  spec?: { storageClassName?: string; resources?: { requests?: Resources } };
  status?: { allocatedResources?: Resources };
}

/** upstream's pvcEvaluator.Usage: the claim, its storage, and both again under its class. */
function claimUsage(claim: ClaimLike, usage: Record<string, string>): void {
  // storagehelpers.GetPersistentVolumeClaimClass: the beta annotation wins over the field.
  const storageClass = claim.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? claim.spec?.storageClassName ?? '';
  if (storageClass !== '') usage[`${storageClass}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = '1';
  // The larger of what is requested and what a resize has already allocated.
  const candidates = [claim.spec?.resources?.requests?.storage, claim.status?.allocatedResources?.storage].filter((v): v is string => v !== undefined);
  if (candidates.length === 0) return;
  const storage = candidates.map((v) => Quantity.parse(String(v))).reduce((a, b) => (b.cmp(a) > 0 ? b : a));
  usage['requests.storage'] = storage.toString();
  if (storageClass !== '') usage[`${storageClass}${STORAGE_CLASS_SUFFIX}requests.storage`] = storage.toString();
}

function sumInto(target: Map<string, Quantity>, resources: Resources | undefined): void {
  for (const [name, value] of Object.entries(resources ?? {})) target.set(name, (target.get(name) ?? Quantity.zero()).add(Quantity.parse(String(value))));
}

/** resourcehelper.PodRequests/PodLimits: max(sum of containers, each init container) + overhead. */
function podResources(pod: PodLike, kind: 'requests' | 'limits'): Map<string, Quantity> {
  const total = new Map<string, Quantity>();
  for (const c of pod.spec?.containers ?? []) sumInto(total, c.resources?.[kind]);
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [name, value] of Object.entries(c.resources?.[kind] ?? {})) {
      const q = Quantity.parse(String(value));
      const current = total.get(name);
      if (current === undefined || q.cmp(current) > 0) total.set(name, q);
    }
  }
  if (pod.spec?.overhead) for (const [name, value] of Object.entries(pod.spec.overhead)) if (total.has(name)) total.set(name, total.get(name)!.add(Quantity.parse(String(value))));
  return total;
}

function isBestEffort(pod: PodLike): boolean {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return containers.every((c) => COMPUTE.every((r) => c.resources?.requests?.[r] === undefined && c.resources?.limits?.[r] === undefined));
}

/** What an object consumes (upstream's evaluators' Usage) and its scope facts. */
export function chargeOf(request: Pick<AdmissionRequest, 'resource'>, object: KubeObject): Charge {
  const resource = request.resource.resource;
  const group = request.resource.group;
  const usage: Record<string, string> = { [`count/${qualifiedResource({ group, resource })}`]: '1' };
  if (group === '' && LEGACY_COUNTS.has(resource)) usage[resource] = '1';
  if (group === '' && resource === 'persistentvolumeclaims') claimUsage(object as ClaimLike, usage);
  if (group !== '' || resource !== 'pods') return { usage, facts: {} };
  const pod = object as PodLike;
  // Pods in a terminal phase consume nothing (upstream's QuotaV1Pod).
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return { usage: {}, facts: { pod: true } };
  const requests = podResources(pod, 'requests');
  const limits = podResources(pod, 'limits');
  for (const r of POD_COMPUTE_USAGE) {
    if (requests.has(r)) usage[`requests.${r}`] = usage[r] = requests.get(r)!.toString();
    if (limits.has(r)) usage[`limits.${r}`] = limits.get(r)!.toString();
  }
  for (const [r, q] of requests) {
    if (r.startsWith('hugepages-')) usage[`requests.${r}`] = usage[r] = q.toString();
    // Extended resources are only quotable as requests.<name>.
    else if (isExtendedResourceName(r)) usage[`requests.${r}`] = q.toString();
  }
  const deadline = pod.spec?.activeDeadlineSeconds;
  return {
    usage,
    facts: { pod: true, terminating: typeof deadline === 'number' && deadline >= 0, bestEffort: isBestEffort(pod), priorityClass: pod.spec?.priorityClassName ?? '' },
  };
}

interface ScopeRequirement {
  scopeName?: string;
  operator?: string;
  values?: string[];
}

/** Upstream's pod evaluator Matches: every scope of the quota must hold for the object. */
export function quotaMatches(quota: LearnedQuota, facts: Charge['facts']): boolean {
  const selector = (quota.scopeSelector as { matchExpressions?: ScopeRequirement[] } | undefined)?.matchExpressions ?? [];
  const requirements: ScopeRequirement[] = [...quota.scopes.map((scopeName) => ({ scopeName, operator: 'Exists' })), ...selector];
  if (requirements.length === 0) return true;
  if (facts.pod !== true) return false;
  return requirements.every(({ scopeName, operator, values = [] }) => {
    switch (scopeName) {
      case 'Terminating':
        return facts.terminating === true;
      case 'NotTerminating':
        return facts.terminating !== true;
      case 'BestEffort':
        return facts.bestEffort === true;
      case 'NotBestEffort':
        return facts.bestEffort !== true;
      case 'PriorityClass': {
        const pc = String(facts.priorityClass ?? '');
        if (operator === 'Exists') return pc !== '';
        if (operator === 'DoesNotExist') return pc === '';
        if (operator === 'In') return values.includes(pc);
        if (operator === 'NotIn') return !values.includes(pc);
        return false;
      }
      default:
        return false;
    }
  });
}

const prettyPrint = (list: Map<string, Quantity>) =>
  [...list.keys()]
    .sort()
    .map((k) => `${k}=${list.get(k)!.toString()}`)
    .join(',');

/** Pods must name a request or limit for every compute resource a matching quota caps. */
function missingConstraints(quota: LearnedQuota, object: KubeObject, charge: Charge): string[] {
  if (charge.facts.pod !== true) return [];
  const pod = object as PodLike;
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const missing = new Set<string>();
  for (const key of Object.keys(quota.hard)) {
    const [kind, resource] = key.includes('.') ? (key.split('.') as [string, string]) : ['requests', key];
    if ((kind !== 'requests' && kind !== 'limits') || !COMPUTE.includes(resource as (typeof COMPUTE)[number])) continue;
    if (containers.some((c) => c.resources?.[kind]?.[resource] === undefined)) missing.add(key);
  }
  return [...missing].sort();
}

/** CheckRequest: the first quota the charge would exceed, as upstream words it. */
export function checkQuotas(snapshot: QuotaSnapshot, object: KubeObject, charge: Charge, config: ResourceQuotaConfig, resource: { group: string; resource: string }): string | undefined {
  const quotas = [...snapshot.quotas].sort((a, b) => a.name.localeCompare(b.name)).filter((q) => quotaMatches(q, charge.facts));
  for (const limited of config.limitedResources) {
    if (limited.apiGroup !== resource.group || limited.resource !== resource.resource) continue;
    const needed = Object.keys(charge.usage).filter((name) => limited.matchContains.some((m) => name.includes(m)));
    const uncovered = needed.filter((name) => !quotas.some((q) => name in q.hard));
    if (uncovered.length > 0) return `insufficient quota to consume: ${uncovered.sort().join(',')}`;
  }
  for (const quota of quotas) {
    const missing = missingConstraints(quota, object, charge);
    if (missing.length > 0) return `failed quota: ${quota.name}: must specify ${missing.join(',')}`;
    const requested = new Map<string, Quantity>();
    for (const [name, value] of Object.entries(charge.usage)) if (name in quota.hard) requested.set(name, Quantity.parse(value));
    if (requested.size === 0) continue;
    const used = new Map<string, Quantity>([...requested.keys()].map((k) => [k, Quantity.zero()]));
    for (const live of snapshot.charges) {
      if (!quotaMatches(quota, live.facts)) continue;
      for (const k of requested.keys()) if (live.usage[k] !== undefined) used.set(k, used.get(k)!.add(Quantity.parse(live.usage[k])));
    }
    const exceeded = [...requested.keys()].filter((k) => used.get(k)!.add(requested.get(k)!).cmp(Quantity.parse(quota.hard[k])) > 0);
    if (exceeded.length > 0) {
      const mask = (source: (k: string) => Quantity) => new Map(exceeded.map((k) => [k, source(k)]));
      return `exceeded quota: ${quota.name}, requested: ${prettyPrint(mask((k) => requested.get(k)!))}, used: ${prettyPrint(mask((k) => used.get(k)!))}, limited: ${prettyPrint(mask((k) => Quantity.parse(quota.hard[k])))}`;
    }
  }
  return undefined;
}

function isCounted(request: AdmissionRequest): boolean {
  return COUNTED.some(({ group, resources }) => group === request.resource.group && resources.includes(request.resource.resource));
}

function identity(request: AdmissionRequest, object: KubeObject | null): ChargedObject {
  const name = request.name || object?.metadata?.name || `generated:${request.uid}`;
  const uid = object?.metadata?.uid;
  return { namespace: request.namespace, resource: qualifiedResource(request.resource), name, ...(typeof uid === 'string' && uid !== '' && { uid }) };
}

function learnedQuota(object: KubeObject, namespace: string, name: string): LearnedQuota {
  const spec = (object.spec ?? {}) as { hard?: Record<string, unknown>; scopes?: unknown; scopeSelector?: unknown };
  const hard = Object.fromEntries(Object.entries(spec.hard ?? {}).map(([k, v]) => [k, String(v)]));
  return { namespace, name, hard, scopes: Array.isArray(spec.scopes) ? spec.scopes.map(String) : [], ...(spec.scopeSelector !== undefined && { scopeSelector: spec.scopeSelector }) };
}

function parseConfig(raw: unknown): ResourceQuotaConfig {
  if (raw === undefined || raw === null) return { limitedResources: [] };
  const where = (field: string, detail: string) => new ConfigError(UPSTREAM_NAME, field, detail);
  if (typeof raw !== 'object' || Array.isArray(raw)) throw where('', 'must be a ResourceQuotaConfiguration object');
  rejectUnknownFields(UPSTREAM_NAME, '', raw as Record<string, unknown>, ['apiVersion', 'kind', 'limitedResources']);
  const { kind, limitedResources = [] } = raw as { kind?: unknown; limitedResources?: unknown };
  if (kind !== undefined && kind !== 'ResourceQuotaConfiguration' && kind !== 'Configuration') throw where('kind', `must be ResourceQuotaConfiguration, got ${JSON.stringify(kind)}`);
  if (!Array.isArray(limitedResources)) throw where('limitedResources', 'must be a list');
  return {
    limitedResources: limitedResources.map((entry: unknown, i: number) => {
      const e = (entry ?? {}) as Record<string, unknown>;
      rejectUnknownFields(UPSTREAM_NAME, `limitedResources[${i}]`, e, ['apiGroup', 'resource', 'matchContains']);
      if (typeof e.resource !== 'string' || e.resource === '') throw where(`limitedResources[${i}].resource`, 'required');
      const matchContains = e.matchContains ?? [];
      if (!Array.isArray(matchContains) || matchContains.some((m) => typeof m !== 'string')) throw where(`limitedResources[${i}].matchContains`, 'must be a list of strings');
      return { apiGroup: typeof e.apiGroup === 'string' ? e.apiGroup : '', resource: e.resource, matchContains: matchContains as string[] };
    }),
  };
}

export default definePlugin({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'resource-quota',
    summary: 'Counts pods, objects and compute requests and limits per namespace against learned ResourceQuotas, refusing what would exceed them.',
    // A reservation under a burst retries its conditional write; 5 s leaves room for that.
    validating: { rules: RULES, observes: OBSERVES, failurePolicy: 'Fail', timeoutSeconds: 5 },
    writes: true,
    needs: ['resourcequotas'],
    systemNamespaces: 'exclude',
  },

  configure: (raw) => parseConfig(raw),

  async validate(request, { config, state }): Promise<Decision> {
    const ledger = state.quotaLedger;
    if (request.resource.group === '' && request.resource.resource === 'resourcequotas' && request.subResource === '') {
      if (request.operation === 'DELETE') await ledger.forgetQuota(request.namespace, request.name);
      else if (request.object && (request.operation === 'CREATE' || request.operation === 'UPDATE')) {
        await ledger.recordQuota(learnedQuota(request.object, request.namespace, request.name || request.object.metadata?.name || ''));
      }
      return allowed();
    }
    const statusUpdate = request.subResource === 'status' && request.operation === 'UPDATE' && request.resource.group === '' && request.resource.resource === 'pods';
    if (!isCounted(request) || (request.subResource !== '' && !statusUpdate)) return allowed();

    if (request.operation === 'DELETE') {
      await ledger.release(identity(request, request.oldObject));
      return allowed();
    }
    if (request.object === null) return allowed();
    if (request.operation === 'UPDATE') {
      // An update proves the object exists: its reservation is confirmed (or re-created).
      await ledger.confirm(identity(request, request.object), chargeOf(request, request.object));
      return allowed();
    }
    if (request.operation !== 'CREATE') return allowed();

    const object = request.object;
    const charge = chargeOf(request, object);
    const outcome = await ledger.reserve(identity(request, object), charge, (snapshot) => checkQuotas(snapshot, object, charge, config as ResourceQuotaConfig, request.resource));
    return outcome.kind === 'refused' ? forbidden(request, [outcome.refusal]) : allowed();
  },
});
