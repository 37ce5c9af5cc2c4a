// NamespaceExists: refuses every write into a namespace that does not exist, for clusters that want
// namespaces declared before anything is put in them (NamespaceLifecycle, on by default, refuses
// only creates; this plugin refuses updates and deletes too).
// Upstream: plugin/pkg/admission/namespace/exists.
//
// Upstream reads an informer cache and falls back to a live GET; a webhook has neither, so the
// namespaces come from the plugin's own Namespace webhook (learned state, lib/state) and from
// `npm run sync`. A namespace known to be gone (its final DELETE seen, or absent from a complete
// listing loaded by sync) gets upstream's NotFound. One never seen may well exist (created before
// installation, not yet synced): by default (NAMESPACE_EXISTS_UNKNOWN_NAMESPACE=warn) the write is
// admitted with a warning naming the sync, since a refusal there could be wrong. `=deny` refuses
// every never-seen namespace, for clusters synced before enabling it; `=allow` admits without
// the warning (NamespaceLifecycle's rule).

import { allowed, notFound, withWarnings } from '../../lib/admission/decision.js';
import { LEARNING_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';

const UPSTREAM_NAME = 'NamespaceExists';
const NAME = 'namespace-exists';

export interface NamespaceExistsConfig {
  readonly unknownNamespace: 'warn' | 'allow' | 'deny';
}

export default definePlugin<NamespaceExistsConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: NAME,
    summary: 'Refuses writes into namespaces that do not exist (learned namespaces, loaded by `npm run sync`).',
    validating: {
      // Upstream's handler: Create, Update, Delete (not Connect), every namespaced resource and
      // subresource: `*/*` alone, as the apiserver refuses it beside any other entry.
      rules: [
        {
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          apiGroups: ['*'],
          apiVersions: ['*'],
          resources: ['*/*'],
          scope: 'Namespaced',
        },
      ],
      // Fails open, as NamespaceLifecycle: it sees every namespaced write of the cluster, so
      // failing closed would turn a Lambda outage into a cluster outage. The apiserver's own
      // NamespaceLifecycle (on by default) still refuses creates in missing namespaces meanwhile.
      failurePolicy: 'Ignore',
      // It sees every namespaced write: the shortest timeout that still lets a cold start through.
      timeoutSeconds: LEARNING_TIMEOUT_SECONDS,
    },
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
    // Upstream's plugin is off by default too; it answers from learned namespaces.
    optIn: true,
  },

  configure(): NamespaceExistsConfig {
    return {
      unknownNamespace: unknownNamespaceRule(UPSTREAM_NAME, NAME, ['warn', 'allow', 'deny'] as const, 'warn'),
    };
  },

  async validate(request, { config, state }) {
    // A non-empty namespace means a namespaced resource; Namespaces themselves are never refused.
    if (request.operation === 'CONNECT' || request.namespace === '') return allowed();
    if (request.kind.group === '' && request.kind.kind === 'Namespace') return allowed();
    if ((await state.learnedNamespaces.get(request.namespace)) !== undefined) return allowed();
    const refuse = config.unknownNamespace === 'deny' || (await state.learnedNamespaces.knownAbsent(request.namespace));
    // The live GET's apierrors.NewNotFound, returned as is.
    if (refuse) return notFound('namespaces', request.namespace);
    if (config.unknownNamespace === 'allow') return allowed();
    return withWarnings(allowed(), neverSeenWarning(UPSTREAM_NAME, request.namespace, 'its existence was not checked'));
  },
});
