// The cluster objects of a plugin served natively: each policy it compiles to, with one binding
// of the same name. What the plugin's webhook configuration says about where it applies is said
// here the same way: the same excluded namespaces (namespaceSelector on the binding), the same
// exemptions (names, users and groups as a matchCondition; a one-requirement selector negated on
// the binding, a wider one as a matchCondition over the labels), and the entry's enforcement as
// the binding's validationActions (Deny, Warn, Audit).
import type { LabelSelector, LabelSelectorRequirement } from '../../lib/admission/label-selector.js';
import { negatedRequirement, requirementsOf } from '../../lib/admission/label-selector.js';
import type { PluginMetadata, WebhookRule } from '../../lib/admission/plugin.js';
import type { Enforcement, Exemptions } from '../../lib/config/enforcement.js';
import {
  CONFIGURATION_PREFIX,
  exemptionsCondition,
  NAMESPACE_NAME_LABEL,
  PROTECTED_RESOURCES,
  protectedResourcesReached,
  SYSTEM_NAMESPACES,
  WEBHOOK_DOMAIN,
} from '../emit/webhooks.js';
import type { MutatingPolicy, NamedExpression, NativePolicy, ValidatingPolicy } from './policy.js';
import { celString, celStrings } from './policy.js';

export const ADMISSION_REGISTRATION_V1 = 'admissionregistration.k8s.io/v1';
/** Every native object carries it: `kubectl get validatingadmissionpolicies -l serverless-admission.io/served-as=native`. */
export const SERVED_AS_LABEL = `${WEBHOOK_DOMAIN}/served-as`;

export type NativeObject = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly spec: Record<string, unknown>;
};

/** Where and how a plugin's policies apply: the same inputs its webhook configuration has. */
export interface Deployment {
  readonly enforcement: Enforcement;
  readonly exemptions: Exemptions;
  /** Also excluded, as the webhook excludes its own namespace. */
  readonly webhookNamespace?: string;
  /** Staged rollout: only this namespace, and errors never refuse. */
  readonly stagedNamespace?: string;
}

/** `serverless-admission-<plugin>[-<part>]`: the policy's and its binding's name. */
export const nativeName = (plugin: string, part?: string): string =>
  `${CONFIGURATION_PREFIX}${plugin}${part === undefined ? '' : `-${part}`}`;

function toRule(rule: WebhookRule) {
  return {
    apiGroups: [...rule.apiGroups],
    apiVersions: [...rule.apiVersions],
    operations: [...rule.operations],
    resources: [...rule.resources],
    scope: rule.scope ?? '*',
  };
}

const selectorObject = (requirements: readonly LabelSelectorRequirement[]) => ({
  matchExpressions: requirements.map((r) => ({
    key: r.key,
    operator: r.operator,
    ...(r.values !== undefined && r.values.length > 0 && { values: [...r.values] }),
  })),
});

/** A CEL condition: `labels` (a map expression) satisfies every requirement of the selector. */
export function selectorExpression(selector: LabelSelector, labels: string): string {
  const terms = requirementsOf(selector).map(({ key, operator, values = [] }) => {
    const k = celString(key);
    switch (operator) {
      case 'In':
        return `(${k} in ${labels} && ${labels}[${k}] in ${celStrings(values)})`;
      case 'NotIn':
        return `(!(${k} in ${labels}) || !(${labels}[${k}] in ${celStrings(values)}))`;
      case 'Exists':
        return `(${k} in ${labels})`;
      case 'DoesNotExist':
        return `!(${k} in ${labels})`;
    }
    return 'false';
  });
  return terms.join(' && ');
}

const OBJECT_LABELS = 'object.?metadata.?labels.orValue({})';
const OLD_OBJECT_LABELS = 'oldObject.?metadata.?labels.orValue({})';
const IS_NAMESPACE = "(request.resource.group == '' && request.resource.resource == 'namespaces')";

/**
 * Exemption selectors a binding selector cannot negate (several requirements), as matchConditions
 * with the handler's meaning: exempt when every object the request carries matches; by namespace,
 * when the request's namespace (a Namespace's own labels) matches; cluster-scoped requests never.
 */
