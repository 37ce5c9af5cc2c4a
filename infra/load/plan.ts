// The load plan: which webhooks the kube-apiserver would call, in which order, for each kind of
// user request in the load mix. Derived from the registry through the same emitter that writes the
// cluster's webhook configurations, so every plugin that matches a request gets its share of the
// load and a new plugin joins the mix by being registered. `npm run load` writes it to a file that
// the artillery processor (processor.cjs) reads.
import { readFileSync, writeFileSync } from 'node:fs';
import { run } from '@bufbuild/cel';
import { pathToFileURL } from 'node:url';
import { plugins } from '../../functions/index.js';
import type { PluginSet } from '../../lib/config/plugins.js';
import {
  activePlugins,
  inactiveLine,
  inactivePlugins,
  loadPluginSet,
  selectionLine,
} from '../../lib/config/plugins.js';
import type { CallerAuthOption, WebhookConfiguration } from '../emit/webhooks.js';
import { checkBaseUrl, NAMESPACE_NAME_LABEL, webhookConfigurations } from '../emit/webhooks.js';
import { readDeploymentKey, urlSecretFile } from '../emit/url-secret.js';

/** The namespaces the load runs in; the plan's first step teaches them to stateful plugins. */
export const LOAD_NAMESPACES = ['load-a', 'load-b', 'load-c', 'load-d'];

interface Target {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export interface PlannedCall {
  readonly webhook: string;
  readonly phase: 'mutate' | 'validate';
  /** `/<plugin>/<phase>`; the processor puts the target (and a url-secret prefix) in front. */
  readonly path: string;
}

export interface RequestKind {
  /** The AdmissionReview the apiserver would send first (the processor sets uid and names). */
  readonly review: Record<string, unknown>;
  readonly calls: readonly PlannedCall[];
}

export type LoadPlan = Record<string, RequestKind>;

type Rule = {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
};
type Selector = { matchExpressions?: { key: string; operator: string; values?: string[] }[] };

/** JSON as the fixture and the reviews carry it; CEL reads it as maps, lists and scalars. */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
/** The fixture's pod: JSON with the fields the plan sets. */
type PodJson = { [key: string]: Json } & {
  metadata: { [key: string]: Json };
  spec: { [key: string]: Json } & { containers: { [key: string]: Json }[] };
};
type Review = { [key: string]: Json } & { request: { [key: string]: Json } };

function ruleMatches(rule: Rule, target: Target): boolean {
  const has = (list: string[] | undefined, value: string) => (list ?? []).includes('*') || (list ?? []).includes(value);
  const scope = rule.scope ?? '*';
  const scopeOk = scope === '*' || (scope === 'Namespaced') === target.namespaced;
  return (
    has(rule.operations, target.operation) &&
    has(rule.apiGroups, target.group) &&
    has(rule.apiVersions, target.version) &&
    has(rule.resources, target.resource) &&
    scopeOk
  );
}

/** Only the kubernetes.io/metadata.name expressions the emitter writes. */
function selectorMatches(selector: Selector | undefined, namespace: string | undefined): boolean {
  if (namespace === undefined) return true;
  return (selector?.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (key !== NAMESPACE_NAME_LABEL) return true;
    return operator === 'In' ? values.includes(namespace) : operator === 'NotIn' ? !values.includes(namespace) : true;
  });
}

/** The apiserver's order: mutating configurations by name, then validating ones by name. */
const nameOf = (doc: WebhookConfiguration) => doc.metadata?.name ?? '';

/** The webhook's matchConditions, evaluated with CEL as the apiserver does (all must be true). */
function conditionsMatch(webhook: { matchConditions?: { expression: string }[] }, review: Review): boolean {
  const { request } = review;
  return (webhook.matchConditions ?? []).every(
    (c) => run(c.expression, { request, object: request.object, oldObject: request.oldObject }) === true,
  );
}

function callsFor(
  baseUrl: string,
  docs: readonly WebhookConfiguration[],
  target: Target,
  namespace: string | undefined,
  phases: readonly ('mutate' | 'validate')[],
  review: Review,
): PlannedCall[] {
  const calls: PlannedCall[] = [];
  for (const phase of phases) {
    const kind = phase === 'mutate' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
    const ordered = docs.filter((d) => d.kind === kind).sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
    for (const doc of ordered) {
      for (const webhook of doc.webhooks ?? []) {
        if (!(webhook.rules ?? []).some((r) => ruleMatches(r as Rule, target))) continue;
        if (!selectorMatches(webhook.namespaceSelector as Selector, namespace)) continue;
        if (!conditionsMatch(webhook, review)) continue;
        const { url } = webhook.clientConfig;
        if (url === undefined) throw new Error(`${webhook.name}: emitted without a URL`);
        // The path below the base URL: the load tool prepends LOAD_BASE_URL, base path included.
        calls.push({ webhook: webhook.name, phase, path: url.slice(baseUrl.length) });
      }
    }
  }
  return calls;
}

