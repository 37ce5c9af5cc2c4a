// The cluster-side registration of our plugins: admissionregistration.k8s.io/v1 webhook
// configurations with URL clientConfigs, built from each plugin's metadata with the defaults of
// Kubernetes' admission webhook good-practice guide (design.md, "Webhook configuration defaults").
//
// One MutatingWebhookConfiguration and one ValidatingWebhookConfiguration *per plugin*, named
// `serverless-admission-<plugin>`: a plugin is deployed, staged, rolled back and removed on its
// own (`kubectl delete mutatingwebhookconfiguration serverless-admission-<plugin>`), exactly as
// its Lambda is, and applying a subset (`--plugins`) never removes the webhooks of the others.
// kubernetes-models' interfaces (type-only, nothing bundled): kubernetes-types 1.30 lacks
// RuleWithOperations.resources and .scope.
import type {
  IMutatingWebhook as MutatingWebhook,
  IMutatingWebhookConfiguration as MutatingWebhookConfiguration,
  IRuleWithOperations as RuleWithOperations,
  IValidatingWebhook as ValidatingWebhook,
  IValidatingWebhookConfiguration as ValidatingWebhookConfiguration,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import type { AnyAdmissionPlugin, PhaseMetadata, PluginMetadata, WebhookRule } from '../../lib/admission/plugin.js';
import { LEARNING_TIMEOUT_SECONDS } from '../../lib/admission/plugin.js';
import type { KeyObject } from 'node:crypto';
import { capabilityFor, deploymentOfBaseUrl } from '../../lib/http/capability.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { learningEndpointRules } from '../../lib/admission/learning.js';
import type { LabelSelectorRequirement } from '../../lib/admission/label-selector.js';
import { negatedRequirement } from '../../lib/admission/label-selector.js';
import type { Exemptions, PluginEnforcement } from '../../lib/config/enforcement.js';
import { ENFORCE } from '../../lib/config/enforcement.js';

export type Phase = 'mutate' | 'validate';
export type { Endpoint } from '../../lib/http/webhook-path.js';
export type WebhookConfiguration = MutatingWebhookConfiguration | ValidatingWebhookConfiguration;

/** The suffix that turns a plugin name into a webhook name of a DNS-subdomain shape. */
export const WEBHOOK_DOMAIN = 'serverless-admission.io';
export const CONFIGURATION_PREFIX = 'serverless-admission-';
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-node-lease'] as const;
/** Set by the apiserver on every namespace since Kubernetes 1.21. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
export const ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/**
 * Objects no webhook of ours may ever match (the guide: leader election, authentication and
 * authorization must keep working when a webhook is down or slow).
 */
export const PROTECTED_RESOURCES = [
  { group: 'coordination.k8s.io', resource: 'leases', scope: 'Namespaced' },
  { group: 'authentication.k8s.io', resource: 'tokenreviews', scope: 'Cluster' },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', scope: 'Cluster' },
] as const;
export type ProtectedResource = (typeof PROTECTED_RESOURCES)[number];

/** The matchCondition that keeps a wildcard rule off the protected resources it would reach. */
export const EXCLUDE_PROTECTED_CONDITION = 'exclude-protected-resources';

export class EmitError extends Error {
  override readonly name = 'EmitError';
}

/** mTLS, or capability URLs signed with the deployment key (lib/http/capability.ts). */
export type CallerAuthOption = { readonly mode: 'mtls' } | { readonly mode: 'url-secret'; readonly key: KeyObject };

export interface EmitOptions {
  /** https://host[:port][/prefix], already checked by checkBaseUrl. */
  readonly baseUrl: string;
  readonly auth: CallerAuthOption;
  /** base64 of the PEM bundle that signs the webhook host's certificate. */
  readonly caBundle?: string;
  /** Staged rollout: failurePolicy Ignore everywhere and only this namespace. */
  readonly stagedNamespace?: string;
  /** The namespace the webhook itself runs in, if any: excluded like the system namespaces. */
  readonly webhookNamespace?: string;
  /** Drop matchConditions for clusters older than 1.28 (where the field is unknown). */
  readonly matchConditions?: boolean;
  /** Configuration of plugins whose rules depend on it (validatingRulesFor). */
  readonly configs?: ReadonlyMap<string, unknown>;
  /** Each plugin's `enforcement` and `exemptions` (by plugin name); Deny and none when absent. */
  readonly enforcement?: ReadonlyMap<string, PluginEnforcement>;
  /**
   * The deployment reads the cluster: no request teaches, so no learning webhook is written but
   * for the requests a plugin's phases only observe (ResourceQuota's confirmations and releases).
   */
  readonly readsCluster?: boolean;
  /** A fleet's cluster (lib/config/fleet.ts): its name opens every URL and every capability names it. */
  readonly cluster?: string;
}

/** Checks and normalises --base-url: https, a host, no credentials, query or fragment. */
export function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EmitError(`--base-url ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'https:')
    throw new EmitError(`--base-url must be https (the apiserver only calls webhooks over TLS), got ${url.protocol}`);
  if (url.hostname === '') throw new EmitError('--base-url needs a host');
  if (url.username !== '' || url.password !== '') throw new EmitError('--base-url must not carry credentials');
  if (url.search !== '' || raw.includes('?'))
    throw new EmitError('--base-url must not have a query (the apiserver appends ?timeout=)');
  if (url.hash !== '' || raw.includes('#')) throw new EmitError('--base-url must not have a fragment');
  return url.href.replace(/\/+$/, '');
}

/**
 * The URL of one endpoint; in url-secret mode with that endpoint's own capability first, bound to
 * the deployment the base URL names (its host, port and path: lib/http/capability.ts).
 */
export function webhookUrl(
  baseUrl: string,
  plugin: string,
  endpoint: Endpoint,
  auth: CallerAuthOption,
  cluster?: string,
): string {
  const inCluster = cluster === undefined ? {} : { cluster };
  const capability =
    auth.mode === 'url-secret'
      ? capabilityFor(auth.key, { deployment: deploymentOfBaseUrl(baseUrl), ...inCluster, grant: { plugin, endpoint } })
      : undefined;
  return `${baseUrl}${formatWebhookPath({ plugin, endpoint, ...inCluster, ...(capability !== undefined && { capability }) })}`;
}

export function webhookName(plugin: string, endpoint: Endpoint): string {
  return `${plugin}.${endpoint}.${WEBHOOK_DOMAIN}`;
}

/** The judge of a plugin's failurePolicy Ignore group, beside its Fail one (failurePolicyGroups). */
export function ignoreGroupWebhookName(plugin: string, phase: Phase): string {
  return `${plugin}.${phase}-ignore.${WEBHOOK_DOMAIN}`;
}

export function configurationName(plugin: string): string {
  return `${CONFIGURATION_PREFIX}${plugin}`;
}

/** The protected resources a rule reaches, wildcards and scope considered. */
export function protectedResourcesReached(
  rule: Pick<WebhookRule, 'apiGroups' | 'resources' | 'scope'>,
): ProtectedResource[] {
  const scope = rule.scope ?? '*';
  return PROTECTED_RESOURCES.filter(
    (p) =>
      (scope === '*' || scope === p.scope) &&
      rule.apiGroups.some((g) => g === '*' || g === p.group) &&
      rule.resources.some((r) => ['*', p.resource].includes(r.split('/')[0])),
  );
}

/** The protected resources a rule names outright: never acceptable. */
function protectedResourcesNamed(rule: WebhookRule): ProtectedResource[] {
  return protectedResourcesReached(rule).filter(
    (p) => rule.apiGroups.includes(p.group) && rule.resources.some((r) => r.split('/')[0] === p.resource),
  );
}

/** A CEL matchCondition that is false exactly for the given resources. */
export function excludeProtectedCondition(reached: readonly ProtectedResource[]): { name: string; expression: string } {
  const terms = reached.map(
    (p) => `(request.resource.group == '${p.group}' && request.resource.resource == '${p.resource}')`,
  );
  return { name: EXCLUDE_PROTECTED_CONDITION, expression: `!(${terms.join(' || ')})` };
}

const matchesAll = (have: readonly string[], want: readonly string[]) =>
  have.includes('*') || want.every((w) => have.includes(w));

// The apiserver's rule matching (rules.Matcher.resource): `pods/*` matches pods and every
// subresource of pods, `*` every resource (no subresource), `*/*` everything.
function resourceMatches(pattern: string, resource: string): boolean {
  if (pattern === resource) return true;
  const [patternMain, patternSub = ''] = pattern.split('/');
  const [main, sub = ''] = resource.split('/');
  return (patternMain === '*' || patternMain === main) && (patternSub === '*' || patternSub === sub);
}

const intersects = (a: readonly string[], b: readonly string[]) =>
  a.includes('*') || b.includes('*') || a.some((x) => b.includes(x));

/** True when some request matches both rules. */
export function rulesOverlap(a: WebhookRule, b: WebhookRule): boolean {
  const scopes = [a.scope ?? '*', b.scope ?? '*'];
  return (
    intersects(a.operations, b.operations) &&
    intersects(a.apiGroups, b.apiGroups) &&
    intersects(a.apiVersions, b.apiVersions) &&
    a.resources.some((x) => b.resources.some((y) => resourceMatches(x, y) || resourceMatches(y, x))) &&
    (scopes.includes('*') || scopes[0] === scopes[1])
  );
}

/** True when every request `inner` matches is also matched by `outer`: `inner` adds nothing. */
export function ruleCovers(outer: WebhookRule, inner: WebhookRule): boolean {
  const scope = (rule: WebhookRule) => rule.scope ?? '*';
  return (
    matchesAll(outer.operations, inner.operations) &&
    matchesAll(outer.apiGroups, inner.apiGroups) &&
    matchesAll(outer.apiVersions, inner.apiVersions) &&
    inner.resources.every((r) => outer.resources.some((p) => resourceMatches(p, r))) &&
    (scope(outer) === '*' || scope(outer) === scope(inner))
  );
}

function toRule(rule: WebhookRule): RuleWithOperations {
  return {
    operations: [...rule.operations],
    apiGroups: [...rule.apiGroups],
    apiVersions: [...rule.apiVersions],
    resources: [...rule.resources],
    scope: rule.scope ?? '*',
  } as RuleWithOperations;
}

/** Refuses rules that name a resource the guide forbids; drops exact repeats. */
function checkedRules(rules: readonly WebhookRule[], metadata: PluginMetadata, phase: Phase): WebhookRule[] {
  const unique = [...new Map(rules.map((r) => [JSON.stringify(toRule(r)), r])).values()];
  for (const rule of unique) {
    const named = protectedResourcesNamed(rule);
    if (named.length > 0) {
      const list = named.map((p) => `${p.group}/${p.resource}`).join(', ');
      throw new EmitError(
        `${metadata.name}: a ${phase} rule (${JSON.stringify(toRule(rule))}) names ${list}; the good-practice guide forbids webhooks on those`,
      );
    }
  }
  return unique;
}

/** The requests the plugin judges in this phase: its own rules, or those its configuration gives. */
function judgedRules(plugin: AnyAdmissionPlugin, phase: Phase, options: EmitOptions): WebhookRule[] {
  const { metadata } = plugin;
  if (phase === 'mutate') return [...(effectivePhase(plugin, phase, options)?.rules ?? [])];
  if (plugin.validatingRulesFor) return [...plugin.validatingRulesFor(options.configs?.get(metadata.name))];
  return [...(metadata.validating?.rules ?? [])];
}

type LabelSelector = NonNullable<MutatingWebhook['namespaceSelector']>;

function namespaceSelector(metadata: PluginMetadata, options: EmitOptions): LabelSelector {
  if (options.stagedNamespace !== undefined) {
    return { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'In', values: [options.stagedNamespace] }] };
  }
  if (metadata.systemNamespaces === 'include') return {};
  const excluded = [...SYSTEM_NAMESPACES, ...(options.webhookNamespace ? [options.webhookNamespace] : [])];
  return { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: [...new Set(excluded)] }] };
}

export function pluginEnforcementOf(metadata: PluginMetadata, options: EmitOptions): PluginEnforcement {
  return options.enforcement?.get(metadata.name) ?? ENFORCE;
}

/** `selector` with one more requirement ANDed in (the negation of an exemption selector). */
function withRequirement(selector: LabelSelector, requirement: LabelSelectorRequirement | undefined): LabelSelector {
  if (requirement === undefined) return selector;
  const expression = {
    key: requirement.key,
    operator: requirement.operator,
    ...(requirement.values && { values: [...requirement.values] }),
  };
  return { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), expression] };
}

/**
 * One line per exemption the emitted configuration cannot carry, so only the handler applies it
 * (the request is still sent, and admitted unchanged): an objectSelector of several requirements,
 * and without matchConditions the namespace names, usernames and groups.
 */
export function handlerOnlyExemptions(
  plugins: readonly { plugin: AnyAdmissionPlugin; exemptions: Exemptions }[],
  matchConditions: boolean,
): string[] {
  const lines: string[] = [];
  for (const { plugin, exemptions } of plugins) {
    const name = plugin.metadata.upstreamName;
    if (exemptions.objectSelector && negatedRequirement(exemptions.objectSelector) === undefined)
      lines.push(`${name}: exemptions.objectSelector has several requirements: checked in the handler only`);
    if (exemptions.namespaceSelector && negatedRequirement(exemptions.namespaceSelector) === undefined)
      lines.push(
        `${name}: exemptions.namespaceSelector has several requirements: checked in the handler only, against learned namespaces`,
      );
    const named = (['namespaces', 'usernames', 'groups'] as const).filter((k) => exemptions[k].length > 0);
    if (!matchConditions && named.length > 0)
      lines.push(`${name}: exemptions.${named.join(', ')}: checked in the handler only (--no-match-conditions)`);
  }
  return lines;
}

/** The matchCondition that keeps exempt namespaces, users and groups from calling the plugin. */
export const EXEMPTIONS_CONDITION = 'exemptions';

const celList = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;

/**
 * A CEL matchCondition false exactly for the exempt namespace names (a Namespace's own name
 * included), usernames and groups; undefined when there are none.
 */
export function exemptionsCondition(exemptions: Exemptions): { name: string; expression: string } | undefined {
  const terms: string[] = [];
  if (exemptions.namespaces.length > 0) {
    const names = celList(exemptions.namespaces);
    terms.push(
      `request.namespace in ${names}`,
      `(request.resource.group == '' && request.resource.resource == 'namespaces' && request.name in ${names})`,
    );
  }
  if (exemptions.usernames.length > 0) terms.push(`request.userInfo.username in ${celList(exemptions.usernames)}`);
  if (exemptions.groups.length > 0) terms.push(`request.userInfo.groups.exists(g, g in ${celList(exemptions.groups)})`);
  if (terms.length === 0) return undefined;
  return { name: EXEMPTIONS_CONDITION, expression: `!(${terms.join(' || ')})` };
}

function phaseMetadata(metadata: PluginMetadata, phase: Phase): PhaseMetadata | undefined {
  return phase === 'mutate' ? metadata.mutating : metadata.validating;
}

/** The phase as this configuration makes it (mutatingPhaseFor: MutatingAdmissionPolicy's policies). */
function effectivePhase(plugin: AnyAdmissionPlugin, phase: Phase, options: EmitOptions): PhaseMetadata | undefined {
  const declared = phaseMetadata(plugin.metadata, phase);
  const config = options.configs?.get(plugin.metadata.name);
  if (phase !== 'mutate' || !declared || !plugin.mutatingPhaseFor || config === undefined) return declared;
  return { ...declared, ...plugin.mutatingPhaseFor(config) };
}

export function learningWebhookName(plugin: string): string {
  return webhookName(plugin, 'learn');
}

/** One webhook to emit: a judge of the plugin's (`mutate`, `validate`) or its learning webhook. */
interface WebhookPlan {
  readonly endpoint: Endpoint;
  /** A judge of the failurePolicy Ignore group, beside the Fail group's (failurePolicyGroups). */
  readonly ignoreGroup?: boolean;
  readonly rules: readonly WebhookRule[];
  readonly matchConditions: readonly { readonly name: string; readonly expression: string }[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
}

/**
 * The webhooks of one phase: the judges of what the plugin decides. A phase that judges nothing (a
 * ValidatingAdmissionPolicy without policies) emits none. A phase whose Fail and Ignore policies
 * split its rules (failurePolicyGroups) gets one judge per group, on the same URL.
 */
export function webhookPlans(plugin: AnyAdmissionPlugin, phase: Phase, options: EmitOptions): WebhookPlan[] {
  const judge = judgePlan(plugin, phase, options);
  if (judge === undefined) return [];
  const groups = effectivePhase(plugin, phase, options)?.failurePolicyGroups;
  // A staged rollout fails open everywhere anyway: one judge is enough.
  if (!groups || groups.length < 2 || options.stagedNamespace !== undefined) return [judge];
  return groups.map(
    (group): WebhookPlan => ({
      ...judge,
      rules: checkedRules(group.rules, plugin.metadata, phase),
      failurePolicy: group.failurePolicy,
      ignoreGroup: group.failurePolicy === 'Ignore',
    }),
  );
}

function judgePlan(plugin: AnyAdmissionPlugin, phase: Phase, options: EmitOptions): WebhookPlan | undefined {
  const { metadata } = plugin;
  const meta = effectivePhase(plugin, phase, options);
  if (!meta) return undefined;
  const judged = checkedRules(judgedRules(plugin, phase, options), metadata, phase);
  if (judged.length === 0) return undefined;
  const { exemptions } = pluginEnforcementOf(metadata, options);
  const exemptionCondition = options.matchConditions === false ? undefined : exemptionsCondition(exemptions);
  const conditions =
    options.matchConditions === false
      ? []
      : [...(meta.matchConditions ?? []), ...(exemptionCondition ? [exemptionCondition] : [])];
  return {
    endpoint: phase,
    rules: judged,
    matchConditions: conditions,
    failurePolicy: meta.failurePolicy,
    timeoutSeconds: meta.timeoutSeconds,
  };
}

/**
 * The learning webhook: every write the plugin learns from (`needs`) and every request its phases
 * only observe, sent to its own `learn` endpoint, which records and always admits. It fails open
 * (an outage costs observations, never the cluster's writes), so its URL never appears in a
 * user's error message; and only it can change learned state, since a judging endpoint never
 * learns. Requests a judge also sees are sent to both.
 */
export function learningPlan(plugin: AnyAdmissionPlugin, readsCluster = false): WebhookPlan | undefined {
  const learned = checkedRules(learningEndpointRules(plugin.metadata, readsCluster), plugin.metadata, 'validate');
  if (learned.length === 0) return undefined;
  return {
    endpoint: 'learn',
    rules: learned,
    matchConditions: [],
    failurePolicy: 'Ignore',
    timeoutSeconds: LEARNING_TIMEOUT_SECONDS,
  };
}

function webhookOf(plugin: AnyAdmissionPlugin, options: EmitOptions, plan: WebhookPlan): ValidatingWebhook {
  const { metadata } = plugin;
  const { endpoint } = plan;
  if (!Number.isInteger(plan.timeoutSeconds) || plan.timeoutSeconds < 1 || plan.timeoutSeconds > 10) {
    throw new EmitError(
      `${metadata.name}: ${endpoint} timeoutSeconds must be an integer from 1 to 10, got ${plan.timeoutSeconds}`,
    );
  }
  const learning = endpoint === 'learn';
  // Learning cluster state is a write too (dry runs excluded), hence NoneOnDryRun on the learning
  // webhook; a judge writes only when the plugin records side effects of its own.
  const writes = learning || metadata.writes;
  // Wildcard rules (NamespaceLifecycle: every namespaced resource) reach leases and the like; a
  // matchCondition keeps the apiserver from calling us for them. Without matchConditions
  // (clusters before 1.28) such a plugin cannot be registered safely.
  const reached = [...new Set(plan.rules.flatMap(protectedResourcesReached))];
  if (reached.length > 0 && options.matchConditions === false) {
    const list = reached.map((p) => `${p.group}/${p.resource}`).join(', ');
    throw new EmitError(
      `${metadata.name}: its ${endpoint} rules reach ${list}, which only a matchCondition can exclude; drop --no-match-conditions (Kubernetes 1.28+) or leave the plugin out (--plugins)`,
    );
  }
  const matchConditions = [
    ...plan.matchConditions,
    ...(reached.length > 0 ? [excludeProtectedCondition(reached)] : []),
  ];
  // A plugin that cannot refuse (Warn, Audit) must not block writes through an outage either.
  // Label exemptions select the judging webhook away from exempt objects (no call at all); the
  // learning webhook keeps seeing them, since learning cluster state is not judging it.
  const { enforcement, exemptions } = pluginEnforcementOf(metadata, options);
  const failOpen = options.stagedNamespace !== undefined || enforcement !== 'Deny';
  const namespaces = namespaceSelector(metadata, options);
  return {
    name: plan.ignoreGroup
      ? ignoreGroupWebhookName(metadata.name, endpoint as Phase)
      : webhookName(metadata.name, endpoint),
    clientConfig: {
      url: webhookUrl(options.baseUrl, metadata.name, endpoint, options.auth, options.cluster),
      ...(options.caBundle && { caBundle: options.caBundle }),
    },
    rules: plan.rules.map(toRule),
    failurePolicy: failOpen ? 'Ignore' : plan.failurePolicy,
    matchPolicy: 'Equivalent',
    namespaceSelector:
      !learning && exemptions.namespaceSelector
        ? withRequirement(namespaces, negatedRequirement(exemptions.namespaceSelector))
        : namespaces,
    objectSelector:
      !learning && exemptions.objectSelector ? withRequirement({}, negatedRequirement(exemptions.objectSelector)) : {},
    sideEffects: writes ? 'NoneOnDryRun' : 'None',
    timeoutSeconds: plan.timeoutSeconds,
    admissionReviewVersions: [...ADMISSION_REVIEW_VERSIONS],
    ...(matchConditions.length > 0 && {
      matchConditions: matchConditions.map((c) => ({ name: c.name, expression: c.expression })),
    }),
  };
}

function objectMeta(metadata: PluginMetadata, options: EmitOptions) {
  return {
    name: configurationName(metadata.name),
    labels: {
      'app.kubernetes.io/name': 'serverless-admission',
      'app.kubernetes.io/component': metadata.name,
      'app.kubernetes.io/managed-by': 'serverless-admission-emit',
      [`${WEBHOOK_DOMAIN}/rollout`]: options.stagedNamespace !== undefined ? 'staged' : 'full',
    },
    annotations: {
      [`${WEBHOOK_DOMAIN}/plugin`]: metadata.upstreamName,
      [`${WEBHOOK_DOMAIN}/summary`]: metadata.summary,
      [`${WEBHOOK_DOMAIN}/caller-auth`]: options.auth.mode,
      ...(options.stagedNamespace !== undefined && { [`${WEBHOOK_DOMAIN}/staged-namespace`]: options.stagedNamespace }),
    },
  };
}

export function mutatingConfiguration(
  plugin: AnyAdmissionPlugin,
  options: EmitOptions,
): MutatingWebhookConfiguration | undefined {
  const { metadata } = plugin;
  const webhooks = webhookPlans(plugin, 'mutate', options).map(
    (plan): MutatingWebhook => ({
      ...webhookOf(plugin, options, plan),
      reinvocationPolicy: effectivePhase(plugin, 'mutate', options)?.reinvocationPolicy ?? 'Never',
    }),
  );
  if (webhooks.length === 0) return undefined;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: objectMeta(metadata, options),
    webhooks,
  };
}

export function validatingConfiguration(
  plugin: AnyAdmissionPlugin,
  options: EmitOptions,
): ValidatingWebhookConfiguration | undefined {
  const { metadata } = plugin;
  // The learning webhook is a validating one whatever the plugin's phases: it sees the final
  // object, runs beside the judges, and never mutates.
  const learning = learningPlan(plugin, options.readsCluster);
  const webhooks = [...webhookPlans(plugin, 'validate', options), ...(learning ? [learning] : [])].map((plan) =>
    webhookOf(plugin, options, plan),
  );
  if (webhooks.length === 0) return undefined;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: objectMeta(metadata, options),
    webhooks,
  };
}

/** Every configuration for the given plugins: per plugin, its mutating one, then its validating one. */
export function webhookConfigurations(
  plugins: readonly AnyAdmissionPlugin[],
  options: EmitOptions,
): WebhookConfiguration[] {
  return plugins.flatMap((plugin) =>
    [mutatingConfiguration(plugin, options), validatingConfiguration(plugin, options)].filter((c) => c !== undefined),
  );
}
