// MutatingAdmissionPolicies, their bindings and params, read from the AdmissionConfiguration entry
// as the ValidatingAdmissionPolicy entry reads its own (lib/admission-policy), and checked as the
// apiserver checks them on create (pkg/apis/admissionregistration/validation: failurePolicy,
// reinvocationPolicy, mutations and their patch types, no DELETE in the rules); every expression
// is compiled at start, a mutation's with the patch types (JSONPatch, Object, jsonpatch.escapeKey).
import type { ConfigSource } from '../../lib/admission/plugin.js';
import type { Fields } from '../../lib/admission-policy/fields.js';
import { readOptions } from '../../lib/admission-policy/manifests.js';
import type { PolicySet } from '../../lib/admission-policy/policy-set.js';
import { loadPolicySet } from '../../lib/admission-policy/policy-set.js';
import type { Manifest } from '../../lib/admission-policy/manifests.js';
import {
  MUTATING_OPERATIONS,
  bindingCommon,
  manifestSpec,
  policyCommon,
  usesNamespaceObject,
} from '../../lib/admission-policy/spec.js';
import type { BindingCommon, PolicyCommon } from '../../lib/admission-policy/spec.js';
import type { EnvironmentVersion } from '../../lib/cel/cel-env.js';
import type { CompiledExpression } from '../../lib/cel/compile.js';
import { MERGE_SCHEMA } from '../../lib/kube/merge-schema.js';
import { typeOfKind } from '../../lib/kube/structured-merge.js';

export const UPSTREAM_NAME = 'MutatingAdmissionPolicy';

export type PatchType = 'JSONPatch' | 'ApplyConfiguration';

export interface CompiledMutation {
  readonly patchType: PatchType;
  readonly expression: CompiledExpression;
}

export interface CompiledPolicy extends PolicyCommon {
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
  readonly mutations: readonly CompiledMutation[];
  readonly usesNamespaceObject: boolean;
  readonly bindings: BindingCommon[];
}

export type PluginConfig = PolicySet<CompiledPolicy>;

const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'] as const;
const FIELD_OF: Record<PatchType, 'jsonPatch' | 'applyConfiguration'> = {
  JSONPatch: 'jsonPatch',
  ApplyConfiguration: 'applyConfiguration',
};

/** One `spec.mutations[i]`: its patchType names the one member that must be set. */
function mutationOf(m: Fields, scope: ReturnType<typeof policyCommon>['scope']): CompiledMutation {
  m.allow('patchType', 'jsonPatch', 'applyConfiguration');
  const patchType = m.string('patchType');
  if (patchType === undefined || patchType === '') throw m.error('patchType', 'Required value');
  if (!(PATCH_TYPES as readonly string[]).includes(patchType))
    throw m.error(
      'patchType',
      `Unsupported value: ${JSON.stringify(patchType)}: supported values: ${PATCH_TYPES.map((t) => JSON.stringify(t)).join(', ')}`,
    );
  const member = FIELD_OF[patchType as PatchType];
  const other = member === 'jsonPatch' ? 'applyConfiguration' : 'jsonPatch';
  if (m.child(other) !== undefined)
    throw m.error(other, `Invalid value: "{${other}}": must not be specified when patchType is ${patchType}`);
  const body = m.child(member);
  if (body === undefined) throw m.error(member, `Required value: must be specified when patchType is ${patchType}`);
  body.allow('expression');
  if ((body.string('expression') ?? '').trim() === '') throw body.error('expression', 'Required value');
  const role = member === 'jsonPatch' ? 'jsonPatch' : 'applyConfiguration';
  const expression = body.compile('expression', { ...scope(role), patchTypes: true });
  return { patchType: patchType as PatchType, expression };
}

function policyOf(manifest: Manifest, order: number, environment: EnvironmentVersion): CompiledPolicy {
  const { name, spec } = manifestSpec(UPSTREAM_NAME, 'MutatingAdmissionPolicy', manifest);
  spec.allow(
    'paramKind',
    'matchConstraints',
    'variables',
    'mutations',
    'failurePolicy',
    'matchConditions',
    'reinvocationPolicy',
  );
  const failurePolicy = spec.oneOf('failurePolicy', ['Fail', 'Ignore'] as const, 'Fail');
  const reinvocation = spec.string('reinvocationPolicy');
  if (reinvocation === undefined || reinvocation === '') throw spec.error('reinvocationPolicy', 'Required value');
  if (reinvocation !== 'Never' && reinvocation !== 'IfNeeded')
    throw spec.error(
      'reinvocationPolicy',
      `Unsupported value: ${JSON.stringify(reinvocation)}: supported values: "Never", "IfNeeded"`,
    );
  const common = policyCommon(spec, environment, MUTATING_OPERATIONS);
  const mutationFields = spec.list('mutations');
  if (mutationFields.length === 0)
    throw spec.error('mutations', 'Required value: mutations must contain at least one item');
  const mutations = mutationFields.map((m) => mutationOf(m, common.scope));
  const texts = [...common.matchConditions, ...common.variables, ...mutations].map((e) => e.expression.text);
  return {
    name,
    order,
    failurePolicy,
    reinvocationPolicy: reinvocation,
    paramKind: common.paramKind,
    matchConstraints: common.matchConstraints,
    matchConditions: common.matchConditions,
    variables: common.variables,
    mutations,
    usesNamespaceObject: usesNamespaceObject(texts),
    bindings: [],
  };
}

function bindingOf(manifest: Manifest): { policyName: string; binding: BindingCommon; owner: Fields } {
  const { name, spec } = manifestSpec(UPSTREAM_NAME, 'MutatingAdmissionPolicyBinding', manifest);
  spec.allow('policyName', 'paramRef', 'matchResources');
  const policyName = spec.string('policyName');
  if (policyName === undefined || policyName === '') throw spec.error('policyName', 'Required value');
  return { policyName, owner: spec, binding: { name, ...bindingCommon(spec, MUTATING_OPERATIONS) } };
}

/** The built-in kinds (the merge schema's): a paramKind naming one is served even with no object loaded. */
const builtInKind = (apiVersion: string, kind: string) => typeOfKind(MERGE_SCHEMA, apiVersion, kind) !== undefined;

export function configure(raw: unknown, source: ConfigSource): PluginConfig {
  return loadPolicySet(UPSTREAM_NAME, readOptions(UPSTREAM_NAME, raw, source), policyOf, bindingOf, builtInKind);
}
