// scheduling.openshift.io/OriginPodNodeEnvironment: OpenShift pins a project's pods to a set of
// nodes through the namespace's `openshift.io/node-selector` annotation, or the cluster's default
// node selector, merged into every new pod's nodeSelector; a pod may add labels but not contradict
// them, and a pod that names its node must name one the selector matches. A namespace carrying
// Kubernetes' own `scheduler.alpha.kubernetes.io/node-selector` is left to PodNodeSelector.
// Source: openshift/kubernetes openshift-kube-apiserver/admission/scheduler/nodeenv (and its
// labelselector, which reads only `k=v` terms).
//
// Always on, as in OpenShift: an AdmissionConfiguration that names no plugin serves it. OpenShift
// takes the default selector from its apiserver configuration (projectConfig.defaultNodeSelector);
// here it is the plugin's entry, and without one the default selector is empty while namespace
// annotations still apply:
//
//   - name: scheduling.openshift.io/OriginPodNodeEnvironment
//     configuration:
//       defaultNodeSelector: "node-role.kubernetes.io/worker="
//
// Served as a mutating webhook (upstream's Admit: merge) and a validating one (upstream's Validate:
// the same checks, and the final pod must still carry every project label). Upstream reads
// Namespaces and Nodes from informers; here both are learned (the Namespace writes and the Node
// writes this plugin's learning webhook sees, and `npm run sync`).
//
// A namespace never seen (ORIGIN_POD_NODE_ENVIRONMENT_UNKNOWN_NAMESPACE): `warn`, the default, is
// the answer that cannot be wrong: the namespace's annotations decide both the selector and
// whether the plugin steps aside, so nothing is merged or refused, and one warning names the fix.
// `default` merges the default selector as if the namespace had no annotation; `reject` is
// upstream's refusal of a namespace its lister does not have. A node never seen is not refused
// (upstream refuses one its lister does not have, which here only means it was not learned yet):
// the pod is admitted with one warning, since the scheduler cannot be trusted to enforce the
// project selector on a pod that names its node.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, denied, errored, patched, withWarnings } from '../../lib/admission/decision.js';
import { goQuote } from '../../lib/admission/field.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource, qualifiedResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigFields } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import { neverSeenObjectWarning, neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';
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
  readonly unknownNamespace: UnknownNamespaceRule;
}

const UNKNOWN_NAMESPACE_RULES = ['warn', 'default', 'reject'] as const;
type UnknownNamespaceRule = (typeof UNKNOWN_NAMESPACE_RULES)[number];

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

/** Whether the node's labels satisfy every `k=v` term of the project selector (labels.Parse + Matches). */
const nodeMatches = (project: LabelSet, nodeLabels: LabelSet) =>
  Object.entries(project).every(([key, value]) => Object.hasOwn(nodeLabels, key) && nodeLabels[key] === value);

function labelsOf(object: KubeObject): LabelSet {
  const labels = object.metadata?.labels;
  if (labels === null || typeof labels !== 'object') return {};
  return Object.fromEntries(Object.entries(labels).filter(([, v]) => typeof v === 'string')) as LabelSet;
}

/** What one phase concludes: the merged nodeSelector (none: leave the pod), or the refusal. */
type Evaluation = { merged?: LabelSet; warnings: string[] } | { decision: Decision };

/** Upstream's admit(mutationAllowed), over the learned namespace and node. */
async function evaluate(
  request: AdmissionRequest,
  pod: Pod,
  config: OriginPodNodeEnvironmentConfig,
  state: PluginState,
  mutationAllowed: boolean,
): Promise<Evaluation> {
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined) {
    if (config.unknownNamespace === 'reject')
      return { decision: podForbidden(request, pod, `namespace ${JSON.stringify(request.namespace)} not found`) };
    if (config.unknownNamespace === 'warn') {
      const consequence = 'its project node selector was neither applied nor checked';
      return { warnings: [neverSeenWarning(PLUGIN, request.namespace, consequence)] };
    }
  }
  const annotations = namespace?.annotations ?? {};
  if (KUBE_NODE_SELECTOR_ANNOTATION in annotations) return { warnings: [] };
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
  const warnings: string[] = [];
  if (nodeName !== '' && Object.keys(project).length > 0) {
    const node = await state.learnedObjects.get('nodes', nodeName);
    if (node === undefined) {
      const consequence = "the pod's node was not checked against its project node selector";
      warnings.push(neverSeenObjectWarning(PLUGIN, 'node', nodeName, consequence));
    } else if (!nodeMatches(project, labelsOf(node.object))) {
      return { decision: podForbidden(request, pod, 'pod node name conflicts with project node label selector') };
    }
  }
  return { merged, warnings };
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
    needs: ['namespaces', 'nodes'],
    systemNamespaces: 'exclude',
    // No optIn nor requiresConfiguration: on by default, as OpenShift always runs it.
  },

  configure(raw): OriginPodNodeEnvironmentConfig {
    const unknownNamespace = unknownNamespaceRule(PLUGIN, NAME, UNKNOWN_NAMESPACE_RULES, 'warn');
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
    const unchanged = result.merged === undefined || Object.keys(result.merged).length === Object.keys(own).length;
    const decision = unchanged ? allowed() : patched({ ...pod, spec: { ...pod.spec, nodeSelector: result.merged } });
    return withWarnings(decision, ...result.warnings);
  },

  async validate(request, { config, state }) {
    const pod = podOf(request);
    if (pod === undefined) return allowed();
    const result = await evaluate(request, pod, config, state, false);
    return 'decision' in result ? result.decision : withWarnings(allowed(), ...result.warnings);
  },
});
