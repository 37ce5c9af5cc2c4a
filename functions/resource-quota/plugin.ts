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
import { ConfigFields } from '../../lib/config/fields.js';
import type { LimitedResource } from '../../lib/quota/check.js';
import { checkQuotas, judgeQueued } from '../../lib/quota/check.js';
import { CHARGED_RULES, quotaActionOf, RECORDED_RULES } from '../../lib/quota/requests.js';

const UPSTREAM_NAME = 'ResourceQuota';

export interface ResourceQuotaConfig {
  readonly limitedResources: readonly LimitedResource[];
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
    // A reservation under a burst queues behind the creates ahead of it (lib/state/quota-ledger.ts);
    // 5 s leaves room for a long queue.
    validating: { rules: CHARGED_RULES, observes: RECORDED_RULES, failurePolicy: 'Fail', timeoutSeconds: 5 },
    writes: true,
    ledgers: ['quotaLedger'],
    needs: ['resourcequotas'],
    systemNamespaces: 'exclude',
  },

  configure: (raw) => parseConfig(raw),

  async validate(request, { config, state }): Promise<Decision> {
    const ledger = state.quotaLedger;
    // A ResourceQuota write is not counted, so it is allowed below; lib learns the quota it states.
    const action = quotaActionOf(request);
    switch (action.kind) {
      case 'none':
        return allowed();
      case 'release':
        await ledger.release(action.object);
        return allowed();
      case 'confirm':
        // An update proves the object exists: its reservation is confirmed (or re-created).
        await ledger.confirm(action.object, action.charge);
        return allowed();
      case 'reserve': {
        const { object, charge, source } = action;
        const outcome = await ledger.reserve(
          object,
          charge,
          (snapshot) => checkQuotas(snapshot, source, charge, config.limitedResources, request.resource),
          (snapshot, queued) => judgeQueued(snapshot, queued, queued.object.resource, config.limitedResources),
        );
        return outcome.kind === 'refused' ? forbidden(request, [outcome.refusal]) : allowed();
      }
    }
  },
});
