// The Lambda entry of a stateful plugin: the lib's handler with the store's ports and the
// learning of namespaces, placements and quotas. Kept apart from lib/http so that stateless functions' bundles never import the AWS SDK.
import type { AnyAdmissionPlugin } from '../admission/plugin.js';
import { usesStore } from '../admission/plugin.js';
import type { AdmissionHandler, AdmissionHandlerOptions } from '../http/admission-handler.js';
import { createAdmissionHandler, packagedFleetHandler } from '../http/admission-handler.js';
import { pluginMetrics } from '../metrics/index.js';
import type { LearningState } from './index.js';
import {
  isNamespaceRequest,
  isPlacementRequest,
  isQuotaRequest,
  learnedObjectKindOf,
  learnedObjectKinds,
} from '../admission/learning.js';
import { stateFromEnv } from './index.js';

export function createStatefulAdmissionHandler<Config>(
  plugin: AnyAdmissionPlugin,
  options: AdmissionHandlerOptions<Config> = {},
): AdmissionHandler {
  // A packaged fleet: one handler per cluster, each over that cluster's partitions of the table.
  const fleet = packagedFleetHandler(plugin, options, (clusterOptions) =>
    createStatefulAdmissionHandler(plugin, clusterOptions),
  );
  if (fleet !== undefined) return fleet;
  const learnsNamespaces = plugin.metadata.needs.includes('namespaces');
  const learnsPlacements = plugin.metadata.needs.includes('placements');
  const learnsQuotas = plugin.metadata.needs.includes('resourcequotas');
  const learnedKinds = new Set(learnedObjectKinds(plugin.metadata));
  // One set of counters for the plugin's requests and its store calls.
  const metrics = options.metrics ?? pluginMetrics(plugin.metadata.name, undefined, options.callerAuth?.cluster);
  return createAdmissionHandler(plugin, {
    metrics,
    // A fleet's cluster (the one its callers are checked for) keeps its state apart from the others'.
    state: stateFromEnv(plugin.metadata.name, (call) => metrics.recordStoreCall(call), options.callerAuth?.cluster),
    // Learned namespaces and quotas: recorded once, for every plugin that needs them, from the
    // Namespace and ResourceQuota writes its own learning endpoint receives. A write the plugin
    // refuses never happens, so it teaches nothing; a dry run writes nothing (the gate in store.ts).
    observe: async (request, decision, state) => {
      if (learnsNamespaces && decision.kind !== 'denied' && isNamespaceRequest(request)) {
        await (state as LearningState).namespaceLearner.observe(request);
      }
      if (learnsQuotas && decision.kind !== 'denied' && isQuotaRequest(request)) {
        await (state as LearningState).quotaLearner.observe(request);
      }
      // The stored object teaches even when the write is refused (lib/state/placements).
      if (learnsPlacements && isPlacementRequest(request)) {
        await (state as LearningState).placementLearner.observe(request, decision.kind !== 'denied');
      }
      // Learned objects (StorageClasses, PriorityClasses...): as namespaces, only admitted writes.
      const kind = learnedObjectKindOf(request);
      if (kind && learnedKinds.has(kind) && decision.kind !== 'denied') {
        await (state as LearningState).objectLearner.observe(request);
      }
    },
    ...options,
  });
}

/** Any plugin's handler: stateful ones with the store, the others without (local server, bench). */
export function createPluginHandler<Config>(
  plugin: AnyAdmissionPlugin,
  options: AdmissionHandlerOptions<Config> = {},
): AdmissionHandler {
  const stateful = usesStore(plugin.metadata);
  return stateful ? createStatefulAdmissionHandler(plugin, options) : createAdmissionHandler(plugin, options);
}
