// What ValidatingAdmissionPolicy and MutatingAdmissionPolicy share in their manifests, read as the
// apiserver validates them on create (pkg/apis/admissionregistration/validation): matchConstraints
// and a binding's matchResources, paramKind and paramRef, matchConditions and variables (each
// expression compiled, in order, a variable's type known to the expressions after it).
import type { ExpressionRole, Type } from '../cel/checker.js';
import type { EnvironmentVersion } from '../cel/cel-env.js';
import type { CompileScope, CompiledExpression } from '../cel/compile.js';
import { Fields } from './fields.js';
import type { Manifest } from './manifests.js';
import { EVERYTHING, labelSelector } from './matching.js';
import type { MatchResources, NamedRule, Selector, SelectorRequirement } from './matching.js';

/** A binding's paramRef finds its params by `name` or by `selector`: exactly one is set. */
export type ParamRef = {
  readonly namespace?: string;
  readonly parameterNotFoundAction: 'Allow' | 'Deny';
} & (
  | { readonly name: string; readonly selector?: undefined }
  | { readonly name?: undefined; readonly selector: Selector }
);

export interface ParamKind {
  readonly apiVersion: string;
  readonly kind: string;
}

export interface NamedExpression {
  readonly name: string;
  readonly expression: CompiledExpression;
}

/** The parts of a compiled policy that matching, params and variables need. */
export interface PolicyCommon {
  readonly name: string;
  /** Its place in the configuration: policies apply in this order. */
  readonly order: number;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly paramKind?: ParamKind;
  readonly matchConstraints: MatchResources;
  readonly matchConditions: readonly NamedExpression[];
  readonly variables: readonly NamedExpression[];
}

export interface BindingCommon {
  readonly name: string;
  readonly matchResources?: MatchResources;
  readonly paramRef?: ParamRef;
}

export function selector(f: Fields | undefined): Selector {
  if (!f) return EVERYTHING;
  f.allow('matchLabels', 'matchExpressions');
  const labels = f.child('matchLabels')?.value ?? {};
  for (const [k, v] of Object.entries(labels))
    if (typeof v !== 'string') throw f.error(`matchLabels.${k}`, 'must be a string');
  const requirements = f.list('matchExpressions').map((e): SelectorRequirement => {
    e.allow('key', 'operator', 'values');
    const operator = e.oneOf('operator', ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const, 'In');
    const values = e.strings('values');
    if ((operator === 'In' || operator === 'NotIn') === (values.length === 0))
      throw e.error(
        'values',
        `Invalid value: ${JSON.stringify(values)}: must be ${values.length ? 'empty' : 'non-empty'} for operator ${operator}`,
      );
    return { key: e.string('key', true), operator, values };
  });
  return labelSelector(labels as Record<string, string>, requirements);
}

/** The operations a policy's rules may name (validation.go's supported operations). */
export const VALIDATING_OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'] as const;
/** A mutating policy cannot act on DELETE (supportedMutatingOperations). */
export const MUTATING_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE'] as const;
type Operations = readonly string[];

function rules(list: Fields[], OPERATIONS: Operations): NamedRule[] {
  return list.map((r) => {
    r.allow('operations', 'apiGroups', 'apiVersions', 'resources', 'scope', 'resourceNames');
    const operations = r.strings('operations');
    const bad = operations.find((o) => !OPERATIONS.includes(o));
    if (bad !== undefined)
      throw r.error(
        'operations',
        `Unsupported value: ${JSON.stringify(bad)}: supported values: ${OPERATIONS.map((o) => JSON.stringify(o)).join(', ')}`,
      );
    for (const key of ['operations', 'apiGroups', 'apiVersions', 'resources'])
      if (r.strings(key).length === 0) throw r.error(key, 'Required value');
    return {
      operations: operations as NamedRule['operations'],
      apiGroups: r.strings('apiGroups'),
      apiVersions: r.strings('apiVersions'),
      resources: r.strings('resources'),
      scope: r.oneOf('scope', ['Cluster', 'Namespaced', '*'] as const, '*'),
      resourceNames: r.strings('resourceNames'),
    };
  });
}

export function matchResources(
  f: Fields,
  requireRules: boolean,
  operations: Operations = VALIDATING_OPERATIONS,
): MatchResources {
  f.allow('namespaceSelector', 'objectSelector', 'resourceRules', 'excludeResourceRules', 'matchPolicy');
  const resourceRules = rules(f.list('resourceRules'), operations);
  if (requireRules && resourceRules.length === 0) throw f.error('resourceRules', 'Required value');
  return {
    namespaceSelector: selector(f.child('namespaceSelector')),
    objectSelector: selector(f.child('objectSelector')),
    resourceRules,
    excludeResourceRules: rules(f.list('excludeResourceRules'), operations),
    matchPolicy: f.oneOf('matchPolicy', ['Exact', 'Equivalent'] as const, 'Equivalent'),
  };
}

