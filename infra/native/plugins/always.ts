// AlwaysAdmit and AlwaysDeny (deprecated upstream) as ValidatingAdmissionPolicies over the same
// requests their webhooks see: everything (AlwaysAdmit, failing open) and every namespaced request
// (AlwaysDeny, with upstream's message).
import alwaysAdmitPlugin from '../../../functions/always-admit/plugin.js';
import alwaysDenyPlugin, { DENY_MESSAGE } from '../../../functions/always-deny/plugin.js';
import type { NativeCompiler } from '../policy.js';
import { webhookRules } from '../policy.js';

export const alwaysAdmit: NativeCompiler = {
  name: 'always-admit',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(alwaysAdmitPlugin, 'validating'),
        validations: [{ expression: 'true' }],
        failurePolicy: 'Ignore',
      },
    ],
  }),
};

export const alwaysDeny: NativeCompiler = {
  name: 'always-deny',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(alwaysDenyPlugin, 'validating'),
        validations: [{ expression: 'false', message: DENY_MESSAGE }],
      },
    ],
  }),
};
