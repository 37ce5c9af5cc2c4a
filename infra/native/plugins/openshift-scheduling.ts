// scheduling.openshift.io/OriginPodNodeEnvironment and autoscaling.openshift.io/RunOnceDuration as
// MutatingAdmissionPolicies with validating twins, Kubernetes 1.36+. Both read their namespace's
// annotations from namespaceObject (openshift.io/node-selector, openshift.io/active-deadline-
// seconds-override) and parse them in CEL as OpenShift does (labelselector.Parse, strconv.ParseInt),
// with OpenShift's error texts. A refusal of the webhook's mutation is the validating policy's here.
import type { OriginPodNodeEnvironmentConfig } from '../../../functions/origin-pod-node-environment/plugin.js';
import originPodNodeEnvironmentPlugin, {
  KUBE_NODE_SELECTOR_ANNOTATION,
  PROJECT_NODE_SELECTOR_ANNOTATION,
} from '../../../functions/origin-pod-node-environment/plugin.js';
import type { RunOnceDurationConfig } from '../../../functions/run-once-duration/plugin.js';
import runOnceDurationPlugin, {
  ACTIVE_DEADLINE_SECONDS_LIMIT_ANNOTATION,
} from '../../../functions/run-once-duration/plugin.js';
import { CONFLICT, MERGE_LABELS, NAMESPACE_ANNOTATIONS, POD_SELECTOR } from '../node-selector.js';
import type { NamedExpression } from '../policy.js';
import { celString, mutatingUnavailable, requiring, webhookRules } from '../policy.js';

// --- labelselector.Parse ----------------------------------------------------------------------

const QUALIFIED = 'must match format [ DNS 1123 subdomain / ] DNS 1123 label';
const NAME_PART = '^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';
const SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';

/** validation.IsQualifiedName of `k` (a CEL string). */
const qualified = (k: string) =>
  `(${k}.split('/').size() == 1 ? (size(${k}) <= 63 && ${k}.matches('${NAME_PART}')) : ${k}.split('/').size() == 2 && size(${k}.split('/')[0]) > 0 && size(${k}.split('/')[0]) <= 253 && ${k}.split('/')[0].matches('${SUBDOMAIN}') && size(${k}.split('/')[1]) > 0 && size(${k}.split('/')[1]) <= 63 && ${k}.split('/')[1].matches('${NAME_PART}'))`;

/**
 * The tokens of `variables.selector` (identifiers, `=`, `,`) and '' for the end, and the first
 * error of the grammar `key = [value] {, key = [value]}`, position by position as the parser meets
 * them (a well-formed selector is groups of four tokens: key, =, value, separator; the end of
 * string, '', is met once, last).
 */
const SELECTOR: NamedExpression[] = [
  {
    name: 'tokens',
    expression: "variables.selector.findAll('[=,]|[^=, \\t\\r\\n]+') + ['']",
  },
  {
    name: 'parseErrors',
    expression: `variables.tokens.transformList(i, t, i % 4 == 0 ? (i == 0 && t == '' ? '' : t == '' || t == '=' || t == ',' ? (i == 0 ? "found '" + t + "', expected: identifier or 'end of string'" : "found '" + t + "', expected: identifier after ','") : !${qualified('t')} ? 'unable to parse requirement: label key: Invalid value: "' + t + '": ${QUALIFIED}' : '') : i % 4 == 1 ? (t != '=' ? "unable to parse requirement: found '" + t + "', expected: '='" : '') : i % 4 == 2 ? (t == '=' || t == ',' ? "unable to parse requirement: found '" + t + "', expected: identifier" : t != '' && !(size(t) <= 63 && t.matches('${VALUE}')) ? 'unable to parse requirement: label value: Invalid value: "' + t + '": ${QUALIFIED}' : '') : (t != '' && t != ',' ? "found '" + t + "', expected: ',' or 'end of string'" : '')).filter(e, e != '')`,
  },
  {
    name: 'keyIndexes',
    expression: "size(variables.parseErrors) > 0 ? [] : variables.tokens.transformList(i, t, i % 4 == 0 && t != '', i)",
  },
  { name: 'keys', expression: 'variables.keyIndexes.map(i, variables.tokens[i])' },
  {
    // key i has value i + 2; a key given twice keeps its last value.
    name: 'labels',
    expression:
      'variables.keys.distinct().transformMapEntry(n, k, {k: variables.tokens[variables.keyIndexes[variables.keys.lastIndexOf(k)] + 2]})',
  },
];

