// AlwaysAdmit (deprecated upstream since 1.13): admits every request. Its only use is to prove a
// pipeline works end to end: that the apiserver reaches the webhook and accepts its answers.
// Upstream: plugin/pkg/admission/admit.
//
// Upstream runs only when named in --enable-admission-plugins; here the counterpart is an
// AdmissionConfiguration entry (upstream's plugin takes no configuration, so it is empty):
//
//   - name: AlwaysAdmit
//     configuration: {}
//
// Without the entry its webhook subscribes to nothing (validatingRulesFor), so emitting every
// plugin never puts a webhook in front of every write of the cluster by accident.

import { allowed } from '../../lib/admission/decision.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import { ConfigFields } from '../../lib/config/fields.js';

const UPSTREAM_NAME = 'AlwaysAdmit';

// Every operation on every resource and subresource, as upstream's handler (Create, Update, Delete,
// Connect). `*/*` matches resources and subresources alike, and the apiserver refuses it beside any
// other entry.
const EVERY_REQUEST: readonly WebhookRule[] = [
  { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' },
];

export interface AlwaysAdmitConfig {
  /** True when the AdmissionConfiguration has an entry: upstream's --enable-admission-plugins. */
  readonly enabled: boolean;
}

export default definePlugin({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'always-admit',
    summary:
      'Deprecated upstream: admits every request (for testing a webhook pipeline; enabled by its AdmissionConfiguration entry).',
    validating: {
      // The rules come from the configuration: validatingRulesFor.
      rules: [],
      // Its answer is always "allowed", which is what failing open gives too: an outage of this
      // webhook must not stop every write in the cluster.
      failurePolicy: 'Ignore',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
    },
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure(raw): AlwaysAdmitConfig {
    if (raw === undefined || raw === null) return { enabled: false };
    ConfigFields.of(UPSTREAM_NAME, raw, '{} (the plugin takes no configuration)').allow();
    return { enabled: true };
  },

  validatingRulesFor: (config: AlwaysAdmitConfig) => (config.enabled ? EVERY_REQUEST : []),

  validate() {
    return allowed();
  },
});
