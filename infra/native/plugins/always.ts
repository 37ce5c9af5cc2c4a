// AlwaysAdmit and AlwaysDeny (deprecated upstream) as ValidatingAdmissionPolicies over the same
// requests their webhooks see: everything (AlwaysAdmit, failing open) and every namespaced request
// (AlwaysDeny, with upstream's message).
import { DENY_MESSAGE } from '../../../functions/always-deny/plugin.js';
import type { WebhookRule } from '../../../lib/admission/plugin.js';
import type { NativeCompiler } from '../policy.js';

const everything = (scope: WebhookRule['scope']): WebhookRule[] => [
  { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'], scope },
];

export const alwaysAdmit: NativeCompiler = {
  name: 'always-admit',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: everything('*'),
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
        rules: everything('Namespaced'),
        validations: [{ expression: 'false', message: DENY_MESSAGE }],
      },
    ],
  }),
};
