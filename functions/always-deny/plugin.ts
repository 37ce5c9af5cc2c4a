// AlwaysDeny (deprecated upstream since 1.13): refuses every request it sees. Useful to prove a
// pipeline enforces what a webhook answers (scope it with exemptions or a namespaceSelector).
// Upstream: plugin/pkg/admission/deny.

import { forbidden } from '../../lib/admission/decision.js';
import { definePlugin, validatingOnly } from '../../lib/admission/plugin.js';

/** Every operation on every resource and subresource, as upstream's handler (Create, Update, Delete, Connect). */
const EVERY_REQUEST = [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'], scope: '*' }] as const;

export const DENY_MESSAGE = 'admission control is denying all modifications';

export default definePlugin({
  metadata: {
    upstreamName: 'AlwaysDeny',
    name: 'always-deny',
    summary: 'Deprecated upstream: refuses every request (for testing a webhook pipeline).',
    ...validatingOnly(EVERY_REQUEST),
    writes: false,
    needs: [],
    // kube-system, kube-node-lease and our own namespace stay writable, so the cluster can recover.
    systemNamespaces: 'exclude',
  },

  validate(request) {
    // admission.NewForbidden(a, errors.New(...)), for Create, Update, Delete and Connect alike.
    return forbidden(request, [DENY_MESSAGE]);
  },
});