function selectorConditions(exemptions: Exemptions): NamedExpression[] {
  const conditions: NamedExpression[] = [];
  const objects = (selector: LabelSelector) =>
    `((object == null || ${selectorExpression(selector, OBJECT_LABELS)}) && (oldObject == null || ${selectorExpression(selector, OLD_OBJECT_LABELS)}) && (object != null || oldObject != null))`;
  const { objectSelector, namespaceSelector } = exemptions;
  if (objectSelector && negatedRequirement(objectSelector) === undefined)
    conditions.push({ name: 'exemptions-object-selector', expression: `!${objects(objectSelector)}` });
  if (namespaceSelector && negatedRequirement(namespaceSelector) === undefined) {
    const inNamespace = `(namespaceObject != null && ${selectorExpression(namespaceSelector, 'namespaceObject.metadata.?labels.orValue({})')})`;
    conditions.push({
      name: 'exemptions-namespace-selector',
      expression: `!(${IS_NAMESPACE} ? ${objects(namespaceSelector)} : ${inNamespace})`,
    });
  }
  return conditions;
}

/** The binding's matchResources: excluded namespaces and the negated one-requirement exemptions. */
function bindingMatch(metadata: PluginMetadata, deployment: Deployment) {
  const namespace: LabelSelectorRequirement[] = [];
  if (deployment.stagedNamespace !== undefined)
    namespace.push({ key: NAMESPACE_NAME_LABEL, operator: 'In', values: [deployment.stagedNamespace] });
  else if (metadata.systemNamespaces !== 'include') {
    const excluded = [...SYSTEM_NAMESPACES, ...(deployment.webhookNamespace ? [deployment.webhookNamespace] : [])];
    namespace.push({ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: [...new Set(excluded)] });
  }
  const { namespaceSelector, objectSelector } = deployment.exemptions;
  const negatedNamespace = namespaceSelector && negatedRequirement(namespaceSelector);
  if (negatedNamespace) namespace.push(negatedNamespace);
  const negatedObject = objectSelector && negatedRequirement(objectSelector);
  return {
    ...(namespace.length > 0 && { namespaceSelector: selectorObject(namespace) }),
    ...(negatedObject && { objectSelector: selectorObject([negatedObject]) }),
  };
}

/** Protected resources a wildcard rule reaches (leases...), excluded as the webhook's matchCondition excludes them. */
function excludedProtected(rules: readonly WebhookRule[]): WebhookRule[] {
  const reached = new Set(rules.flatMap(protectedResourcesReached));
  return PROTECTED_RESOURCES.filter((p) => reached.has(p)).map((p) => ({
    operations: ['*'],
    apiGroups: [p.group],
    apiVersions: ['*'],
    resources: [p.resource],
    scope: p.scope,
  }));
}

function objectMeta(metadata: PluginMetadata, name: string, deployment: Deployment) {
  return {
    name,
    labels: {
      'app.kubernetes.io/name': 'serverless-admission',
      'app.kubernetes.io/component': metadata.name,
      'app.kubernetes.io/managed-by': 'serverless-admission-emit',
      [`${WEBHOOK_DOMAIN}/rollout`]: deployment.stagedNamespace !== undefined ? 'staged' : 'full',
      [SERVED_AS_LABEL]: 'native',
    },
    annotations: {
      [`${WEBHOOK_DOMAIN}/plugin`]: metadata.upstreamName,
      [`${WEBHOOK_DOMAIN}/summary`]: metadata.summary,
      ...(deployment.stagedNamespace !== undefined && {
        [`${WEBHOOK_DOMAIN}/staged-namespace`]: deployment.stagedNamespace,
      }),
    },
  };
}

const named = (list: readonly NamedExpression[] | undefined) =>
  (list ?? []).map(({ name, expression }) => ({ name, expression }));

/** The parts every policy kind shares: matchConstraints, matchConditions (exemptions last), variables. */
function commonSpec(policy: NativePolicy, deployment: Deployment) {
  const exclude = [...(policy.kind === 'ValidatingAdmissionPolicy' ? (policy.excludeRules ?? []) : [])];
  exclude.push(...excludedProtected(policy.rules));
  const exemption = exemptionsCondition(deployment.exemptions);
  const conditions = [
    ...named(policy.matchConditions),
    ...(exemption ? [exemption] : []),
    ...selectorConditions(deployment.exemptions),
  ];
  return {
    matchConstraints: {
      resourceRules: policy.rules.map(toRule),
      ...(exclude.length > 0 && { excludeResourceRules: exclude.map(toRule) }),
      matchPolicy: 'Equivalent',
    },
    ...(conditions.length > 0 && { matchConditions: conditions }),
    ...(policy.variables !== undefined && policy.variables.length > 0 && { variables: named(policy.variables) }),
  };
}

