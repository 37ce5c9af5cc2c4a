// quota.openshift.io/ClusterResourceQuota: one quota across many namespaces (a user's or a team's
// projects), so a tenant cannot escape a ResourceQuota by spreading over namespaces. Upstream:
// openshift/apiserver-library-go pkg/admission/quota/clusterresourcequota, which runs the
// ResourceQuota evaluator over each ClusterResourceQuota selecting the request's namespace, as if
// it were a ResourceQuota of that namespace whose status.used is the quota's status.total.
//
// Here, as for ResourceQuota, the counting is a side effect in our own ledger (lib/state
// clusterQuotaLedger): one ledger per ClusterResourceQuota, holding the charges of every
// namespace it selects, reserved at CREATE, confirmed by any later UPDATE, freed at DELETE and
// recounted by `npm run sync`. What an object consumes and whether it fits are lib/quota's, the
// ResourceQuota webhook's own (so are the messages: `exceeded quota: <name>, requested: ...`).
//
// Which quotas: ClusterResourceQuotas are learned from their writes (`needs:
// ['clusterresourcequotas']`) or loaded by `npm run sync`; none learned, nothing limits. A quota
// selects a namespace by spec.selector.labels and/or spec.selector.annotations, both when both are
// set (lib/quota/cluster-quota.ts), read from learned namespaces. A namespace never learned is
// charged to no quota, with a warning naming the sync (CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE=
// warn, the default) or silently (=skip), or its creates are refused with upstream's words for an
// unsynchronised cache (=reject); OpenShift waits for its namespace informer instead.
//
// A request selected by several quotas is reserved in each, in name order (upstream locks them in
// that order); when one refuses, the reservations already made are released. A namespace that is
// relabelled into a quota's selection brings its existing objects' usage only with `npm run sync`
// (OpenShift's quota controller recounts at once).
import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, withWarnings } from '../../lib/admission/decision.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import type { PluginState } from '../../lib/admission/ports.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isPlainObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { checkQuotas } from '../../lib/quota/check.js';
import type { ClusterQuota } from '../../lib/quota/cluster-quota.js';
import { clusterQuotaOf, selectsNamespace } from '../../lib/quota/cluster-quota.js';
import { CHARGED_RULES, quotaActionOf, RECORDED_RULES } from '../../lib/quota/requests.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';

const PLUGIN = 'quota.openshift.io/ClusterResourceQuota';
const NAME = 'cluster-resource-quota';

export interface ClusterResourceQuotaConfig {
  /**
   * A namespace never learned, whose labels decide which quotas select it: charged to none, with a
   * warning naming the sync (`warn`), or silently (`skip`), or its creates refused (`reject`).
   */
  readonly unknownNamespace: 'warn' | 'skip' | 'reject';
}

type Selection = { readonly quotas: readonly ClusterQuota[] } | { readonly unknownNamespace: true };

/** The learned ClusterResourceQuotas selecting the request's namespace, in name order. */
async function selectingQuotas(request: AdmissionRequest, state: PluginState): Promise<Selection> {
  const learned = await state.learnedObjects.list('clusterresourcequotas');
  // No quota learned: nothing limits, and the namespace need not be read.
  if (learned.length === 0) return { quotas: [] };
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined) return { unknownNamespace: true };
  const quotas = learned
    .map(({ object }) => clusterQuotaOf(object))
    .filter((quota) => quota.name !== '' && selectsNamespace(quota, namespace))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { quotas };
}

export default definePlugin<ClusterResourceQuotaConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: NAME,
    summary:
      'Counts pods, objects and compute requests and limits across every namespace a learned ClusterResourceQuota selects, refusing what would exceed it (OpenShift quota.openshift.io/ClusterResourceQuota).',
    // A reservation under a burst waits for the requests queued ahead; 5 s leaves room for that.
    validating: { rules: CHARGED_RULES, observes: RECORDED_RULES, failurePolicy: 'Fail', timeoutSeconds: 5 },
    writes: true,
    ledgers: ['clusterQuotaLedger'],
    needs: ['namespaces', 'clusterresourcequotas'],
    systemNamespaces: 'exclude',
    // An OpenShift API: a cluster without ClusterResourceQuotas gains nothing from the webhook.
    optIn: true,
    optInReason: 'an OpenShift API; it limits only by the quotas and usage it has learned',
  },

  configure(raw) {
    // OpenShift's plugin reads no configuration (its Register ignores the reader): a field here
    // is a mistake, most likely the unknown-namespace rule, which is an environment variable.
    if (raw !== undefined && raw !== null) {
      const [field] = isPlainObject(raw) ? Object.keys(raw) : ['configuration'];
      if (field !== undefined)
        throw new ConfigError(
          PLUGIN,
          field,
          `unknown field ${JSON.stringify(field)}; the plugin takes no configuration (a namespace never learned: env CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE)`,
        );
    }
    return { unknownNamespace: unknownNamespaceRule(PLUGIN, NAME, ['warn', 'skip', 'reject'] as const, 'warn') };
  },

  async validate(request, { config, state }): Promise<Decision> {
    // Cluster-scoped objects (Namespaces above all) are never counted: upstream skips them too.
    const action = quotaActionOf(request);
    if (action.kind === 'none' || request.namespace === '') return allowed();
    const selection = await selectingQuotas(request, state);
    if ('unknownNamespace' in selection) {
      if (action.kind !== 'reserve' || config.unknownNamespace === 'skip') return allowed();
      if (config.unknownNamespace === 'warn') {
        const consequence = 'no ClusterResourceQuota was charged for this object';
        return withWarnings(allowed(), neverSeenWarning(PLUGIN, request.namespace, consequence));
      }
      // admission.go's answer when its informers have not caught up: the namespace is not known yet.
      const name = action.source.metadata?.name ?? '';
      return forbidden(request, [`${request.namespace}-${name}: caches not synchronized`]);
    }
    const ledger = state.clusterQuotaLedger;
    switch (action.kind) {
      case 'release':
        for (const quota of selection.quotas) await ledger.release(quota.name, action.object);
        return allowed();
      case 'confirm':
        for (const quota of selection.quotas) await ledger.confirm(quota.name, action.object, action.charge);
        return allowed();
      case 'reserve': {
        const { object, charge, source } = action;
        const held: string[] = [];
        for (const quota of selection.quotas) {
          const outcome = await ledger.reserve(quota.name, object, charge, (charges) =>
            checkQuotas({ quotas: [quota.quota], charges }, source, charge, [], request.resource),
          );
          if (outcome.kind === 'refused') {
            // Refused by this quota: the object is not created, so the others must not count it.
            for (const name of held) await ledger.release(name, object);
            return forbidden(request, [outcome.refusal]);
          }
          if (outcome.kind === 'reserved' || outcome.kind === 'already-counted') held.push(quota.name);
        }
        return allowed();
      }
    }
  },
});
