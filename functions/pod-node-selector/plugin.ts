// PodNodeSelector: lets cluster operators pin a namespace's pods to a set of nodes (dedicated
// tenants, special hardware) through the namespace's `scheduler.alpha.kubernetes.io/node-selector`
// annotation or a cluster default, and bound what a namespace's pods may select (a whitelist).
// Upstream: plugin/pkg/admission/podnodeselector.
//
// Served as a mutating webhook (upstream Admit: merge the namespace selector into the pod's) and a
// validating twin (upstream Validate: refuse conflicts and whitelist violations in the final pod).
// Upstream runs both in one process, so its Validate never sees a pod the merge skipped; here the
// mutating webhook fails open (a timeout, a 429 or a 5xx admits the pod unmerged), so the twin,
// which fails closed, also refuses a final pod that lacks a label of the namespace's selector:
// placement is the boundary this plugin exists for. A pod may add labels (a superset is what the
// merge makes), and the merged pod always passes.
// Namespaces come from this plugin's own learning webhook (learned state) and `npm run sync`. A
// namespace never seen (created before installation and not yet synced) may carry a node
// selector annotation of its own, so neither the cluster default nor a conflict refusal can be
// trusted: by default (POD_NODE_SELECTOR_UNKNOWN_NAMESPACE=warn) the pod is left unchanged, only
// the configured whitelist (which names namespaces, not their annotations) is checked, and the
// validating webhook warns, naming the sync. `=default` applies the cluster default as if the
// namespace had no annotation; `=reject` refuses as upstream refuses a namespace it cannot find.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, denied, errored, patched, withWarnings } from '../../lib/admission/decision.js';
import { definePlugin, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { qualifiedResource } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigFields } from '../../lib/config/fields.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';
import type { PluginState } from '../../lib/admission/ports.js';

const UPSTREAM_NAME = 'PodNodeSelector';
const NAME = 'pod-node-selector';
export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';
const POD_CREATES = judgedResource(['CREATE'], '', 'pods', 'Namespaced');

type LabelSet = Record<string, string>;

export interface PodNodeSelectorConfig {
  /** clusterDefaultNodeSelector and per-namespace whitelists, as upstream's podNodeSelectorPluginConfig. */
  readonly clusterNodeSelectors: Readonly<Record<string, string>>;
  readonly unknownNamespace: 'warn' | 'default' | 'reject';
}

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** labels.ConvertSelectorToLabelsMap: `k=v, k2 = v2`, whitespace trimmed. */
export function selectorToLabels(selector: string | undefined): LabelSet {
  const set: LabelSet = {};
  if (!selector) return set;
  for (const term of selector.split(',')) {
    const parts = term.split('=');
    if (parts.length !== 2) throw new Error(`invalid selector: [${parts.join(' ')}]`);
    const key = parts[0].trim();
    const value = parts[1].trim();
    if (!LABEL_KEY.test(key) || key.length > 316) throw new Error(`invalid label key "${key}"`);
    if (!LABEL_VALUE.test(value) || value.length > 63)
      throw new Error(`invalid label value: "${value}": at key: "${key}"`);
    set[key] = value;
  }
  return set;
}

const conflicts = (a: LabelSet, b: LabelSet) => Object.keys(a).some((k) => k in b && a[k] !== b[k]);

function isSubset(subset: LabelSet, superset: LabelSet): boolean {
  if (Object.keys(superset).length === 0) return true;
  return Object.entries(subset).every(([k, v]) => superset[k] === v);
}

interface PodLike extends KubeObject {
  spec?: { nodeSelector?: LabelSet; [key: string]: unknown };
}

const isPod = (o: unknown): o is PodLike =>
  typeof o === 'object' && o !== null && ((o as PodLike).kind === undefined || (o as PodLike).kind === 'Pod');

/** errors.NewForbidden(resource, pod.Name, err): the pod's own name, as upstream prints it. */
function podForbidden(request: AdmissionRequest, pod: PodLike, message: string): Decision {
  const resource = qualifiedResource(request.resource);
  const name = pod.metadata?.name ?? '';
  const text =
    name === ''
      ? `${resource} is forbidden: ${message}`
      : `${resource} ${JSON.stringify(name)} is forbidden: ${message}`;
  return denied(text, 403, 'Forbidden', { name, group: request.resource.group, kind: request.resource.resource });
}

const internal = (message: string) => errored(500, 'InternalError', `Internal error occurred: ${message}`);

/**
 * getNamespaceNodeSelectorMap: the namespace's annotation, else the cluster default; `unknown` for
 * a never-seen namespace under the `warn` rule.
 */
