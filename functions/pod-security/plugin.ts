// PodSecurity: the Pod Security Standards (privileged, baseline, restricted) for pods and pod
// templates, by namespace label, with the cluster-wide defaults and exemptions of the operator's
// own PodSecurityConfiguration. Managed clusters run the built-in PodSecurity with `privileged`
// defaults and no exemptions, and let nobody change them: this plugin brings the defaults the
// operator chose to unlabelled namespaces. Upstream: staging/src/k8s.io/pod-security-admission
// (admission/admission.go for the modes, policy/ for the checks).
//
// One validating webhook judges pods (enforce, warn, audit) and pod controllers (warn, audit).
// Namespace labels are learned state (`needs: ['namespaces']`); Namespace writes are judged as
// upstream judges them (label values, exempt-namespace warnings) by a second judge on the same URL
// that fails open, and learned by the learning webhook when this plugin admits them.
//
// A namespace never seen (created before installation and not yet loaded by `npm run sync`) has
// labels we do not know. The built-in PodSecurity of the same cluster reads them, and a namespace
// labelled `enforce: privileged` must not get a refusal from us that the built-in would never give.
// So by default (POD_SECURITY_UNKNOWN_NAMESPACE=warn) nothing is enforced there: pods and pod
// controllers are admitted with one warning naming the missing sync, and no audit annotation (an
// audit-violations entry would claim a policy the namespace may not have). The warning also says
// what the configured defaults would say of this object if the namespace has no labels (for a pod,
// the enforce refusal, else the warn-level violations; for a controller, the warn-level ones, as
// upstream never enforces controllers): that is the answer the operator will get after the sync for
// an unlabelled namespace, so a user learns it now rather than from the first refusal later, and for
// a labelled namespace it is only advice the text qualifies. Exemptions (namespace, user, runtime
// class) need no labels and apply first, as ever. POD_SECURITY_UNKNOWN_NAMESPACE=defaults keeps the
// earlier answer: a never-seen namespace is judged as an unlabelled one, enforce included.
import type { Decision } from '../../lib/admission/decision.js';
import {
  allowed,
  denied,
  forbiddenMessage,
  resourceNameForMessage,
  withAuditAnnotations,
  withWarnings,
} from '../../lib/admission/decision.js';
import type { FieldError } from '../../lib/admission/field.js';
import { aggregateMessage, fieldErrorMessage } from '../../lib/admission/field.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import { definePlugin, DEFAULT_TIMEOUT_SECONDS } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import type { PluginState } from '../../lib/admission/ports.js';
import { StoreUnavailableError } from '../../lib/admission/ports.js';
import type { LevelVersion, Policy } from './api.js';
import {
  compareLevels,
  equivalentPolicy,
  explicitPolicyString,
  fullyPrivileged,
  levelVersionString,
  policyToEvaluate,
  sameLevelVersion,
  sameVersion,
} from './api.js';
import type { PodSecurityConfig } from './config.js';
import { parsePodSecurityConfiguration, UPSTREAM_NAME } from './config.js';
import type { AggregateResult } from './policy/registry.js';
import { aggregateCheckResults, forbiddenDetail, newEvaluator } from './policy/registry.js';
import type { PodMetadataLike, PodSpecLike } from './policy/types.js';
import { isSignificantPodUpdate } from './updates.js';
import { neverSeenWarning, unknownNamespaceRule } from '../../lib/state/never-seen.js';

const NAME = 'pod-security';

// Upstream's audit annotation keys; the apiserver stores a webhook's as `<webhook name>/<key>`.
export const ENFORCE_POLICY = 'enforce-policy';
export const AUDIT_VIOLATIONS = 'audit-violations';
export const EXEMPT = 'exempt';
export const ERROR = 'error';

/** Where each pod controller keeps its pod template (DefaultPodSpecExtractor). */
const CONTROLLERS: Readonly<
  Record<string, { group: string; template: (object: KubeObject) => unknown; optional?: true }>