export function uniqueNames(items: Fields[], key: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const name = item.string(key, true);
    if (seen.has(name)) throw item.error(key, `Duplicate value: ${JSON.stringify(name)}`);
    seen.add(name);
  }
}

/** The object's kind, name and spec, as `<Kind> "<name>" (<origin>) spec...` errors name them. */
export function manifestSpec(plugin: string, kind: string, manifest: Manifest): { name: string; spec: Fields } {
  const top = new Fields(plugin, `${kind} (${manifest.origin})`, '', manifest.object).allow(
    'apiVersion',
    'kind',
    'metadata',
    'spec',
    'status',
  );
  const name =
    top.child('metadata')?.string('name', true) ??
    (() => {
      throw top.error('metadata.name', 'Required value');
    })();
  const owner = `${kind} ${JSON.stringify(name)} (${manifest.origin})`;
  const apiVersion = String(manifest.object.apiVersion ?? '');
  return { name, spec: new Fields(plugin, owner, 'spec', top.child('spec')?.value ?? {}, apiVersion) };
}

/**
 * paramKind, matchConstraints, variables and matchConditions of a policy's spec, compiled; and the
 * scope the policy's own expressions compile in (params declared only with a paramKind, the
 * variables with their types).
 */
export function policyCommon(
  spec: Fields,
  environment: EnvironmentVersion,
  operations: Operations = VALIDATING_OPERATIONS,
): Omit<PolicyCommon, 'name' | 'order' | 'failurePolicy'> & { scope: (role: ExpressionRole) => CompileScope } {
  const paramKind = spec.child('paramKind')?.allow('apiVersion', 'kind');
  const constraints =
    spec.child('matchConstraints') ??
    (() => {
      throw spec.error('matchConstraints', 'Required value');
    })();
  const conditions = spec.list('matchConditions');
  uniqueNames(conditions, 'name');
  const variableFields = spec.list('variables');
  uniqueNames(variableFields, 'name');
  const declared = new Map<string, Type>();
  const scope = (role: ExpressionRole): CompileScope => ({
    variables: new Map(declared),
    role,
    params: paramKind !== undefined,
    environment,
  });
  const variables = variableFields.map((v) => {
    v.allow('name', 'expression');
    const entry = { name: v.string('name', true), expression: v.compile('expression', scope('variable')) };
    declared.set(entry.name, entry.expression.type);
    return entry;
  });
  const matchConditions = conditions.map((c) => {
    c.allow('name', 'expression');
    return { name: c.string('name', true), expression: c.compile('expression', scope('matchCondition')) };
  });
  return {
    paramKind: paramKind && {
      apiVersion: paramKind.string('apiVersion', true),
      kind: paramKind.string('kind', true),
    },
    matchConstraints: matchResources(constraints, true, operations),
    matchConditions,
    variables,
    scope,
  };
}

/** A paramRef's fields, with the one of `name` and `selector` that it sets. */
type ParamTarget = { readonly fields: Fields } & ({ readonly name: string } | { readonly selector: Fields });

function paramTarget(fields: Fields): ParamTarget {
  fields.allow('name', 'namespace', 'selector', 'parameterNotFoundAction');
  const name = fields.string('name');
  const selectorFields = fields.child('selector');
  if (name !== undefined && selectorFields === undefined) return { fields, name };
  if (name === undefined && selectorFields !== undefined) return { fields, selector: selectorFields };
  throw fields.error('', 'one of `name` or `selector` must be set');
}

/**
 * validateParamRef: Deny or Allow must be written in v1beta1 and v1; v1alpha1 defaults a missing
 * parameterNotFoundAction to Deny (its SetDefaults_ParamRef) before validation.
 */
function paramRef(target: ParamTarget, apiVersion: string): ParamRef {
  const { fields } = target;
  const namespace = fields.string('namespace');
  const action = fields.value.parameterNotFoundAction;
  if (!(action === undefined && apiVersion.endsWith('/v1alpha1')) && (action ?? '') === '')
    throw fields.error('parameterNotFoundAction', 'Required value');
  return {
    ...('name' in target ? { name: target.name } : { selector: selector(target.selector) }),
    namespace,
    parameterNotFoundAction: fields.oneOf('parameterNotFoundAction', ['Deny', 'Allow'] as const, 'Deny'),
  };
}

/**
 * paramRef and matchResources of a binding's spec. Which of paramRef's `name` and `selector` is set
 * is checked before matchResources, its other fields after, so the first error named stays the same.
 */
export function bindingCommon(
  spec: Fields,
  operations: Operations = VALIDATING_OPERATIONS,
): Omit<BindingCommon, 'name'> {
  const ref = spec.child('paramRef');
  const target = ref && paramTarget(ref);
  const match = spec.child('matchResources');
  return {
    matchResources: match && matchResources(match, false, operations),
    paramRef: target && paramRef(target, spec.apiVersion),
  };
}

/** True when any of these expressions reads `namespaceObject` (it is fetched only then). */
export const usesNamespaceObject = (texts: readonly string[]): boolean =>
  texts.some((text) => /\bnamespaceObject\b/.test(text));