const VALIDATION_ACTIONS: Record<Enforcement, string[]> = { Deny: ['Deny'], Warn: ['Warn'], Audit: ['Audit'] };

/** The policy's own action (Deny when it has none), softened by the entry's enforcement. */
function validationActions(policy: ValidatingPolicy, enforcement: Enforcement): string[] {
  const own = policy.validationActions ?? 'Deny';
  if (enforcement === 'Audit' || own === 'Audit') return VALIDATION_ACTIONS.Audit;
  if (enforcement === 'Warn' || own === 'Warn') return VALIDATION_ACTIONS.Warn;
  return VALIDATION_ACTIONS.Deny;
}

function validatingObjects(metadata: PluginMetadata, policy: ValidatingPolicy, deployment: Deployment): NativeObject[] {
  const name = nativeName(metadata.name, policy.part);
  const meta = objectMeta(metadata, name, deployment);
  // As the plugin's validating webhook: fail closed unless it fails open (twins of conveniences).
  const failurePolicy = policy.failurePolicy ?? metadata.validating?.failurePolicy ?? 'Fail';
  const failOpen = deployment.stagedNamespace !== undefined || failurePolicy === 'Ignore';
  const match = bindingMatch(metadata, deployment);
  return [
    {
      apiVersion: ADMISSION_REGISTRATION_V1,
      kind: 'ValidatingAdmissionPolicy',
      metadata: meta,
      spec: {
        failurePolicy: failOpen ? 'Ignore' : 'Fail',
        ...commonSpec(policy, deployment),
        validations: policy.validations.map((v) => ({
          expression: v.expression,
          ...(v.message !== undefined && { message: v.message }),
          ...(v.messageExpression !== undefined && { messageExpression: v.messageExpression }),
          reason: v.reason ?? 'Forbidden',
        })),
        ...(policy.auditAnnotations !== undefined &&
          policy.auditAnnotations.length > 0 && {
            auditAnnotations: policy.auditAnnotations.map((a) => ({ key: a.key, valueExpression: a.valueExpression })),
          }),
      },
    },
    {
      apiVersion: ADMISSION_REGISTRATION_V1,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: meta,
      spec: {
        policyName: name,
        validationActions: validationActions(policy, deployment.enforcement),
        ...(Object.keys(match).length > 0 && { matchResources: match }),
      },
    },
  ];
}

function mutatingObjects(metadata: PluginMetadata, policy: MutatingPolicy, deployment: Deployment): NativeObject[] {
  const name = nativeName(metadata.name, policy.part);
  const meta = objectMeta(metadata, name, deployment);
  const match = bindingMatch(metadata, deployment);
  return [
    {
      apiVersion: ADMISSION_REGISTRATION_V1,
      kind: 'MutatingAdmissionPolicy',
      metadata: meta,
      spec: {
        // As the mutating webhook: a mutation that cannot apply never stops a write; the
        // validating policy checks the final object.
        failurePolicy: 'Ignore',
        ...commonSpec(policy, deployment),
        mutations: policy.mutations.map((m) => ({ ...m })),
        reinvocationPolicy: policy.reinvocationPolicy,
      },
    },
    {
      apiVersion: ADMISSION_REGISTRATION_V1,
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: meta,
      spec: { policyName: name, ...(Object.keys(match).length > 0 && { matchResources: match }) },
    },
  ];
}

/** Every object of a plugin's policies: mutating ones first, each followed by its binding. */
export function nativeObjects(
  metadata: PluginMetadata,
  policies: readonly NativePolicy[],
  deployment: Deployment,
): NativeObject[] {
  const mutating = policies.filter((p): p is MutatingPolicy => p.kind === 'MutatingAdmissionPolicy');
  const validating = policies.filter((p): p is ValidatingPolicy => p.kind === 'ValidatingAdmissionPolicy');
  return [
    ...mutating.flatMap((p) => mutatingObjects(metadata, p, deployment)),
    ...validating.flatMap((p) => validatingObjects(metadata, p, deployment)),
  ];
}
