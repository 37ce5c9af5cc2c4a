// AlwaysAdmit (deprecated upstream since 1.13): admits every request. Its only use is to prove a
// pipeline works end to end: that the apiserver reaches the webhook and accepts its answers.
// Upstream: plugin/pkg/admission/admit.
//
// Upstream runs only when named in --enable-admission-plugins; here the counterpart is an
// AdmissionConfiguration entry (upstream's plugin takes no configuration):
//
//   - name: AlwaysAdmit
//
// Without the entry it is not served, emitted or packaged (`optIn`), so emitting the default set
// never puts a webhook in front of every write of the cluster by accident.

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

export default definePlugin({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'always-admit',
    summary:
      'Deprecated upstream: admits every request (for testing a webhook pipeline; enabled by its AdmissionConfiguration entry).',
    validating: {
      rules: EVERY_REQUEST,
      // Its answer is always "allowed", which is what failing open gives too: an outage of this
      // webhook must not stop every write in the cluster.
      failurePolicy: 'Ignore',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
    },
    writes: false,
    needs: [],
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

  validate() {
    return allowed();
  },
});