function review(
  target: Target,
  object: { [key: string]: Json } & { metadata: { [key: string]: Json } },
  extra: { [key: string]: Json } = {},
): Review {
  const namespace = target.namespaced ? object.metadata.namespace : undefined;
  const gvk = { group: target.group, version: target.version, kind: target.kind };
  const gvr = { group: target.group, version: target.version, resource: target.resource };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '',
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: object.metadata.name,
      ...(namespace !== undefined && { namespace }),
      operation: target.operation,
      userInfo: { username: 'load-tester', groups: ['system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'artillery' },
      ...extra,
    },
  };
}

/** The webhooks an operator would register with this configuration: its active plugins', as emit prints them. */
export function loadPlan(
  podCreateReview: { request: { object: PodJson } },
  pluginSet: PluginSet,
  auth: CallerAuthOption = { mode: 'mtls' },
  /** The target (LOAD_BASE_URL): in url-secret mode each capability is bound to it. */
  baseUrl = 'https://load.invalid',
): LoadPlan {
  const active = activePlugins(pluginSet);
  const configs = new Map(active.map((p) => [p.plugin.metadata.name, p.config]));
  // The paths the emitted configuration calls, each with its webhook's capability in url-secret mode.
  const docs = webhookConfigurations(
    active.map((p) => p.plugin),
    { baseUrl, auth, configs },
  );
  const ns = LOAD_NAMESPACES[0];

  const pods: Target = {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
  };
  const pod = structuredClone(podCreateReview.request.object);
  pod.metadata.namespace = ns;
  const newImagePod = structuredClone(pod);
  newImagePod.spec.containers[0].image = 'example.invalid/none:1';

  const services: Target = {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    resource: 'services',
    kind: 'Service',
    namespaced: true,
  };
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'svc', namespace: ns, creationTimestamp: null },
    spec: {
      type: 'ClusterIP',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }],
      selector: { app: 'web' },
      externalIPs: ['192.0.2.10'],
    },
    status: { loadBalancer: {} },
  };
  const namespaces: Target = {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
  };
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns, labels: { [NAMESPACE_NAME_LABEL]: ns }, creationTimestamp: null },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };

  const both = ['mutate', 'validate'] as const;
  const kind = (target: Target, body: Review, phases: readonly ('mutate' | 'validate')[] = both) => ({
    review: body,
    calls: callsFor(baseUrl, docs, target, ns, phases, body),
  });
  return {
    namespaceCreate: kind(namespaces, review(namespaces, namespace)),
    podCreate: kind(pods, review(pods, pod)),
    podCreateDryRun: kind(
      pods,
      review(pods, pod, {
        dryRun: true,
        options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] },
      }),
    ),
    podUpdate: kind(
      { ...pods, operation: 'UPDATE' },
      review({ ...pods, operation: 'UPDATE' }, newImagePod, {
        oldObject: pod,
        options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      }),
    ),
    // What validators see when a mutating webhook was skipped (its failurePolicy is Ignore): the
    // validating twins deny.
    podUnmutated: kind(pods, review(pods, pod), ['validate']),
    serviceWithExternalIps: kind(services, review(services, service)),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [out] = process.argv.slice(2);
  const fixture = JSON.parse(
    readFileSync(
      new URL('../../test/fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
      'utf8',
    ),
  );
  const pluginSet = loadPluginSet(plugins);
  process.stderr.write(`  ${selectionLine(pluginSet)}\n`);
  for (const configured of inactivePlugins(pluginSet))
    process.stderr.write(`  left out: ${inactiveLine(configured)}\n`);
  // CALLER_AUTH=url-secret (a server started so): the paths carry the capabilities emit would write.
  const auth: CallerAuthOption =
    process.env.CALLER_AUTH === 'url-secret'
      ? { mode: 'url-secret', key: readDeploymentKey(urlSecretFile()) }
      : { mode: 'mtls' };
  const baseUrl = checkBaseUrl(process.env.LOAD_BASE_URL ?? `https://127.0.0.1:${process.env.PORT || 8443}`);
  const plan = loadPlan(fixture, pluginSet, auth, baseUrl);
  const text = `${JSON.stringify({ namespaces: LOAD_NAMESPACES, kinds: plan }, null, 1)}\n`;
  if (out) writeFileSync(out, text);
  else process.stdout.write(text);
  for (const [name, kind] of Object.entries(plan))
    process.stderr.write(
      `  ${name}: ${kind.calls.length} webhook calls (${kind.calls.map((c) => c.webhook.split('.')[0]).join(', ')})\n`,
    );
}