> = {
  replicationcontrollers: { group: '', template: (o) => spec(o).template, optional: true },
  podtemplates: { group: '', template: (o) => (o as { template?: unknown }).template },
  replicasets: { group: 'apps', template: (o) => spec(o).template },
  deployments: { group: 'apps', template: (o) => spec(o).template },
  statefulsets: { group: 'apps', template: (o) => spec(o).template },
  daemonsets: { group: 'apps', template: (o) => spec(o).template },
  jobs: { group: 'batch', template: (o) => spec(o).template },
  cronjobs: { group: 'batch', template: (o) => spec(spec(o).jobTemplate as KubeObject).template },
};

const spec = (object: KubeObject | undefined): Record<string, unknown> => {
  const value = object?.spec;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
};

const rule = (group: string, resources: string[]): WebhookRule => ({
  operations: ['CREATE', 'UPDATE'],
  apiGroups: [group],
  apiVersions: ['v1'],
  resources,
  scope: 'Namespaced',
});

/** Pods and their ephemeral containers (enforced), and the pod controllers (warned and audited). */
const POD_RULES: readonly WebhookRule[] = [
  rule('', ['pods', 'pods/ephemeralcontainers', 'replicationcontrollers', 'podtemplates']),
  rule('apps', ['replicasets', 'deployments', 'statefulsets', 'daemonsets']),
  rule('batch', ['jobs', 'cronjobs']),
];

/**
 * Namespace writes, judged as upstream's webhook judges them (label values, exempt-namespace
 * warnings), on a judge that fails open: the built-in PodSecurity already refuses invalid labels,
 * so an outage must never block namespace writes. Their labels are learned by the learning
 * webhook, from the writes this judge admits.
 */
const NAMESPACE_RULES: readonly WebhookRule[] = [
  {
    operations: ['CREATE', 'UPDATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['namespaces'],
    scope: 'Cluster',
  },
];

const RULES: readonly WebhookRule[] = [...POD_RULES, ...NAMESPACE_RULES];

/** Pod subresources that never change the pod's spec. Any other is judged, as upstream. */
const IGNORED_POD_SUBRESOURCES = new Set([
  'exec',
  'attach',
  'binding',
  'eviction',
  'log',
  'portforward',
  'proxy',
  'status',
]);

const evaluator = newEvaluator();

/** What a namespace never seen gets: see the header. */
export type UnknownNamespaceRule = 'warn' | 'defaults';

/** The configuration file's defaults and exemptions, and the never-seen rule (environment). */
export type PodSecurityPluginConfig = PodSecurityConfig & { readonly unknownNamespace: UnknownNamespaceRule };

const exemptNamespace = (config: PodSecurityConfig, namespace: string) =>
  namespace !== '' && config.exemptions.namespaces.has(namespace);
const exemptUser = (config: PodSecurityConfig, username: string | undefined) =>
  !!username && config.exemptions.usernames.has(username);
const exemptRuntimeClass = (config: PodSecurityConfig, podSpec: PodSpecLike) =>
  typeof podSpec.runtimeClassName === 'string' &&
  podSpec.runtimeClassName !== '' &&
  config.exemptions.runtimeClasses.has(podSpec.runtimeClassName);

const exempt = (reason: 'namespace' | 'user' | 'runtimeClass') => withAuditAnnotations(allowed(), { [EXEMPT]: reason });

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export default definePlugin<PodSecurityPluginConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: NAME,
    summary:
      "Enforces the Pod Security Standards by namespace label, with the defaults and exemptions of the operator's PodSecurityConfiguration.",
    validating: {
      rules: RULES,
      failurePolicy: 'Fail',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
      failurePolicyGroups: [
        { rules: POD_RULES, failurePolicy: 'Fail' },
        { rules: NAMESPACE_RULES, failurePolicy: 'Ignore' },
      ],
    },
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
    // Without a PodSecurityConfiguration it would only repeat what the built-in PodSecurity already
    // enforces (labelled namespaces, privileged defaults) behind a webhook that fails closed: off
    // unless named. A bare entry serves upstream's defaults, as the built-in plugin without a file.
    optIn: true,
    optInReason:
      'the built-in PodSecurity already enforces namespace labels; name it to add your own defaults and exemptions',
  },

  configure: (raw): PodSecurityPluginConfig => ({
    ...parsePodSecurityConfiguration(raw),
    unknownNamespace: unknownNamespaceRule(UPSTREAM_NAME, NAME, ['warn', 'defaults'] as const, 'warn'),
  }),

  async validate(request, { config, state }) {
    const { group, resource } = request.resource;
    if (group === '' && resource === 'namespaces') return validateNamespace(request, config);
    if (group === '' && resource === 'pods') return validatePod(request, config, state);
    if (CONTROLLERS[resource]?.group === group) return validatePodController(request, config, state);
    return allowed();
  },
});

