// Turns the loaded manifests into compiled policies, once, at start: every field the apiserver
// would validate on `kubectl apply` is checked (unknown fields included, as kubectl's strict
// decoding refuses them), and every CEL expression is compiled; the first problem fails the start
// with a ConfigError naming the object, the field path and, for CEL, the position.
import type { ConfigSource } from '../../lib/admission/plugin.js';
import { ConfigError } from '../../lib/config/errors.js';
import type { EnvironmentVersion } from './cel-env.js';
import type { ExpressionRole, Type } from './checker.js';
import type { CompileScope, CompiledExpression } from './compile.js';
import { Fields } from './fields.js';
import { ADMISSION_REGISTRATION_VERSIONS, UPSTREAM_NAME, readOptions } from './manifests.js';
import type { Manifest } from './manifests.js';
import { EVERYTHING, PolicyIndex, labelSelector } from './matching.js';
import type { MatchResources, NamedRule, Selector, SelectorRequirement } from './matching.js';
import { ParamStore } from './params.js';

export interface CompiledValidation {
  readonly expression: CompiledExpression;
  readonly messageExpression?: CompiledExpression;
  readonly message: string;
  readonly reason: 'Forbidden' | 'Invalid' | 'RequestEntityTooLarge';
  readonly fieldPath: string;
}

export interface CompiledBinding {
  readonly name: string;
  readonly validationActions: readonly ('Deny' | 'Warn' | 'Audit')[];
  readonly matchResources?: MatchResources;
  readonly paramRef?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly selector?: Selector;
    readonly parameterNotFoundAction: 'Allow' | 'Deny';
  };
}

export interface CompiledPolicy {
  readonly name: string;
  readonly order: number;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly paramKind?: { readonly apiVersion: string; readonly kind: string };
  readonly matchConstraints: MatchResources;
  readonly matchConditions: readonly { readonly name: string; readonly expression: CompiledExpression }[];
  readonly variables: readonly { readonly name: string; readonly expression: CompiledExpression }[];
  readonly validations: readonly CompiledValidation[];
  readonly auditAnnotations: readonly { readonly key: string; readonly expression: CompiledExpression }[];
  readonly usesNamespaceObject: boolean;
  readonly bindings: CompiledBinding[];
}

export interface PluginConfig {
  readonly policies: readonly CompiledPolicy[];
  readonly index: PolicyIndex<CompiledPolicy>;
  readonly params: ParamStore;
  readonly unknownNamespace: 'NoLabels' | 'Fail';
}

function selector(f: Fields | undefined): Selector {
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
    return { key: e.string('key', true)!, operator, values };
  });
  return labelSelector(labels as Record<string, string>, requirements);
}

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'] as const;

