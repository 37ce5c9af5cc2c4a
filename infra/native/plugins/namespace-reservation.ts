// NamespaceReservation as a ValidatingAdmissionPolicy: the reserved names and prefixes compiled in
// as literals, each with its Go-quoted text, so the message names the one that matched as the
// webhook's does.
import type { NamespaceReservationConfig } from '../../../functions/namespace-reservation/plugin.js';
import plugin from '../../../functions/namespace-reservation/plugin.js';
import type { NativeCompiler } from '../policy.js';
import { celString, celStrings, webhookRules } from '../policy.js';

/** A CEL map from each value to its Go %q text. */
const quoted = (values: readonly string[]) =>
  `{${[...new Set(values)].map((v) => `${celString(v)}: ${celString(JSON.stringify(v))}`).join(', ')}}`;

export const namespaceReservation: NativeCompiler<NamespaceReservationConfig> = {
  name: 'namespace-reservation',
  compile: (config) => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(plugin, 'validating'),
        variables: [
          {
            // A generated name begins with generateName, so a reserved prefix there is reserved too.
            name: 'name',
            expression:
              "object.metadata.?name.orValue('') != '' ? object.metadata.name : request.?name.orValue('') != '' ? request.name : object.metadata.?generateName.orValue('')",
          },
          {
            name: 'verb',
            expression: "request.resource.resource == 'namespaces' ? 'create a namespace' : 'request a project'",
          },
          { name: 'names', expression: `${celStrings(config.reservedNames)}.filter(n, n == variables.name)` },
          {
            name: 'prefixes',
            expression: `${celStrings(config.reservedPrefixes)}.filter(p, variables.name.startsWith(p))`,
          },
        ],
        validations: [
          {
            expression: "variables.name == '' || (size(variables.names) == 0 && size(variables.prefixes) == 0)",
            messageExpression:
              config.reservedNames.length === 0
                ? `'cannot ' + variables.verb + ' starting with ' + ${quoted(config.reservedPrefixes)}[variables.prefixes[0]]`
                : config.reservedPrefixes.length === 0
                  ? `'cannot ' + variables.verb + ' with the name ' + ${quoted(config.reservedNames)}[variables.names[0]]`
                  : `size(variables.names) > 0 ? 'cannot ' + variables.verb + ' with the name ' + ${quoted(config.reservedNames)}[variables.names[0]] : 'cannot ' + variables.verb + ' starting with ' + ${quoted(config.reservedPrefixes)}[variables.prefixes[0]]`,
          },
        ],
      },
    ],
    differences: [
      'a refused ProjectRequest names its resource projectrequests.project.openshift.io, where OpenShift names it project.project.openshift.io',
    ],
  }),
};