export const originPodNodeEnvironment = requiring<OriginPodNodeEnvironmentConfig>(
  'origin-pod-node-environment',
  mutatingUnavailable,
  (config) => {
    const project = celString(PROJECT_NODE_SELECTOR_ANNOTATION);
    const common: NamedExpression[] = [
      NAMESPACE_ANNOTATIONS,
      // A namespace with PodNodeSelector's annotation is left to PodNodeSelector.
      { name: 'kubeSelector', expression: `${celString(KUBE_NODE_SELECTOR_ANNOTATION)} in variables.annotations` },
      {
        name: 'selector',
        expression: `${project} in variables.annotations ? variables.annotations[${project}] : ${celString(config.defaultNodeSelector)}`,
      },
      ...SELECTOR,
      POD_SELECTOR,
      { name: 'conflict', expression: CONFLICT },
    ];
    const judged = '!variables.kubeSelector && size(variables.parseErrors) == 0';
    return {
      policies: [
        {
          kind: 'MutatingAdmissionPolicy',
          rules: webhookRules(originPodNodeEnvironmentPlugin, 'mutating'),
          variables: common,
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: { expression: `${judged} && !variables.conflict ? ${MERGE_LABELS} : []` },
            },
          ],
          reinvocationPolicy: 'IfNeeded',
        },
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: webhookRules(originPodNodeEnvironmentPlugin, 'validating'),
          variables: common,
          validations: [
            {
              expression: 'variables.kubeSelector || size(variables.parseErrors) == 0',
              messageExpression: 'variables.parseErrors[0]',
            },
            {
              expression: `!(${judged}) || !variables.conflict`,
              message: 'pod node label selector conflicts with its project node label selector',
            },
            {
              expression: `!(${judged}) || variables.labels.all(k, k in variables.podSelector)`,
              message: 'pod node label selector does not extend project node label selector',
            },
            {
              // Upstream checks the named node's labels; a policy cannot read the Node (nor does
              // the webhook learn it), so it answers as upstream does for a node it cannot find.
              expression: `!(${judged}) || object.spec.?nodeName.orValue('') == '' || size(variables.labels) == 0`,
              messageExpression:
                "'cannot validate project node label selector: node \"' + object.spec.nodeName + '\" not found'",
            },
          ],
        },
      ],
      differences: [
        "a project node selector that does not parse refuses the pod (403, OpenShift's text) where OpenShift answers 500",
        'a pod named only by generateName is named by that prefix in the message (upstream prints no name)',
        'the namespace is read from the cluster itself: unknownNamespace does not apply',
      ],
    };
  },
);

// --- RunOnceDuration -------------------------------------------------------------------------

export const runOnceDuration = requiring<RunOnceDurationConfig>('run-once-duration', mutatingUnavailable, (config) => {
  // No entry: OpenShift disables the plugin (and so is it inactive here).
  if (!config.enabled) return { policies: [] };
  const annotation = celString(ACTIVE_DEADLINE_SECONDS_LIMIT_ANNOTATION);
  const common: NamedExpression[] = [
    NAMESPACE_ANNOTATIONS,
    { name: 'ownSet', expression: 'has(object.spec.activeDeadlineSeconds)' },
    { name: 'own', expression: 'object.spec.?activeDeadlineSeconds.orValue(0)' },
    { name: 'text', expression: `variables.annotations[?${annotation}]` },
    { name: 'digits', expression: "variables.text.orValue('0').find('[1-9][0-9]*$')" },
    {
      // strconv.ParseInt(text, 10, 64): digits with an optional sign, within int64.
      name: 'parseError',
      expression:
        "!variables.text.hasValue() ? '' : !variables.text.value().matches('^[+-]?[0-9]+$') ? 'invalid syntax' : size(variables.digits) > 19 || (size(variables.digits) == 19 && variables.digits > (variables.text.value().startsWith('-') ? '9223372036854775808' : '9223372036854775807')) ? 'value out of range' : ''",
    },
    // The namespace's limit, else the cluster's.
    {
      name: 'hasLimit',
      expression: `variables.text.hasValue() || ${config.activeDeadlineSecondsLimit !== undefined}`,
    },
    {
      name: 'limit',
      expression: `variables.text.hasValue() ? (variables.digits == '' ? 0 : variables.text.value().startsWith('-') ? int('-' + variables.digits) : int(variables.digits)) : ${config.activeDeadlineSecondsLimit ?? 0}`,
    },
    {
      // The pod's deadline after upstream's Admit: the lower of the limit and its own.
      name: 'deadline',
      expression:
        'variables.hasLimit && !(variables.ownSet && variables.own < variables.limit) ? variables.limit : variables.own',
    },
    {
      name: 'lowered',
      expression:
        "variables.parseError == '' && (variables.hasLimit || variables.ownSet) && (!variables.ownSet || variables.deadline != variables.own)",
    },
  ];
  const runOnce = {
    name: 'run-once',
    expression: "object.spec.?restartPolicy.orValue('') in ['Never', 'OnFailure']",
  };
  return {
    policies: [
      {
        kind: 'MutatingAdmissionPolicy',
        rules: webhookRules(runOnceDurationPlugin, 'mutating'),
        matchConditions: [runOnce],
        variables: common,
        mutations: [
          {
            patchType: 'JSONPatch',
            jsonPatch: {
              expression:
                "variables.lowered ? [JSONPatch{op: 'add', path: '/spec/activeDeadlineSeconds', value: variables.deadline}] : []",
            },
          },
        ],
        reinvocationPolicy: 'IfNeeded',
      },
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: webhookRules(runOnceDurationPlugin, 'validating'),
        matchConditions: [runOnce],
        variables: common,
        validations: [
          {
            expression: "variables.parseError == ''",
            messageExpression: `'cannot parse the ActiveDeadlineSeconds limit (' + variables.text.value() + ') for project ' + request.namespace + ': strconv.ParseInt: parsing "' + variables.text.value() + '": ' + variables.parseError`,
          },
          {
            expression: '!variables.lowered',
            messageExpression:
              "'spec.activeDeadlineSeconds: ' + (variables.ownSet ? 'Invalid value: ' + string(variables.own) : 'Required value') + ': must be at most ' + string(variables.deadline) + ' for run-once pods in namespace ' + request.namespace",
          },
        ],
      },
    ],
    differences: [
      "an annotation that does not parse refuses the pod from the validating policy (the mutating one cannot refuse), with OpenShift's text",
      'the namespace is read from the cluster itself: unknownNamespace does not apply',
    ],
  };
});
