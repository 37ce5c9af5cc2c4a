// AlwaysDeny (deprecated upstream since 1.13): refuses every request it sees. Useful to prove a
// pipeline enforces what a webhook answers. Upstream: plugin/pkg/admission/deny.
//
// Upstream runs only when named in --enable-admission-plugins; here the counterpart is an
// AdmissionConfiguration entry (upstream's plugin takes no configuration):
//
//   - name: AlwaysDeny
//
// Without the entry it is not served, emitted or packaged (`optIn`), so emitting and applying
// the default set never stops the cluster's writes by accident. With it, scope the webhook with a
// staged rollout (`npm run emit -- --staged NAMESPACE`) or exemptions.

import { forbidden } from '../../lib/admission/decision.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import { definePlugin, validatingOnly } from '../../lib/admission/plugin.js';
import { ConfigFields } from '../../lib/config/fields.js';

const UPSTREAM_NAME = 'AlwaysDeny';
export const DENY_MESSAGE = 'admission control is denying all modifications';

// Every operation on every namespaced resource and subresource (`*/*`, which the apiserver refuses
// beside any other entry), as upstream's handler (Create, Update, Delete, Connect). Cluster-scoped
// objects are left out: a namespaceSelector (system namespaces, a staged rollout) cannot exclude
// them, and refusing Nodes' status updates or Lease renewals would take the cluster down, not test
// a pipeline.
const EVERY_REQUEST: readonly WebhookRule[] = [
  { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: 'Namespaced' },
];

export default definePlugin({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'always-deny',
    summary:
      'Deprecated upstream: refuses every request (for testing a webhook pipeline; enabled by its AdmissionConfiguration entry).',
    ...validatingOnly(EVERY_REQUEST),
    writes: false,
    needs: [],
    // kube-system, kube-node-lease and our own namespace stay writable, so the cluster can recover.
    systemNamespaces: 'exclude',
    // Off unless named, as upstream's plugin is until --enable-admission-plugins names it.
    optIn: true,
    optInReason: 'a test of the webhook pipeline, never wanted by accident',
  },

  configure(raw) {
    // Upstream's plugin takes no configuration: an entry may carry `{}` and nothing else.
    if (raw !== undefined && raw !== null)
      ConfigFields.of(UPSTREAM_NAME, raw, '{} (the plugin takes no configuration)').allow();
  },

  validate(request) {
    // admission.NewForbidden(a, errors.New(...)), for Create, Update, Delete and Connect alike.
    return forbidden(request, [DENY_MESSAGE]);
  },
});
