// AlwaysAdmit (deprecated upstream since 1.13): admits every request. Its only use is to prove a
// pipeline works end to end: that the apiserver reaches the webhook and accepts its answers.
// Upstream: plugin/pkg/admission/admit.

import { allowed } from '../../lib/admission/decision.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';

/** Every operation on every resource and subresource, as upstream's handler (Create, Update, Delete, Connect). */
const EVERY_REQUEST = [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'], scope: '*' }] as const;

export default definePlugin({
  metadata: {
    upstreamName: 'AlwaysAdmit',
    name: 'always-admit',
    summary: 'Deprecated upstream: admits every request (for testing a webhook pipeline).',
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
  },

  validate() {
    return allowed();
  },
});
