// scheduling.openshift.io/OriginPodNodeEnvironment: OpenShift pins a project's pods to a set of
// nodes through the namespace's `openshift.io/node-selector` annotation, or the cluster's default
// node selector, merged into every new pod's nodeSelector; a pod may add labels but not contradict
// them. A namespace carrying Kubernetes' own `scheduler.alpha.kubernetes.io/node-selector` is left
// to PodNodeSelector. Source: openshift/kubernetes openshift-kube-apiserver/admission/scheduler/
// nodeenv (and its labelselector, which reads only `k=v` terms).
//
// Configuration: OpenShift takes the default from its apiserver configuration
// (projectConfig.defaultNodeSelector); here it is the plugin's entry:
//
//   - name: scheduling.openshift.io/OriginPodNodeEnvironment
//     configuration:
//       defaultNodeSelector: "node-role.kubernetes.io/worker="
//
// No entry: the default selector is empty, and the plugin still applies namespace annotations (as
// OpenShift, where the plugin is always on).
//
// Served as a mutating webhook (upstream's Admit: merge) and a validating twin (upstream's
// Validate: the same checks, and the final pod must still carry every project label). Namespaces
// are learned; a namespace never seen gets the default selector
// (ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE=default) or upstream's refusal (=reject). A pod
// that names its node in a project with a selector is refused, as upstream refuses one whose node
// it cannot find: node labels are not learned, so the node cannot be checked against the selector.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, denied, errored, patched } from '../../lib/admission/decision.js';
import { goQuote } from '../../lib/admission/field.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource, qualifiedResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigFields } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import { unknownNamespaceRule } from '../../lib/state/never-seen.js';
import type { PluginState } from '../../lib/admission/ports.js';

const PLUGIN = 'scheduling.openshift.io/OriginPodNodeEnvironment';
const NAME = 'origin-pod-node-environment';
/** projectv1.ProjectNodeSelector. */
export const PROJECT_NODE_SELECTOR_ANNOTATION = 'openshift.io/node-selector';
/** PodNodeSelector's annotation: when present, this plugin steps aside. */
export const KUBE_NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

type LabelSet = Record<string, string>;

export interface OriginPodNodeEnvironmentConfig {
  readonly defaultNodeSelector: string;
  readonly unknownNamespace: 'default' | 'reject';
}

// --- labelselector.Parse: `k1=v1, k2 = v2`, exact matches only --------------------------------

const QUALIFIED_NAME_MESSAGE = 'must match format [ DNS 1123 subdomain / ] DNS 1123 label';
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** validation.IsQualifiedName. */
function isQualifiedName(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (parts.length === 2 && (parts[0] === '' || parts[0].length > 253 || !DNS1123_SUBDOMAIN.test(parts[0])))
    return false;
  return name !== '' && name.length <= 63 && NAME_PART.test(name);
}

const isValidLabelValue = (value: string) => value.length <= 63 && LABEL_VALUE.test(value);

type Token = { kind: 'id' | '=' | ',' | 'end'; text: string };

