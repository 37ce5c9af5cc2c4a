// LimitPodHardAntiAffinityTopology as a ValidatingAdmissionPolicy: required pod anti-affinity
// only per node. The message names the first offending term's key, as upstream's does.
import plugin, { LABEL_HOSTNAME } from '../../../functions/limit-pod-hard-anti-affinity-topology/plugin.js';
import type { NativeCompiler } from '../policy.js';
import { webhookRules } from '../policy.js';

export const limitPodHardAntiAffinityTopology: NativeCompiler = {
  name: 'limit-pod-hard-anti-affinity-topology',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(plugin, 'validating'),
        variables: [
          {
            name: 'offending',
            expression: `object.spec.?affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([]).filter(term, term.?topologyKey.orValue('') != '${LABEL_HOSTNAME}')`,
          },
        ],
        validations: [
          {
            expression: 'size(variables.offending) == 0',
            messageExpression: `'affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ' + variables.offending[0].?topologyKey.orValue('') + ' but only key ${LABEL_HOSTNAME} is allowed'`,
          },
        ],
      },
    ],
    differences: ['a pod named only by generateName is named by that prefix in the message (upstream prints no name)'],
  }),
};
