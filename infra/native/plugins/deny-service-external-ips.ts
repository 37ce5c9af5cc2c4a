// DenyServiceExternalIPs as a ValidatingAdmissionPolicy: a Service may keep or drop the external
// IPs it had, never add one. CEL sees both the Service and the stored one (oldObject).
import plugin from '../../../functions/deny-service-external-ips/plugin.js';
import type { NativeCompiler } from '../policy.js';
import { webhookRules } from '../policy.js';

export const denyServiceExternalIps: NativeCompiler = {
  name: 'deny-service-external-ips',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(plugin, 'validating'),
        variables: [
          { name: 'externalIPs', expression: 'object.spec.?externalIPs.orValue([])' },
          { name: 'oldExternalIPs', expression: 'oldObject == null ? [] : oldObject.spec.?externalIPs.orValue([])' },
        ],
        validations: [
          {
            expression: 'variables.externalIPs.all(ip, ip in variables.oldExternalIPs)',
            message: 'Use of external IPs is denied by admission control',
          },
        ],
      },
    ],
  }),
};