function rules(list: Fields[]): NamedRule[] {
  return list.map((r) => {
    r.allow('operations', 'apiGroups', 'apiVersions', 'resources', 'scope', 'resourceNames');
    const operations = r.strings('operations');
    const bad = operations.find((o) => !(OPERATIONS as readonly string[]).includes(o));
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

function matchResources(f: Fields, requireRules: boolean): MatchResources {
  f.allow('namespaceSelector', 'objectSelector', 'resourceRules', 'excludeResourceRules', 'matchPolicy');
  const resourceRules = rules(f.list('resourceRules'));
  if (requireRules && resourceRules.length === 0) throw f.error('resourceRules', 'Required value');
  return {
    namespaceSelector: selector(f.child('namespaceSelector')),
    objectSelector: selector(f.child('objectSelector')),
    resourceRules,
    excludeResourceRules: rules(f.list('excludeResourceRules')),
    matchPolicy: f.oneOf('matchPolicy', ['Exact', 'Equivalent'] as const, 'Equivalent'),
  };
}

function uniqueNames(items: Fields[], key: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const name = item.string(key, true)!;
    if (seen.has(name)) throw item.error(key, `Duplicate value: ${JSON.stringify(name)}`);
    seen.add(name);
  }
}

function policyOf(manifest: Manifest, order: number, environment: EnvironmentVersion): CompiledPolicy {
  const top = new Fields(`ValidatingAdmissionPolicy (${manifest.origin})`, '', manifest.object).allow(
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
  const owner = `ValidatingAdmissionPolicy ${JSON.stringify(name)} (${manifest.origin})`;
  const spec = new Fields(owner, 'spec', top.child('spec')?.value ?? {});
  spec.allow(
    'paramKind',
    'matchConstraints',
    'validations',
    'failurePolicy',
    'auditAnnotations',
    'matchConditions',
    'variables',
  );
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
    const entry = { name: v.string('name', true)!, expression: v.compile('expression', scope('variable'))! };
    declared.set(entry.name, entry.expression.type);
    return entry;
  });
  const validations = spec.list('validations').map((v): CompiledValidation => {
    v.allow('expression', 'message', 'reason', 'messageExpression', 'fieldPath');
    const message = v.string('message') ?? '';
    if (message.includes('\n')) throw v.error('message', 'Invalid value: message must not contain line breaks');
    return {
      expression: v.compile('expression', scope('validation'))!,
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
    const key = a.string('key', true)!;
    if (!/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(key) || `${name}/${key}`.length > 253 || key.length > 63)
      throw a.error('key', `Invalid value: ${JSON.stringify(key)}: must be a valid annotation key`);
    return { key, expression: a.compile('valueExpression', scope('auditAnnotation'))! };
  });
  if (validations.length === 0 && auditAnnotations.length === 0)
    throw spec.error('validations', 'Required value: validations or auditAnnotations must contain at least one item');
  const matchConditions = conditions.map(
    (c) => (
      c.allow('name', 'expression'),
      { name: c.string('name', true)!, expression: c.compile('expression', scope('matchCondition'))! }
    ),
  );
  const all = [...matchConditions, ...variables, ...auditAnnotations]
    .map((e) => e.expression.text)
    .concat(validations.flatMap((v) => [v.expression.text, v.messageExpression?.text ?? '']));
  return {
    name,
    order,
    failurePolicy: spec.oneOf('failurePolicy', ['Fail', 'Ignore'] as const, 'Fail'),
    paramKind: paramKind && {
      apiVersion: paramKind.string('apiVersion', true)!,
      kind: paramKind.string('kind', true)!,
    },
    matchConstraints: matchResources(constraints, true),
    matchConditions,
    variables,
    validations,
    auditAnnotations,
    usesNamespaceObject: all.some((text) => /\bnamespaceObject\b/.test(text)),
    bindings: [],
  };
}

function bindingOf(manifest: Manifest): { policyName: string; binding: CompiledBinding; owner: Fields } {
  const top = new Fields(`ValidatingAdmissionPolicyBinding (${manifest.origin})`, '', manifest.object).allow(
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
  const spec = new Fields(
    `ValidatingAdmissionPolicyBinding ${JSON.stringify(name)} (${manifest.origin})`,
    'spec',
    top.child('spec')?.value ?? {},
  );
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
  const ref = spec.child('paramRef')?.allow('name', 'namespace', 'selector', 'parameterNotFoundAction');
  if (ref && (ref.string('name') === undefined) === !ref.child('selector'))
    throw ref.error('', 'one of `name` or `selector` must be set');
  const match = spec.child('matchResources');
  return {
    policyName: spec.string('policyName', true)!,
    owner: spec,
    binding: {
      name,
      validationActions: actions as CompiledBinding['validationActions'],
      matchResources: match && matchResources(match, false),
      paramRef: ref && {
        name: ref.string('name'),
        namespace: ref.string('namespace'),
        selector: ref.child('selector') && selector(ref.child('selector')),
        parameterNotFoundAction: ref.oneOf('parameterNotFoundAction', ['Allow', 'Deny'] as const, 'Deny'),
      },
    },
  };
}

const kindOf = (m: Manifest) =>
  ADMISSION_REGISTRATION_VERSIONS.includes(String(m.object.apiVersion)) ? String(m.object.kind) : '';

export function configure(raw: unknown, source: ConfigSource): PluginConfig {
  const options = readOptions(raw, source);
  const policies = new Map<string, CompiledPolicy>();
  const bindings: ReturnType<typeof bindingOf>[] = [];
  const params: Manifest[] = [];
  for (const manifest of options.manifests) {
    const kind = kindOf(manifest);
    if (kind === 'ValidatingAdmissionPolicy') {
      const policy = policyOf(manifest, policies.size, options.celEnvironment);
      if (policies.has(policy.name))
        throw new ConfigError(
          UPSTREAM_NAME,
          `ValidatingAdmissionPolicy ${JSON.stringify(policy.name)} (${manifest.origin})`,
          'defined twice',
        );
      policies.set(policy.name, policy);
    } else if (kind === 'ValidatingAdmissionPolicyBinding') bindings.push(bindingOf(manifest));
    else params.push(manifest);
  }
  for (const { policyName, binding, owner } of bindings) {
    const policy = policies.get(policyName);
    if (!policy)
      throw owner.error(
        'policyName',
        `Invalid value: ${JSON.stringify(policyName)}: no ValidatingAdmissionPolicy of that name is loaded`,
      );
    if (policy.bindings.some((b) => b.name === binding.name))
      throw owner.error('', `binding ${JSON.stringify(binding.name)} defined twice`);
    policy.bindings.push(binding);
  }
  const list = [...policies.values()];
  return {
    policies: list,
    index: new PolicyIndex(list),
    params: new ParamStore(params),
    unknownNamespace: options.unknownNamespace,
  };
}