function lex(selector: string): Token[] {
  const tokens: Token[] = [];
  const parts = selector.match(/[=,]|[^=, \t\r\n]+/g) ?? [];
  for (const part of parts)
    tokens.push(part === '=' || part === ',' ? { kind: part, text: part } : { kind: 'id', text: part });
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

/** labelselector.Parse, with its error texts. */
export function parseProjectSelector(selector: string): LabelSet {
  const tokens = lex(selector);
  let position = 0;
  const consume = () => tokens[position++] ?? { kind: 'end', text: '' };
  const labels: LabelSet = {};
  for (;;) {
    const next = tokens[position];
    if (next.kind === 'end') return labels;
    if (next.kind !== 'id') throw new Error(`found '${next.text}', expected: identifier or 'end of string'`);
    const key = consume().text;
    const requirement = (detail: string) => new Error(`unable to parse requirement: ${detail}`);
    if (!isQualifiedName(key))
      throw requirement(`label key: Invalid value: ${goQuote(key)}: ${QUALIFIED_NAME_MESSAGE}`);
    const operator = consume();
    if (operator.kind !== '=') throw requirement(`found '${operator.text}', expected: '='`);
    const value = consume();
    if (value.kind !== 'id' && value.kind !== 'end') throw requirement(`found '${value.text}', expected: identifier`);
    if (!isValidLabelValue(value.text))
      throw requirement(`label value: Invalid value: ${goQuote(value.text)}: ${QUALIFIED_NAME_MESSAGE}`);
    labels[key] = value.text;
    if (value.kind === 'end') return labels;
    const after = consume();
    if (after.kind === 'end') return labels;
    if (after.kind !== ',') throw new Error(`found '${after.text}', expected: ',' or 'end of string'`);
    if (tokens[position].kind !== 'id')
      throw new Error(`found '${tokens[position].text}', expected: identifier after ','`);
  }
}

const conflicts = (a: LabelSet, b: LabelSet) => Object.keys(a).some((k) => k in b && a[k] !== b[k]);

// --- the plugin -------------------------------------------------------------------------------

interface Pod extends KubeObject {
  spec?: { nodeSelector?: LabelSet; nodeName?: string; [key: string]: unknown };
}

/** apierrors.NewForbidden(pods, pod.Name, err): the pod's own name, as upstream prints it. */
function podForbidden(request: AdmissionRequest, pod: Pod, message: string): Decision {
  const resource = qualifiedResource(request.resource);
  const name = typeof pod.metadata?.name === 'string' ? pod.metadata.name : '';
  const text =
    name === ''
      ? `${resource} is forbidden: ${message}`
      : `${resource} ${JSON.stringify(name)} is forbidden: ${message}`;
  return denied(text, 403, 'Forbidden', { name, group: request.resource.group, kind: request.resource.resource });
}

function podOf(request: AdmissionRequest): Pod | undefined {
  if (request.operation !== 'CREATE' || !isMainResource(request, '', 'pods')) return undefined;
  return isObjectOfKind<Pod>(request.object, 'Pod') ? request.object : undefined;
}

/**
 * Upstream's admit(mutationAllowed): the merged nodeSelector, undefined when the namespace is left
 * to PodNodeSelector, or the refusal.
 */
async function evaluate(
  request: AdmissionRequest,
  pod: Pod,
  config: OriginPodNodeEnvironmentConfig,
  state: PluginState,
  mutationAllowed: boolean,
): Promise<{ merged?: LabelSet } | { decision: Decision }> {
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined && config.unknownNamespace === 'reject')
    return { decision: podForbidden(request, pod, `namespace ${JSON.stringify(request.namespace)} not found`) };
  const annotations = namespace?.annotations ?? {};
  if (KUBE_NODE_SELECTOR_ANNOTATION in annotations) return {};
  const selector = annotations[PROJECT_NODE_SELECTOR_ANNOTATION] ?? config.defaultNodeSelector;
  let project: LabelSet;
  try {
    project = parseProjectSelector(selector);
  } catch (error) {
    // Returned as is upstream: not an API status, so the apiserver answers 500.
    return { decision: errored(500, 'Unknown', (error as Error).message) };
  }
  const own = pod.spec?.nodeSelector ?? {};
  if (conflicts(project, own))
    return {
      decision: podForbidden(request, pod, 'pod node label selector conflicts with its project node label selector'),
    };
  const merged = { ...project, ...own };
  if (!mutationAllowed && Object.keys(merged).length !== Object.keys(own).length) {
    return {
      decision: podForbidden(request, pod, 'pod node label selector does not extend project node label selector'),
    };
  }
  const nodeName = typeof pod.spec?.nodeName === 'string' ? pod.spec.nodeName : '';
  if (nodeName !== '' && Object.keys(project).length > 0) {
    // Upstream looks the node's labels up; they are not learned, so this is its answer for a node
    // its lister does not have.
    return {
      decision: podForbidden(
        request,
        pod,
        `cannot validate project node label selector: node ${JSON.stringify(nodeName)} not found`,
      ),
    };
  }
  return { merged };
}

const POD_RULES = judgedResource(['CREATE'], '', 'pods', 'Namespaced').rules;

export default definePlugin<OriginPodNodeEnvironmentConfig>({
  metadata: {
    upstreamName: PLUGIN,
    name: NAME,
    summary:
      "Merges the project's openshift.io/node-selector (or the default selector) into new pods and refuses contradictions (OpenShift scheduling.openshift.io/OriginPodNodeEnvironment).",
    ...mutatingWithTwin(POD_RULES),
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
    // Off without its configuration, as upstream's plugin is (not served, emitted or packaged).
    requiresConfiguration: true,
  },

  configure(raw): OriginPodNodeEnvironmentConfig {
    const unknownNamespace = unknownNamespaceRule(PLUGIN, NAME, ['default', 'reject'] as const, 'default');
    if (raw === undefined || raw === null) return { defaultNodeSelector: '', unknownNamespace };
    const entry = ConfigFields.of(PLUGIN, raw, 'an object with defaultNodeSelector').allow('defaultNodeSelector');
    const selector = entry.string('defaultNodeSelector') ?? '';
    try {
      parseProjectSelector(selector);
    } catch (error) {
      throw entry.error('defaultNodeSelector', (error as Error).message);
    }
    return { defaultNodeSelector: selector, unknownNamespace };
  },

  async admit(request, { config, state }) {
    const pod = podOf(request);
    if (pod === undefined) return allowed();
    const result = await evaluate(request, pod, config, state, true);
    if ('decision' in result) return result.decision;
    const own = pod.spec?.nodeSelector ?? {};
    if (result.merged === undefined || Object.keys(result.merged).length === Object.keys(own).length) return allowed();
    return patched({ ...pod, spec: { ...pod.spec, nodeSelector: result.merged } });
  },

  async validate(request, { config, state }) {
    const pod = podOf(request);
    if (pod === undefined) return allowed();
    const result = await evaluate(request, pod, config, state, false);
    return 'decision' in result ? result.decision : allowed();
  },
});
