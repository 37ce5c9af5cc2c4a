// LimitPodHardAntiAffinityTopology as a ValidatingAdmissionPolicy: required pod anti-affinity
// only per node. The message names the first offending term's key, as upstream's does.
import type { NativeCompiler } from '../policy.js';

const HOSTNAME = 'kubernetes.io/hostname';

export const limitPodHardAntiAffinityTopology: NativeCompiler = {
  name: 'limit-pod-hard-anti-affinity-topology',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['pods'],
            scope: 'Namespaced',
          },
        ],
        variables: [
          {
            name: 'offending',
            expression: `object.spec.?affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([]).filter(term, term.?topologyKey.orValue('') != '${HOSTNAME}')`,
          },
        ],
        validations: [
          {
            expression: 'size(variables.offending) == 0',
            messageExpression: `'affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ' + variables.offending[0].?topologyKey.orValue('') + ' but only key ${HOSTNAME} is allowed'`,
          },
        ],
      },
    ],
    differences: ['a pod named only by generateName is named by that prefix in the message (upstream prints no name)'],
  }),
};
