// NamespaceLifecycle: a namespace being deleted must not gain new content (the namespace controller
// would be racing creates while it empties it), objects cannot be written into a namespace that
// does not exist, and the namespaces the cluster itself relies on cannot be deleted.
// Upstream: staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle.
//
// Upstream reads an informer cache and falls back to a live GET; a webhook has neither, so the
// namespaces come from our own Namespace webhook (learned state, lib/state) and `npm run sync`.
// A namespace never seen is admitted by default (NAMESPACE_LIFECYCLE_UNKNOWN_NAMESPACE=deny
// refuses it as upstream refuses a namespace that does not exist).

import { allowed, denied, forbidden, notFound } from '../../lib/admission/decision.js';
import type { Decision } from '../../lib/admission/decision.js';
import { definePlugin, LEARNING_TIMEOUT_SECONDS } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { unknownNamespaceRule } from '../../lib/state/never-seen.js';

const UPSTREAM_NAME = 'NamespaceLifecycle';
const NAME = 'namespace-lifecycle';

/** metav1.NamespaceDefault, NamespaceSystem, NamespacePublic: upstream's immortal namespaces. */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

export interface NamespaceLifecycleConfig {
  readonly unknownNamespace: 'allow' | 'deny';
}

const isNamespaceKind = (request: AdmissionRequest) => request.kind.group === '' && request.kind.kind === 'Namespace';

/** Access reviews are answered whatever the namespace: refusing them would leak its existence. */
const isAccessReview = (request: AdmissionRequest) =>
  request.resource.group === 'authorization.k8s.io' && request.resource.resource === 'localsubjectaccessreviews';

const namespaceNotFound = (name: string): Decision => notFound('namespaces', name);

/** admission.NewForbidden plus the NamespaceTerminating cause clients look for. */
function terminating(request: AdmissionRequest): Decision {
  const decision = forbidden(request, [
    `unable to create new content in namespace ${request.namespace} because it is being terminated`,
  ]);
  const cause = {
    reason: 'NamespaceTerminating',
    message: `namespace ${request.namespace} is being terminated`,
    field: 'metadata.namespace',
  };
  return { ...decision, status: { ...decision.status, details: { ...decision.status.details, causes: [cause] } } };
}

export default definePlugin<NamespaceLifecycleConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: NAME,
    summary:
      'Refuses new content in terminating or missing namespaces and the deletion of default, kube-system and kube-public.',
    validating: {
      rules: [
        {
          operations: ['CREATE', 'UPDATE'],
          apiGroups: ['*'],
          apiVersions: ['*'],
          resources: ['*'],
          scope: 'Namespaced',
        },
        { operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' },
      ],
      // Fails open, unlike our other validating webhooks: it sees every namespaced write of the
      // cluster, kube-system included (it must, to guard kube-system's deletion), so failing
      // closed would turn a Lambda outage into a cluster outage. The kube-apiserver enables its
      // own NamespaceLifecycle by default, managed clusters included; this webhook backs it up.
      failurePolicy: 'Ignore',
      // It sees every namespaced write: the shortest timeout that still lets a cold start through.
      timeoutSeconds: LEARNING_TIMEOUT_SECONDS,
    },
    // Learning is not a side effect of its own (`needs` covers it): sideEffects NoneOnDryRun where it learns.
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'include',
  },

  configure(): NamespaceLifecycleConfig {
    return { unknownNamespace: unknownNamespaceRule(UPSTREAM_NAME, NAME, ['allow', 'deny'] as const, 'allow') };
  },

  async validate(request, { config, state }) {
    if (request.operation === 'CONNECT') return allowed();
    if (request.operation === 'DELETE' && isNamespaceKind(request) && IMMORTAL_NAMESPACES.has(request.name)) {
      return denied(
        `namespaces ${JSON.stringify(request.name)} is forbidden: this namespace may not be deleted`,
        403,
        'Forbidden',
        { name: request.name, group: '', kind: 'namespaces' },
      );
    }
    // Cluster-scoped objects, namespaces themselves and deletions are always allowed.
    if (request.namespace === '' && !isNamespaceKind(request)) return allowed();
    if (isNamespaceKind(request) || request.operation === 'DELETE' || isAccessReview(request)) return allowed();

    const namespace = await state.learnedNamespaces.get(request.namespace);
    if (namespace === undefined) {
      if (await state.learnedNamespaces.knownAbsent(request.namespace)) return namespaceNotFound(request.namespace);
      return config.unknownNamespace === 'deny' ? namespaceNotFound(request.namespace) : allowed();
    }
    if (request.operation === 'CREATE' && namespace.phase === 'Terminating') return terminating(request);
    return allowed();
  },
});
