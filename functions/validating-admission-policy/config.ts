// Turns the loaded manifests into compiled policies, once, at start: every field the apiserver
// would validate on `kubectl apply` is checked (unknown fields included, as kubectl's strict
// decoding refuses them), and every CEL expression is compiled; the first problem fails the start
// with a ConfigError naming the object, the field path and, for CEL, the position.
import type { ConfigSource } from '../../lib/admission/plugin.js';
import type { EnvironmentVersion } from '../../lib/cel/cel-env.js';
import type { CompiledExpression } from '../../lib/cel/compile.js';
import type { Fields } from '../../lib/admission-policy/fields.js';
import { readOptions } from '../../lib/admission-policy/manifests.js';
import type { PolicySet } from '../../lib/admission-policy/policy-set.js';
import { loadPolicySet } from '../../lib/admission-policy/policy-set.js';
import type { Manifest } from '../../lib/admission-policy/manifests.js';
import {
  bindingCommon,
  manifestSpec,
  policyCommon,
  uniqueNames,
  usesNamespaceObject,
} from '../../lib/admission-policy/spec.js';
import type { BindingCommon, PolicyCommon } from '../../lib/admission-policy/spec.js';

export const UPSTREAM_NAME = 'ValidatingAdmissionPolicy';

export interface CompiledValidation {
  readonly expression: CompiledExpression;
  readonly messageExpression?: CompiledExpression;
  readonly message: string;
  readonly reason: 'Forbidden' | 'Invalid' | 'RequestEntityTooLarge';
  readonly fieldPath: string;
}

export interface CompiledBinding extends BindingCommon {
  readonly validationActions: readonly ('Deny' | 'Warn' | 'Audit')[];
}

export interface CompiledPolicy extends PolicyCommon {
  readonly validations: readonly CompiledValidation[];
  readonly auditAnnotations: readonly { readonly key: string; readonly expression: CompiledExpression }[];
  readonly usesNamespaceObject: boolean;
  readonly bindings: CompiledBinding[];
}

export type PluginConfig = PolicySet<CompiledPolicy>;

function policyOf(manifest: Manifest, order: number, environment: EnvironmentVersion): CompiledPolicy {
  const { name, spec } = manifestSpec(UPSTREAM_NAME, 'ValidatingAdmissionPolicy', manifest);
  spec.allow(
    'paramKind',
    'matchConstraints',
    'validations',
    'failurePolicy',
    'auditAnnotations',
    'matchConditions',
    'variables',
  );
  const common = policyCommon(spec, environment);
  const { scope } = common;
  const validations = spec.list('validations').map((v): CompiledValidation => {
    v.allow('expression', 'message', 'reason', 'messageExpression', 'fieldPath');
    const message = v.string('message') ?? '';
    if (message.includes('\n')) throw v.error('message', 'Invalid value: message must not contain line breaks');
    return {
      expression: v.compile('expression', scope('validation')),
      messageExpression: v.compile('messageExpression', scope('messageExpression'), false),
      message,
      reason: v.oneOf('reason', ['Forbidden', 'Invalid', 'RequestEntityTooLarge'] as const, 'Invalid'),
      fieldPath: v.string('fieldPath') ?? '',
    };
  });
  const annotationFields = spec.list('auditAnnotations');
  uniqueNames(annotationFields, 'key');
  const auditAnnotations = annotationFields.map((a) => {
    a.allow('key', 'valueExpression');
    const key = a.string('key', true);
    if (!/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(key) || `${name}/${key}`.length > 253 || key.length > 63)
      throw a.error('key', `Invalid value: ${JSON.stringify(key)}: must be a valid annotation key`);
    return { key, expression: a.compile('valueExpression', scope('auditAnnotation')) };
  });
  if (validations.length === 0 && auditAnnotations.length === 0)
    throw spec.error('validations', 'Required value: validations or auditAnnotations must contain at least one item');
  const all = [...common.matchConditions, ...common.variables, ...auditAnnotations]
    .map((e) => e.expression.text)
    .concat(validations.flatMap((v) => [v.expression.text, v.messageExpression?.text ?? '']));
  return {
    name,
    order,
    failurePolicy: spec.oneOf('failurePolicy', ['Fail', 'Ignore'] as const, 'Fail'),
    paramKind: common.paramKind,
    matchConstraints: common.matchConstraints,
    matchConditions: common.matchConditions,
    variables: common.variables,
    validations,
    auditAnnotations,
    usesNamespaceObject: usesNamespaceObject(all),
    bindings: [],
  };
}

function bindingOf(manifest: Manifest): { policyName: string; binding: CompiledBinding; owner: Fields } {
  const { name, spec } = manifestSpec(UPSTREAM_NAME, 'ValidatingAdmissionPolicyBinding', manifest);
  spec.allow('policyName', 'paramRef', 'matchResources', 'validationActions');
  const actions = spec.strings('validationActions');
  if (actions.length === 0) throw spec.error('validationActions', 'Required value');
  for (const a of actions)
    if (!['Deny', 'Warn', 'Audit'].includes(a))
      throw spec.error(
        'validationActions',
        `Unsupported value: ${JSON.stringify(a)}: supported values: "Audit", "Deny", "Warn"`,
      );
  if (new Set(actions).size !== actions.length)
    throw spec.error('validationActions', `Duplicate value: ${JSON.stringify(actions)}`);
  if (actions.includes('Deny') && actions.includes('Warn'))
    throw spec.error(
      'validationActions',
      `Invalid value: ${JSON.stringify(actions)}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`,
    );
  return {
    policyName: spec.string('policyName', true),
    owner: spec,
    binding: {
      name,
      validationActions: actions as CompiledBinding['validationActions'],
      ...bindingCommon(spec),
    },
  };
}

export function configure(raw: unknown, source: ConfigSource): PluginConfig {
  return loadPolicySet(UPSTREAM_NAME, readOptions(UPSTREAM_NAME, raw, source), policyOf, bindingOf);
}