async function namespaceSelector(
  request: AdmissionRequest,
  config: PodNodeSelectorConfig,
  state: PluginState,
): Promise<{ labels: LabelSet } | { decision: Decision } | { unknown: true }> {
  const namespace = await state.learnedNamespaces.get(request.namespace);
  if (namespace === undefined && config.unknownNamespace === 'reject')
    return { decision: internal(`namespace ${request.namespace} does not exist`) };
  if (namespace === undefined && config.unknownNamespace === 'warn') return { unknown: true };
  const annotation = namespace?.annotations[NODE_SELECTOR_ANNOTATION];
  try {
    return {
      labels: selectorToLabels(
        annotation !== undefined ? annotation : config.clusterNodeSelectors.clusterDefaultNodeSelector,
      ),
    };
  } catch (error) {
    return { decision: internal((error as Error).message) };
  }
}

/**
 * Ours, in the words OpenShift's OriginPodNodeEnvironment uses for the same check in its Validate
 * (upstream's PodNodeSelector has none: its Admit always ran first).
 */
export const DOES_NOT_EXTEND = 'pod node label selector does not extend its namespace node label selector';

const shouldIgnore = (request: AdmissionRequest) => POD_CREATES.ignore(request) || !isPod(request.object);

function check(
  request: AdmissionRequest,
  config: PodNodeSelectorConfig,
  nodeSelector: LabelSet,
  nsSelector: LabelSet,
): Decision | undefined {
  const pod = request.object as PodLike;
  if (conflicts(nsSelector, nodeSelector))
    return podForbidden(request, pod, 'pod node label selector conflicts with its namespace node label selector');
  let whitelist: LabelSet;
  try {
    whitelist = selectorToLabels(config.clusterNodeSelectors[request.namespace]);
  } catch (error) {
    return internal((error as Error).message);
  }
  if (!isSubset(nodeSelector, whitelist))
    return podForbidden(request, pod, 'pod node label selector labels conflict with its namespace whitelist');
  return undefined;
}

function parseConfig(raw: unknown): Record<string, string> {
  const entry = ConfigFields.of(UPSTREAM_NAME, raw, 'an object with podNodeSelectorPluginConfig');
  // Namespace (or clusterDefaultNodeSelector) to a node selector like "env=dev, infra=false".
  const selectors = entry.allow('podNodeSelectorPluginConfig').stringMap('podNodeSelectorPluginConfig');
  for (const [key, selector] of Object.entries(selectors)) {
    try {
      selectorToLabels(selector);
    } catch (error) {
      throw entry.error(`podNodeSelectorPluginConfig.${key}`, (error as Error).message);
    }
  }
  return selectors;
}

export default definePlugin<PodNodeSelectorConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: NAME,
    summary:
      "Merges the namespace's node selector (or the cluster default) into new pods and refuses conflicts and whitelist violations.",
    ...mutatingWithTwin(POD_CREATES.rules),
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
  },

  configure(raw): PodNodeSelectorConfig {
    return {
      clusterNodeSelectors: parseConfig(raw),
      unknownNamespace: unknownNamespaceRule(UPSTREAM_NAME, NAME, ['warn', 'default', 'reject'] as const, 'warn'),
    };
  },

  async admit(request, { config, state }) {
    if (shouldIgnore(request)) return allowed();
    const nsSelector = await namespaceSelector(request, config, state);
    if ('decision' in nsSelector) return nsSelector.decision;
    // The validating twin warns: it sees the final pod, and a warning from both would repeat.
    if ('unknown' in nsSelector) return allowed();
    const labels = nsSelector.labels;
    const pod = request.object as PodLike;
    const own = pod.spec?.nodeSelector ?? {};
    if (conflicts(labels, own))
      return podForbidden(request, pod, 'pod node label selector conflicts with its namespace node label selector');
    // labels.Merge(namespace, pod): the pod's own value wins.
    const merged = { ...labels, ...own };
    const refusal = check(request, config, merged, labels);
    if (refusal) return refusal;
    if (Object.keys(merged).length === Object.keys(own).length) return allowed();
    // Only the changed path is new; everything else is shared with the object as received.
    return patched({ ...pod, spec: { ...(pod.spec ?? {}), nodeSelector: merged } });
  },

  async validate(request, { config, state }) {
    if (shouldIgnore(request)) return allowed();
    const nsSelector = await namespaceSelector(request, config, state);
    if ('decision' in nsSelector) return nsSelector.decision;
    const pod = request.object as PodLike;
    if ('unknown' in nsSelector) {
      const warning = neverSeenWarning(UPSTREAM_NAME, request.namespace, 'its node selector was not applied');
      return check(request, config, pod.spec?.nodeSelector ?? {}, {}) ?? withWarnings(allowed(), warning);
    }
    const own = pod.spec?.nodeSelector ?? {};
    const refusal = check(request, config, own, nsSelector.labels);
    if (refusal) return refusal;
    // No conflict, so a missing key is a label the merge would have added: the mutation did not run.
    if (Object.keys(nsSelector.labels).some((key) => !Object.hasOwn(own, key)))
      return podForbidden(request, pod, DOES_NOT_EXTEND);
    return allowed();
  },
});
