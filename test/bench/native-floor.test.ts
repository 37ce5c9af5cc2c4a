import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { floorPolicies } from './native-floor.js';

// The shape `emit --native` prints: a policy of each kind with its logic, and their bindings.
const EMITTED = `# emitted
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: serverless-admission-p}
spec:
  failurePolicy: Ignore
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  matchConditions: [{name: c, expression: 'true'}]
  variables: [{name: v, expression: object.spec}]
  mutations: [{patchType: JSONPatch, jsonPatch: {expression: '[]'}}]
  reinvocationPolicy: IfNeeded
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: serverless-admission-p}
spec: {policyName: serverless-admission-p, matchResources: {namespaceSelector: {}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: serverless-admission-p}
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  variables: [{name: v, expression: object.spec}]
  validations: [{expression: 'size(variables.v) > 0', message: no}]
  auditAnnotations: [{key: k, valueExpression: "'v'"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: serverless-admission-p}
spec: {policyName: serverless-admission-p, validationActions: [Warn]}
`;

const objects = (yaml: string) =>
  parseAllDocuments(yaml).map((d) => d.toJS() as { kind: string; metadata: unknown; spec: Record<string, unknown> });

describe('floorPolicies: the same policies doing the least', () => {
  const floor = objects(floorPolicies(EMITTED));
  const emitted = objects(EMITTED);
  const of = (list: typeof floor, kind: string) => list.find((o) => o.kind === kind)!;

  it('keeps every object, name, binding, match and failure policy', () => {
    expect(floor.map((o) => o.kind)).toEqual(emitted.map((o) => o.kind));
    for (const kind of ['MutatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding'])
      expect(of(floor, kind)).toEqual(of(emitted, kind));
    for (const kind of ['MutatingAdmissionPolicy', 'ValidatingAdmissionPolicy']) {
      expect(of(floor, kind).metadata).toEqual(of(emitted, kind).metadata);
      expect(of(floor, kind).spec.matchConstraints).toEqual(of(emitted, kind).spec.matchConstraints);
      expect(of(floor, kind).spec.failurePolicy).toEqual(of(emitted, kind).spec.failurePolicy);
    }
    expect(of(floor, 'MutatingAdmissionPolicy').spec.reinvocationPolicy).toBe('IfNeeded');
  });

  it('validates `true` with no conditions, variables or audit annotations', () => {
    expect(of(floor, 'ValidatingAdmissionPolicy').spec).toEqual({
      failurePolicy: 'Fail',
      matchConstraints: of(emitted, 'ValidatingAdmissionPolicy').spec.matchConstraints,
      validations: [{ expression: 'true' }],
    });
  });

  it('mutates with one JSON patch adding the floor label, escaped in the patch path', () => {
    const spec = of(floor, 'MutatingAdmissionPolicy').spec;
    expect(spec.matchConditions).toBeUndefined();
    expect(spec.variables).toBeUndefined();
    const mutations = spec.mutations as { patchType: string; jsonPatch: { expression: string } }[];
    expect(mutations).toHaveLength(1);
    expect(mutations[0].patchType).toBe('JSONPatch');
    expect(mutations[0].jsonPatch.expression).toContain("'/metadata/labels/serverless-admission.io~1bench-floor'");
  });

  it('refuses a text with no policy in it', () => {
    expect(() => floorPolicies('# nothing\n')).toThrow('emit printed no policies');
  });
});
