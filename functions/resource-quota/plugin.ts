// ResourceQuota: caps what a namespace may consume (pods, object counts, CPU and memory requests
// and limits), so one tenant cannot exhaust a shared cluster. Upstream:
// staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota, which increments each quota's
// status.used at admission and leaves reconciliation to the quota controller.
//
// Here the counting is a side effect in our own ledger (lib/state quotaLedger), keyed by object
// identity: a charge per object, reserved at CREATE (expiring unless confirmed), confirmed by any
// later UPDATE of the object (the kubelet's status updates), freed at DELETE, recounted by
// `npm run sync`. ResourceQuotas are learned from their own writes (`needs: ['resourcequotas']`
// subscribes this webhook to them, and lib/state records them as it records namespaces); a quota
// never seen is not enforced until it is written or loaded by `npm run sync`.
// What an object consumes, which quotas match it and whether it fits are lib/quota's, shared with
// `npm run sync` as upstream shares pkg/quota/v1/evaluator/core; this file is the admission logic.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden } from '../../lib/admission/decision.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { qualifiedResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigFields } from '../../lib/config/fields.js';
import type { ChargedObject } from '../../lib/admission/ports.js';
import type { LimitedResource } from '../../lib/quota/check.js';
import { checkQuotas } from '../../lib/quota/check.js';
import { COUNTED, isCounted, usageOf } from '../../lib/quota/usage.js';

const UPSTREAM_NAME = 'ResourceQuota';

export interface ResourceQuotaConfig {
  readonly limitedResources: readonly LimitedResource[];
}

/** Only a CREATE can exceed a quota: the judging webhook sees creates alone, and fails closed. */
const RULES: WebhookRule[] = COUNTED.map(({ group, kinds }) => ({
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
const OBSERVES: WebhookRule[] = [
  ...COUNTED.map(({ group, kinds }) => ({
    operations: ['UPDATE', 'DELETE'] as const,
    apiGroups: [group],
    apiVersions: ['*'],
    resources: Object.keys(kinds),
    scope: 'Namespaced' as const,
  })),
  { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'], scope: 'Namespaced' },
];

function identity(request: AdmissionRequest, object: KubeObject | null): ChargedObject {
  const name = request.name || object?.metadata?.name || `generated:${request.uid}`;
  const uid = object?.metadata?.uid;
  return {
    namespace: request.namespace,
    resource: qualifiedResource(request.resource),
    name,
    ...(typeof uid === 'string' && uid !== '' && { uid }),
  };
}

function parseConfig(raw: unknown): ResourceQuotaConfig {
  const entry = ConfigFields.of(UPSTREAM_NAME, raw, 'a ResourceQuotaConfiguration object')
    .allow('apiVersion', 'kind', 'limitedResources')
    .typeMeta(undefined, ['ResourceQuotaConfiguration', 'Configuration']);
  return {
    limitedResources: entry.list('limitedResources').map((limited) => {
      limited.allow('apiGroup', 'resource', 'matchContains');
      return {
        apiGroup: limited.string('apiGroup') ?? '',
        resource: limited.string('resource', true),
        matchContains: limited.strings('matchContains'),
      };
    }),
  };
}

export default definePlugin<ResourceQuotaConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'resource-quota',
    summary:
      'Counts pods, objects and compute requests and limits per namespace against learned ResourceQuotas, refusing what would exceed them.',
    // A reservation under a burst retries its conditional write; 5 s leaves room for that.
    validating: { rules: RULES, observes: OBSERVES, failurePolicy: 'Fail', timeoutSeconds: 5 },
    writes: true,
    needs: ['resourcequotas'],
    systemNamespaces: 'exclude',
  },

  configure: (raw) => parseConfig(raw),

  async validate(request, { config, state }): Promise<Decision> {
    const ledger = state.quotaLedger;
    // A ResourceQuota write is not counted, so it is allowed below; lib learns the quota it states.
    const statusUpdate =
      request.subResource === 'status' &&
      request.operation === 'UPDATE' &&
      request.resource.group === '' &&
      request.resource.resource === 'pods';
    if (!isCounted(request.resource) || (request.subResource !== '' && !statusUpdate)) return allowed();

    if (request.operation === 'DELETE') {
      await ledger.release(identity(request, request.oldObject));
      return allowed();
    }
    if (request.object === null) return allowed();
    if (request.operation === 'UPDATE') {
      // An update proves the object exists: its reservation is confirmed (or re-created).
      await ledger.confirm(identity(request, request.object), usageOf(request.resource, request.object));
      return allowed();
    }
    if (request.operation !== 'CREATE') return allowed();

    const object = request.object;
    const charge = usageOf(request.resource, object);
    const outcome = await ledger.reserve(identity(request, object), charge, (snapshot) =>
      checkQuotas(snapshot, object, charge, config.limitedResources, request.resource),
    );
    return outcome.kind === 'refused' ? forbidden(request, [outcome.refusal]) : allowed();
  },
});
