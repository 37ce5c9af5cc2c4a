// AlwaysDeny (deprecated upstream since 1.13): refuses every request it sees. Useful to prove a
// pipeline enforces what a webhook answers. Upstream: plugin/pkg/admission/deny.
//
// Upstream runs only when named in --enable-admission-plugins; here the counterpart is an
// AdmissionConfiguration entry (upstream's plugin takes no configuration, so it is empty):
//
//   - name: AlwaysDeny
//     configuration: {}
//
// Without the entry its webhook subscribes to nothing and admits (validatingRulesFor), so
// emitting and applying every plugin never stops the cluster's writes by accident. With it, scope
// the webhook with a staged rollout (`npm run emit -- --staged NAMESPACE`) or exemptions.

import { allowed, forbidden } from '../../lib/admission/decision.js';
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

export interface AlwaysDenyConfig {
  /** True when the AdmissionConfiguration has an entry: upstream's --enable-admission-plugins. */
  readonly enabled: boolean;
}

export default definePlugin<AlwaysDenyConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'always-deny',
    summary:
      'Deprecated upstream: refuses every request (for testing a webhook pipeline; enabled by its AdmissionConfiguration entry).',
    // The rules come from the configuration: validatingRulesFor.
    ...validatingOnly([]),
    writes: false,
    needs: [],
    // kube-system, kube-node-lease and our own namespace stay writable, so the cluster can recover.
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure(raw): AlwaysDenyConfig {
    if (raw === undefined || raw === null) return { enabled: false };
    ConfigFields.of(UPSTREAM_NAME, raw, '{} (the plugin takes no configuration)').allow();
    return { enabled: true };
  },

  validatingRulesFor: (config: AlwaysDenyConfig) => (config.enabled ? EVERY_REQUEST : []),

  validate(request, { config }) {
    if (!config.enabled) return allowed();
    // admission.NewForbidden(a, errors.New(...)), for Create, Update, Delete and Connect alike.
    return forbidden(request, [DENY_MESSAGE]);
  },
});