/** The namespace's policy, or `neverSeen` when its labels are unknown and the rule is warn. */
async function namespacePolicy(request: AdmissionRequest, config: PodSecurityPluginConfig, state: PluginState) {
  const learned = await state.learnedNamespaces.get(request.namespace);
  const neverSeen = learned === undefined && config.unknownNamespace !== 'defaults';
  return { ...policyToEvaluate(learned?.labels ?? {}, config.defaults), neverSeen };
}

/**
 * The answer in a never-seen namespace (rule warn, see the header): nothing enforced, one warning
 * that says what the configured defaults would say if the namespace has no labels.
 */
function neverSeenAnswer(
  request: AdmissionRequest,
  config: PodSecurityPluginConfig,
  metadata: PodMetadataLike,
  podSpec: PodSpecLike,
  pod: boolean,
): Decision {
  if (exemptRuntimeClass(config, podSpec)) return exempt('runtimeClass');
  const defaults = config.defaults;
  const verdict = (lv: LevelVersion, would: boolean) => {
    const result = aggregateCheckResults(evaluator.evaluatePod(lv, metadata, podSpec));
    if (result.allowed) return undefined;
    const verb = would ? 'would violate' : 'violates';
    return `${verb} PodSecurity ${JSON.stringify(levelVersionString(lv))}: ${forbiddenDetail(result)}`;
  };
  const said = (pod ? verdict(defaults.enforce, false) : undefined) ?? verdict(defaults.warn, true);
  const what = pod ? 'this pod was not judged by the configured defaults' : 'the configured defaults were not applied';
  const consequence =
    `its pod-security labels are unknown and ${what}` +
    (said === undefined ? '' : ` (if it has no labels, they say: ${said})`);
  return withWarnings(allowed(), neverSeenWarning(UPSTREAM_NAME, request.namespace, consequence));
}

/** ValidatePod: pods and their ephemeral containers are enforced, warned and audited. */
async function validatePod(
  request: AdmissionRequest,
  config: PodSecurityPluginConfig,
  state: PluginState,
): Promise<Decision> {
  if (IGNORED_POD_SUBRESOURCES.has(request.subResource)) return allowed();
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
  if (exemptNamespace(config, request.namespace)) return exempt('namespace');
  if (exemptUser(config, request.userInfo.username)) return exempt('user');
  const { policy, errors, neverSeen } = await namespacePolicy(request, config, state);
  // Upstream's shared answer for a fully privileged namespace, whatever versions it names.
  if (!neverSeen && errors.length === 0 && fullyPrivileged(policy))
    return withAuditAnnotations(allowed(), { [ENFORCE_POLICY]: 'privileged:latest' });
  const pod = request.object;
  if (!isObjectOfKind(pod, 'Pod')) return badRequest('failed to decode pod');
  if (request.operation === 'UPDATE') {
    if (!isObjectOfKind(request.oldObject, 'Pod')) return badRequest('failed to decode old pod');
    // Nothing the standards look at changed (labels, annotations, status...): always allowed.
    if (!isSignificantPodUpdate(pod, request.oldObject)) return allowed();
  }
  if (neverSeen) return neverSeenAnswer(request, config, pod.metadata ?? {}, spec(pod), true);
  return evaluatePod(request, config, policy, errors, pod.metadata ?? {}, spec(pod), true);
}

