// scheduling.openshift.io/PodNodeConstraints as a ValidatingAdmissionPolicy: a pod created with a
// nodeName or a blacklisted nodeSelector label is refused unless the apiserver's own authorizer
// lets the user `create pods/binding` in its namespace, as OpenShift asks it (beside the entry's
// allowedUsers/allowedGroups). A node creating a mirror pod bound to itself passes.
import type { PodNodeConstraintsConfig } from '../../../functions/pod-node-constraints/plugin.js';
import plugin from '../../../functions/pod-node-constraints/plugin.js';
import { allowlisted, goList } from '../cel.js';
import type { NativeCompiler } from '../policy.js';
import { celStrings, webhookRules } from '../policy.js';

export const podNodeConstraints: NativeCompiler<PodNodeConstraintsConfig> = {
  name: 'pod-node-constraints',
  compile: (config) => ({
    // No entry: OpenShift disables the plugin (and so is it inactive here).
    policies: !config.enabled
      ? []
      : [
          {
            kind: 'ValidatingAdmissionPolicy',
            rules: webhookRules(plugin, 'validating'),
            variables: [
              { name: 'nodeName', expression: "object.spec.?nodeName.orValue('')" },
              {
                // Go prints the labels in map order; sorted here, by filtering the sorted blacklist.
                name: 'labels',
                expression: `${celStrings([...config.nodeSelectorLabelBlacklist].sort())}.filter(l, l in object.spec.?nodeSelector.orValue({}))`,
              },
              {
                name: 'nodeSelfTargetWithMirrorPod',
                expression:
                  "variables.nodeName != '' && 'kubernetes.io/config.mirror' in object.metadata.?annotations.orValue({}) && 'system:nodes' in request.userInfo.?groups.orValue([]) && request.userInfo.?username.orValue('') == 'system:node:' + variables.nodeName",
              },
            ],
            validations: [
              {
                expression: `variables.nodeSelfTargetWithMirrorPod || (variables.nodeName == '' && size(variables.labels) == 0) || authorizer.group('').resource('pods').subresource('binding').namespace(request.?namespace.orValue('')).name(request.?name.orValue('')).check('create').allowed() || ${allowlisted(config.allowlist)}`,
                messageExpression: `size(variables.labels) == 0 ? 'node selection by nodeName is prohibited by policy for your role' : variables.nodeName == '' ? 'node selection by label(s) ' + ${goList('variables.labels')} + ' is prohibited by policy for your role' : 'node selection by nodeName and label(s) ' + ${goList('variables.labels')} + ' is prohibited by policy for your role'`,
              },
            ],
          },
        ],
    differences: [
      'the apiserver authorizer decides who may choose nodes (OpenShift: create pods/binding); allowedUsers and allowedGroups still pass',
    ],
  }),
};
