// PodNodeSelector as a MutatingAdmissionPolicy (the namespace's node selector merged into a new
// pod's) and a ValidatingAdmissionPolicy (its twin: conflicts, whitelist violations and a pod
// lacking the namespace's labels refused),
// Kubernetes 1.36+. The namespace's `scheduler.alpha.kubernetes.io/node-selector` annotation is
// read from namespaceObject and parsed as labels.ConvertSelectorToLabelsMap parses it; the cluster
// default and the whitelists come from the entry, compiled in.
import type { PodNodeSelectorConfig } from '../../../functions/pod-node-selector/plugin.js';
import plugin, {
  DOES_NOT_EXTEND,
  NODE_SELECTOR_ANNOTATION,
  selectorToLabels,
} from '../../../functions/pod-node-selector/plugin.js';
import { CONFLICT, MERGE_LABELS, NAMESPACE_ANNOTATIONS, POD_SELECTOR } from '../node-selector.js';
import type { NamedExpression } from '../policy.js';
import { celString, mutatingUnavailable, requiring, webhookRules } from '../policy.js';

const LABEL_KEY =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';

/** A CEL map literal of label sets. */
const labelSets = (sets: Readonly<Record<string, Readonly<Record<string, string>>>>) =>
  `{${Object.entries(sets)
    .map(
      ([name, set]) =>
        `${celString(name)}: {${Object.entries(set)
          .map(([k, v]) => `${celString(k)}: ${celString(v)}`)
          .join(', ')}}`,
    )
    .join(', ')}}`;

/** `k=v, k2=v2` of `selector` (a CEL string) as the webhook parses it: terms, errors, labels. */
function selectorVariables(selector: string): NamedExpression[] {
  return [
    { name: 'selector', expression: selector },
    { name: 'terms', expression: "variables.selector == '' ? [] : variables.selector.split(',').map(t, t.split('='))" },
    {
      name: 'parseErrors',
      expression: `variables.terms.map(p, size(p) != 2 ? 'invalid selector: [' + p.join(' ') + ']' : !p[0].trim().matches('${LABEL_KEY}') || size(p[0].trim()) > 316 ? 'invalid label key "' + p[0].trim() + '"' : !p[1].trim().matches('${LABEL_VALUE}') || size(p[1].trim()) > 63 ? 'invalid label value: "' + p[1].trim() + '": at key: "' + p[0].trim() + '"' : '').filter(e, e != '')`,
    },
    { name: 'keys', expression: 'size(variables.parseErrors) > 0 ? [] : variables.terms.map(p, p[0].trim())' },
    {
      // A key given twice keeps its last value, as a Go map assignment does.
      name: 'labels',
      expression:
        'variables.keys.distinct().transformMapEntry(i, k, {k: variables.terms[variables.keys.lastIndexOf(k)][1].trim()})',
    },
  ];
}

export const podNodeSelector = requiring<PodNodeSelectorConfig>('pod-node-selector', mutatingUnavailable, (config) => {
  const { clusterDefaultNodeSelector = '', ...namespaces } = config.clusterNodeSelectors;
  const whitelists = Object.fromEntries(Object.entries(namespaces).map(([ns, s]) => [ns, selectorToLabels(s)]));
  const annotation = celString(NODE_SELECTOR_ANNOTATION);
  const common: NamedExpression[] = [
    NAMESPACE_ANNOTATIONS,
    ...selectorVariables(
      `${annotation} in variables.annotations ? variables.annotations[${annotation}] : ${celString(clusterDefaultNodeSelector)}`,
    ),
    POD_SELECTOR,
  ];
  return {
    policies: [
      {
        kind: 'MutatingAdmissionPolicy',
        rules: webhookRules(plugin, 'mutating'),
        variables: common,
        mutations: [
          {
            patchType: 'JSONPatch',
            jsonPatch: {
              // labels.Merge(namespace, pod): the pod's own values stay; conflicts are the twin's.
              expression: `size(variables.parseErrors) > 0 ? [] : ${MERGE_LABELS}`,
            },
          },
        ],
        reinvocationPolicy: 'IfNeeded',
      },
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(plugin, 'validating'),
        variables: [
          ...common,
          { name: 'whitelist', expression: `${labelSets(whitelists)}[?request.namespace].orValue({})` },
        ],
        validations: [
          {
            expression: 'size(variables.parseErrors) == 0',
            messageExpression: "'Internal error occurred: ' + variables.parseErrors[0]",
          },
          {
            expression: `size(variables.parseErrors) > 0 || !${CONFLICT}`,
            message: 'pod node label selector conflicts with its namespace node label selector',
          },
          {
            expression:
              'size(variables.parseErrors) > 0 || size(variables.whitelist) == 0 || variables.podSelector.all(k, k in variables.whitelist && variables.whitelist[k] == variables.podSelector[k])',
            message: 'pod node label selector labels conflict with its namespace whitelist',
          },
          {
            // The webhook twin's check of a pod the merge never reached (functions/pod-node-selector).
            expression: 'size(variables.parseErrors) > 0 || variables.labels.all(k, k in variables.podSelector)',
            message: DOES_NOT_EXTEND,
          },
        ],
      },
    ],
    differences: [
      "a namespace annotation that does not parse refuses the pod (403, upstream's text) where the webhook answers 500 InternalError",
      'a pod named only by generateName is named by that prefix in the message (upstream prints no name)',
      'the namespace is read from the cluster itself: unknownNamespace does not apply',
    ],
  };
});