/** ValidatePodController: templates are only warned about and audited; the pods are enforced. */
async function validatePodController(
  request: AdmissionRequest,
  config: PodSecurityPluginConfig,
  state: PluginState,
): Promise<Decision> {
  if (request.subResource !== '') return allowed();
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
  if (exemptNamespace(config, request.namespace)) return exempt('namespace');
  if (exemptUser(config, request.userInfo.username)) return exempt('user');
  let resolved: Awaited<ReturnType<typeof namespacePolicy>>;
  try {
    resolved = await namespacePolicy(request, config, state);
  } catch (error) {
    // Upstream lets a controller through when its namespace cannot be read: nothing is enforced here.
    if (!(error instanceof StoreUnavailableError)) throw error;
    return withAuditAnnotations(allowed(), {
      [ERROR]: `failed to lookup namespace ${JSON.stringify(request.namespace)}: ${error.message}`,
    });
  }
  const { policy, errors, neverSeen } = resolved;
  if (!neverSeen && errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged')
    return allowed();
  const object = request.object;
  if (!isObject(object)) return withAuditAnnotations(allowed(), { [ERROR]: 'failed to decode object' });
  const extractor = CONTROLLERS[request.resource.resource];
  const template = extractor.template(object as KubeObject);
  // A ReplicationController's template is optional; without one there is nothing to judge.
  if ((template === undefined || template === null) && extractor.optional) return allowed();
  const podTemplate = isObject(template) ? template : {};
  const metadata = isObject(podTemplate.metadata) ? podTemplate.metadata : {};
  if (neverSeen) return neverSeenAnswer(request, config, metadata, spec(podTemplate as KubeObject), false);
  return evaluatePod(request, config, policy, errors, metadata, spec(podTemplate as KubeObject), false);
}

/**
 * EvaluatePod: enforce (pods only), then audit, then warn; a mode that shares its level and
 * version with an earlier one reuses that evaluation. A denied request gets no warnings.
 */
function evaluatePod(
  request: AdmissionRequest,
  config: PodSecurityConfig,
  policy: Policy,
  policyErrors: readonly FieldError[],
  metadata: PodMetadataLike,
  podSpec: PodSpecLike,
  enforce: boolean,
): Decision {
  if (exemptRuntimeClass(config, podSpec)) return exempt('runtimeClass');
  const annotations: Record<string, string> = {};
  if (policyErrors.length > 0)
    annotations[ERROR] = `Failed to parse policy: ${aggregateMessage(policyErrors.map(fieldErrorMessage))}`;
  const cached: { lv: LevelVersion; result: AggregateResult }[] = [];
  const resultFor = (lv: LevelVersion) => {
    const hit = cached.find((c) => sameLevelVersion(c.lv, lv));
    if (hit) return hit.result;
    const result = aggregateCheckResults(evaluator.evaluatePod(lv, metadata, podSpec));
    cached.push({ lv, result });
    return result;
  };
  let decision: Decision = allowed();
  if (enforce) {
    annotations[ENFORCE_POLICY] = levelVersionString(policy.enforce);
    const result = resultFor(policy.enforce);
    if (!result.allowed)
      decision = forbidden(
        request,
        `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(result)}`,
      );
  }
  const audit = resultFor(policy.audit);
  if (!audit.allowed)
    annotations[AUDIT_VIOLATIONS] =
      `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`;
  if (decision.kind === 'allowed') {
    const warn = resultFor(policy.warn);
    if (!warn.allowed)
      decision = withWarnings(
        decision,
        `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(warn)}`,
      );
  }
  return Object.keys(annotations).length > 0 ? withAuditAnnotations(decision, annotations) : decision;
}

/** apierrors.NewForbidden(attrs.GetResource().GroupResource(), attrs.GetName(), err). */
function forbidden(request: AdmissionRequest, error: string): Decision {
  return denied(forbiddenMessage(request, error), 403, 'Forbidden', {
    name: resourceNameForMessage(request),
    group: request.resource.group,
    kind: request.resource.resource,
  });
}

function badRequest(message: string): Decision {
  return withAuditAnnotations(denied(message, 400, 'BadRequest'), { [ERROR]: message });
}

/**
 * ValidateNamespace: label values must parse (on create, and on update when their errors changed);
 * an exempt namespace that sets a policy other than the defaults is warned that it will be ignored.
 * Upstream also dry-runs the namespace's pods against a stricter enforce level and warns about
 * them; without a pod listing that warning is left to the built-in PodSecurity.
 */
function validateNamespace(request: AdmissionRequest, config: PodSecurityConfig): Decision {
  if (request.subResource !== '') return allowed();
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
  const namespace = request.object;
  if (!isObjectOfKind(namespace, 'Namespace')) return badRequest('failed to decode namespace');
  const name =
    request.namespace || request.name || String((namespace.metadata as { name?: unknown } | undefined)?.name ?? '');
  const labelsOf = (object: Record<string, unknown>) => {
    const labels = (object.metadata as { labels?: unknown } | undefined)?.labels;
    return isObject(labels) ? (labels as Record<string, string>) : {};
  };
  const newLabels = labelsOf(namespace);
  const { policy: newPolicy, errors: newErrors } = policyToEvaluate(newLabels, config.defaults);
  const exemptWarning = () => {
    if (!exemptNamespace(config, name) || fullyPrivileged(newPolicy) || equivalentPolicy(newPolicy, config.defaults))
      return allowed();
    return withWarnings(
      allowed(),
      `namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${explicitPolicyString(newPolicy, newLabels)}) will be ignored`,
    );
  };
  if (request.operation === 'CREATE')
    return newErrors.length > 0 ? invalidNamespace(request, newErrors) : exemptWarning();

  // Upstream's text, double space included.
  if (!isObjectOfKind(request.oldObject, 'Namespace')) return badRequest('failed to decode  old namespace');
  const { policy: oldPolicy, errors: oldErrors } = policyToEvaluate(labelsOf(request.oldObject), config.defaults);
  const sameErrors = newErrors.map(fieldErrorMessage).join('\n') === oldErrors.map(fieldErrorMessage).join('\n');
  if (newErrors.length > 0 && (oldErrors.length === 0 || !sameErrors)) return invalidNamespace(request, newErrors);
  // Upstream re-checks existing pods only when the enforce level got stricter.
  if (sameLevelVersion(newPolicy.enforce, oldPolicy.enforce) || newPolicy.enforce.level === 'privileged')
    return allowed();
  if (
    sameVersion(newPolicy.enforce.version, oldPolicy.enforce.version) &&
    compareLevels(newPolicy.enforce.level, oldPolicy.enforce.level) < 1
  )
    return allowed();
  return exemptWarning();
}

/** apierrors.NewInvalid(Namespace, name, errs): 422 with each field error as a cause. */
function invalidNamespace(request: AdmissionRequest, errors: readonly FieldError[]): Decision {
  const name = resourceNameForMessage(request);
  const message = `${request.kind.kind} ${JSON.stringify(name)} is invalid: ${aggregateMessage(errors.map(fieldErrorMessage))}`;
  return denied(message, 422, 'Invalid', {
    name,
    group: request.kind.group,
    kind: request.kind.kind,
    // Label errors are all field.Invalid: cause type FieldValueInvalid, message the error's body.
    causes: errors.map((e) => ({
      reason: 'FieldValueInvalid',
      message: fieldErrorMessage(e).slice(e.field.length + 2),
      field: e.field,
    })),
  });
}
