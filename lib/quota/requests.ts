// What a request means to a quota ledger, for the ResourceQuota and ClusterResourceQuota webhooks
// alike: the rules that send counted objects' writes, the identity a charge is keyed by, and
// whether a request reserves, confirms or releases a charge.
import type { WebhookRule } from '../admission/plugin.js';
import type { ChargedObject } from '../admission/ports.js';
import type { AdmissionRequest } from '../admission/request.js';
import { qualifiedResource } from '../admission/request.js';
import type { KubeObject } from '../admission/types.js';
import type { Usage } from './quota.js';
import { COUNTED, isCounted, usageOf } from './usage.js';

/** Only a CREATE can exceed a quota: the judging webhook sees creates alone, and fails closed. */
export const CHARGED_RULES: WebhookRule[] = COUNTED.map(({ group, kinds }) => ({
  operations: ['CREATE'] as const,
  apiGroups: [group],
  apiVersions: ['*'],
  resources: Object.keys(kinds),
  scope: 'Namespaced' as const,
}));

/**
 * What the ledger only records, never refuses: an UPDATE confirms a reservation (the kubelet's
 * pod status updates above all), a DELETE releases a charge. These reach the plugin through its
 * fail-open learning webhook, so an outage never blocks an update or a delete (a release missed
 * then is corrected by `npm run sync`).
 */
export const RECORDED_RULES: WebhookRule[] = [
  ...COUNTED.map(({ group, kinds }) => ({
    operations: ['UPDATE', 'DELETE'] as const,
    apiGroups: [group],
    apiVersions: ['*'],
    resources: Object.keys(kinds),
    scope: 'Namespaced' as const,
  })),
  { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'], scope: 'Namespaced' },
];

/** The identity a charge is keyed by: forged or repeated reviews of one object count once. */
export function chargedObjectOf(request: AdmissionRequest, object: KubeObject | null): ChargedObject {
  const name = request.name || object?.metadata?.name || `generated:${request.uid}`;
  const uid = object?.metadata?.uid;
  return {
    namespace: request.namespace,
    resource: qualifiedResource(request.resource),
    name,
    ...(typeof uid === 'string' && uid !== '' && { uid }),
  };
}

/** What a request does to the charges of its object. */
export type QuotaAction =
  | { readonly kind: 'none' }
  /** A DELETE: the charge stops counting. */
  | { readonly kind: 'release'; readonly object: ChargedObject }
  /** An UPDATE (or the kubelet's status update) proves the object exists: its charge is confirmed. */
  | { readonly kind: 'confirm'; readonly object: ChargedObject; readonly charge: Usage }
  /** A CREATE: the charge is checked against the quotas and reserved. */
  | { readonly kind: 'reserve'; readonly object: ChargedObject; readonly charge: Usage; readonly source: KubeObject };

export function quotaActionOf(request: AdmissionRequest): QuotaAction {
  const statusUpdate =
    request.subResource === 'status' &&
    request.operation === 'UPDATE' &&
    request.resource.group === '' &&
    request.resource.resource === 'pods';
  if (!isCounted(request.resource) || (request.subResource !== '' && !statusUpdate)) return { kind: 'none' };
  if (request.operation === 'DELETE') return { kind: 'release', object: chargedObjectOf(request, request.oldObject) };
  const object = request.object;
  if (object === null) return { kind: 'none' };
  const charge = usageOf(request.resource, object);
  if (request.operation === 'UPDATE') return { kind: 'confirm', object: chargedObjectOf(request, object), charge };
  if (request.operation !== 'CREATE') return { kind: 'none' };
  return { kind: 'reserve', object: chargedObjectOf(request, object), charge, source: object };
}
