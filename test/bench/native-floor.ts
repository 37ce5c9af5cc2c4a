// The floor of a native policy: the least any policy of the same kinds costs the apiserver on the
// same requests. The policies `emit --native` printed, each kept with its name, rules, parameters,
// failure policy and binding (so the apiserver matches and dispatches exactly what it does for
// ours), its logic replaced by the least a policy of its kind can do: a ValidatingAdmissionPolicy
// validating `true`, a MutatingAdmissionPolicy adding one label with one JSON patch (a change, so the
// apiserver applies and re-checks a patched object, as it does for ours). Native admission against
// this floor is what our CEL costs; the floor against the built-in is what the apiserver's policy
// machinery costs before any expression of ours runs.
import { parseAllDocuments, stringify } from 'yaml';

/** The label the floor's mutating policies add. */
export const FLOOR_LABEL = 'serverless-admission.io/bench-floor';

const ADD_LABEL = `has(object.metadata.labels) ? [JSONPatch{op: 'add', path: '/metadata/labels/${FLOOR_LABEL.replace('/', '~1')}', value: 'true'}] : [JSONPatch{op: 'add', path: '/metadata/labels', value: {'${FLOOR_LABEL}': 'true'}}]`;

type Spec = Record<string, unknown>;

/** The policy's spec with its logic (match conditions, variables, checks) replaced by the least. */
function leastOf(kind: string, spec: Spec): Spec {
  const { matchConditions: _conditions, variables: _variables, ...kept } = spec;
  if (kind === 'ValidatingAdmissionPolicy') {
    const { validations: _validations, auditAnnotations: _audit, ...rest } = kept;
    return { ...rest, validations: [{ expression: 'true' }] };
  }
  const { mutations: _mutations, ...rest } = kept;
  return { ...rest, mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: ADD_LABEL } }] };
}

/** `emit --native`'s YAML with every policy's logic replaced by the least (bindings unchanged). */
export function floorPolicies(yaml: string): string {
  const objects = parseAllDocuments(yaml)
    .map((document) => document.toJS() as { kind?: string; spec?: Spec } | null)
    .filter((o): o is { kind: string; spec: Spec } => o?.kind !== undefined && o.spec !== undefined);
  const policies = objects.filter((o) => o.kind.endsWith('AdmissionPolicy'));
  if (policies.length === 0) throw new Error('native floor: emit printed no policies');
  return objects
    .map((o) => stringify(o.kind.endsWith('AdmissionPolicy') ? { ...o, spec: leastOf(o.kind, o.spec) } : o))
    .join('---\n');
}
