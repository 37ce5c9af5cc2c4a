// Upstream's quota evaluators (pkg/quota/v1/evaluator/core): what an object of a counted resource
// consumes, which quota scopes it falls under, and what a pod must state for the quotas that cap
// it.
import { qualifiedResource } from '../admission/request.js';
import type { GroupVersionResource, KubeObject } from '../admission/types.js';
import { Quantity } from '../kube/quantity.js';
import { isExtendedResourceName } from '../kube/resources.js';
import type { Quota, ScopeFacts, Usage } from './quota.js';

/** The resources whose objects are counted, by API group, with their kinds (for listings). */
export const COUNTED: readonly { readonly group: string; readonly kinds: Readonly<Record<string, string>> }[] = [
  {
    group: '',
    kinds: {
      pods: 'Pod',
      services: 'Service',
      configmaps: 'ConfigMap',
      secrets: 'Secret',
      persistentvolumeclaims: 'PersistentVolumeClaim',
      replicationcontrollers: 'ReplicationController',
    },
  },
  {
    group: 'apps',
    kinds: {
      deployments: 'Deployment',
      replicasets: 'ReplicaSet',
      statefulsets: 'StatefulSet',
      daemonsets: 'DaemonSet',
    },
  },
  { group: 'batch', kinds: { jobs: 'Job', cronjobs: 'CronJob' } },
];

/** True when objects of `resource` are counted. */
export function isCounted(resource: Pick<GroupVersionResource, 'group' | 'resource'>): boolean {
  return COUNTED.some(({ group, kinds }) => group === resource.group && Object.hasOwn(kinds, resource.resource));
}

/** Core resources whose object count has a legacy quota name besides count/<resource>. */
const LEGACY_COUNTS = new Set([
  'pods',
  'services',
  'configmaps',
  'secrets',
  'persistentvolumeclaims',
  'replicationcontrollers',
  'resourcequotas',
]);

type Resources = Record<string, string>;
interface ContainerLike {
  name?: string;
  resources?: { requests?: Resources; limits?: Resources };
}
interface PodLike extends KubeObject {
  spec?: {
    containers?: ContainerLike[];
    initContainers?: ContainerLike[];
    overhead?: Resources;
    activeDeadlineSeconds?: number;
    priorityClassName?: string;
  };
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
  const storageClass =
    claim.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? claim.spec?.storageClassName ?? '';
  if (storageClass !== '') usage[`${storageClass}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = '1';
  // The larger of what is requested and what a resize has already allocated.
  const candidates = [claim.spec?.resources?.requests?.storage, claim.status?.allocatedResources?.storage].filter(
    (v): v is string => v !== undefined,
  );
  if (candidates.length === 0) return;
  const storage = candidates.map((v) => Quantity.parse(String(v))).reduce((a, b) => (b.cmp(a) > 0 ? b : a));
  usage['requests.storage'] = storage.toString();
  if (storageClass !== '') usage[`${storageClass}${STORAGE_CLASS_SUFFIX}requests.storage`] = storage.toString();
}

function sumInto(target: Map<string, Quantity>, resources: Resources | undefined): void {
  for (const [name, value] of Object.entries(resources ?? {}))
    target.set(name, (target.get(name) ?? Quantity.zero()).add(Quantity.parse(String(value))));
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
  if (pod.spec?.overhead)
    for (const [name, value] of Object.entries(pod.spec.overhead)) {
      const current = total.get(name);
      if (current !== undefined) total.set(name, current.add(Quantity.parse(String(value))));
    }
  return total;
}

function isBestEffort(pod: PodLike): boolean {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return containers.every((c) =>
    COMPUTE.every((r) => c.resources?.requests?.[r] === undefined && c.resources?.limits?.[r] === undefined),
  );
}

/** What an object of `resource` consumes (upstream's evaluators' Usage) and its scope facts. */
export function usageOf(resource: Pick<GroupVersionResource, 'group' | 'resource'>, object: KubeObject): Usage {
  const { group } = resource;
  const usage: Record<string, string> = { [`count/${qualifiedResource(resource)}`]: '1' };
  if (group === '' && LEGACY_COUNTS.has(resource.resource)) usage[resource.resource] = '1';
  if (group === '' && resource.resource === 'persistentvolumeclaims') claimUsage(object as ClaimLike, usage);
  if (group !== '' || resource.resource !== 'pods') return { usage, facts: {} };
  const pod = object as PodLike;
  // Pods in a terminal phase consume nothing (upstream's QuotaV1Pod).
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return { usage: {}, facts: { pod: true } };
  const requests = podResources(pod, 'requests');
  const limits = podResources(pod, 'limits');
  for (const r of POD_COMPUTE_USAGE) {
    const request = requests.get(r);
    const limit = limits.get(r);
    if (request !== undefined) usage[`requests.${r}`] = usage[r] = request.toString();
    if (limit !== undefined) usage[`limits.${r}`] = limit.toString();
  }
  for (const [r, q] of requests) {
    if (r.startsWith('hugepages-')) usage[`requests.${r}`] = usage[r] = q.toString();
    // Extended resources are only quotable as requests.<name>.
    else if (isExtendedResourceName(r)) usage[`requests.${r}`] = q.toString();
  }
  const deadline = pod.spec?.activeDeadlineSeconds;
  return {
    usage,
    facts: {
      pod: true,
      terminating: typeof deadline === 'number' && deadline >= 0,
      bestEffort: isBestEffort(pod),
      priorityClass: pod.spec?.priorityClassName ?? '',
    },
  };
}

interface ScopeRequirement {
  scopeName?: string;
  operator?: string;
  values?: string[];
}

/** Upstream's pod evaluator Matches: every scope of the quota must hold for the object. */
export function quotaMatches(quota: Pick<Quota, 'scopes' | 'scopeSelector'>, facts: ScopeFacts): boolean {
  const selector =
    (quota.scopeSelector as { matchExpressions?: ScopeRequirement[] } | undefined)?.matchExpressions ?? [];
  const requirements: ScopeRequirement[] = [
    ...quota.scopes.map((scopeName) => ({ scopeName, operator: 'Exists' })),
    ...selector,
  ];
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

/** Upstream's pod evaluator Constraints: the compute resources a matching quota caps that a container leaves unnamed. */
export function missingConstraints(quota: Pick<Quota, 'hard'>, object: KubeObject, usage: Usage): string[] {
  if (usage.facts.pod !== true) return [];
  const pod = object as PodLike;
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const missing = new Set<string>();
  for (const key of Object.keys(quota.hard)) {
    const constrained = computeConstraint(key);
    if (!constrained) continue;
    const [kind, resource] = constrained;
    if (containers.some((c) => c.resources?.[kind]?.[resource] === undefined)) missing.add(key);
  }
  return [...missing].sort();
}

/** A quota key that every container of a pod must state (`cpu`, `requests.memory`, `limits.cpu`...). */
function computeConstraint(key: string): ['requests' | 'limits', string] | undefined {
  const [kind, resource] = key.includes('.') ? (key.split('.') as [string, string]) : ['requests', key];
  if ((kind !== 'requests' && kind !== 'limits') || !COMPUTE.includes(resource as (typeof COMPUTE)[number]))
    return undefined;
  return [kind, resource];
}

/** Whether a quota capping `key` makes missingConstraints ask something of a pod. */
export const constrainsPods = (key: string): boolean => computeConstraint(key) !== undefined;
