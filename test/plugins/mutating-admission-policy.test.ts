// MutatingAdmissionPolicy: upstream's tests (staging/src/k8s.io/apiserver/pkg/admission/plugin/
// policy/mutating: compilation_test.go TestCompilation, dispatcher_test.go, patch/*_test.go) as
// tables, each case run through the plugin and its patch applied with fast-json-patch; then the
// validation the apiserver applies on create (pkg/apis/admissionregistration/validation,
// TestValidateMutatingAdmissionPolicy), reinvocation, params, and the emitted webhook.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PluginConfig } from '../../functions/mutating-admission-policy/config.js';
import plugin, { mutatingPhaseFor } from '../../functions/mutating-admission-policy/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import type { PluginState } from '../../lib/admission/ports.js';
import { configErrorOf } from '../support/config-error.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { configurePlugin, parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { defaultObject } from '../../lib/kube/defaults.js';
import { MERGE_SCHEMA } from '../../lib/kube/merge-schema.js';

const source = { file: 'test AdmissionConfiguration', baseDir: import.meta.dirname };

/**
 * An object as the apiserver holds it when it calls the webhook: decoded, then defaulted. Upstream's
 * rows build their objects without defaults (their test scheme has no defaulters); the apiserver
 * defaults the object after every mutation, so rows run on stored objects expect stored results.
 */
const asStored = <T extends KubeObject | undefined>(object: T): T =>
  (object === undefined ? object : defaultObject(MERGE_SCHEMA, object)) as T;
const configure = (raw: unknown): PluginConfig => plugin.configure!(raw, source);

type Mutation =
  | { patchType: 'JSONPatch'; jsonPatch: { expression: string } }
  | { patchType: 'ApplyConfiguration'; applyConfiguration: { expression: string } };

const jsonPatch = (expression: string): Mutation => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const applyConfiguration = (expression: string): Mutation => ({
  patchType: 'ApplyConfiguration',
  applyConfiguration: { expression },
});

interface PolicyOptions {
  name?: string;
  mutations: Mutation[];
  variables?: { name: string; expression: string }[];
  matchConditions?: { name: string; expression: string }[];
  failurePolicy?: 'Fail' | 'Ignore';
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  paramKind?: { apiVersion: string; kind: string };
  resources?: string[];
  apiGroups?: string[];
}

/** A policy and its binding, as `kubectl apply -f` would take them (v1). */
function policy(options: PolicyOptions, binding: Record<string, unknown> = {}): Record<string, unknown>[] {
  const name = options.name ?? 'd1';
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        ...(options.paramKind && { paramKind: options.paramKind }),
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: options.apiGroups ?? ['apps'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: options.resources ?? ['deployments'],
            },
          ],
        },
        ...(options.variables && { variables: options.variables }),
        ...(options.matchConditions && { matchConditions: options.matchConditions }),
        failurePolicy: options.failurePolicy ?? 'Fail',
        reinvocationPolicy: options.reinvocationPolicy ?? 'Never',
        mutations: options.mutations,
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, ...binding },
    },
  ];
}

function deployment(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default', ...metadata },
    spec,
  };
}

const deploymentReview = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  namespace: 'default',
  name: 'd',
  object,
  ...extra,
});

const containers = (...names: string[]) => ({
  template: { spec: { containers: names.map((name) => ({ name })) } },
});

/** Every namespace known, without labels: what the Namespace webhook would have recorded. */
const cluster: PluginState = {
  ...NO_STATE,
  learnedNamespaces: {
    get: async (name) => ({ name, labels: {}, annotations: {}, phase: 'Active', observedAt: '2024-01-01T00:00:00Z' }),
    knownAbsent: async () => false,
  },
};

const run = (config: PluginConfig, input: ReviewInput, state: PluginState = cluster) =>
  runPhase(plugin, 'mutate', input, config, state);

interface CompilationCase {
  name: string;
  options: PolicyOptions;
  /** The binding's spec beyond policyName, and param objects loaded beside the policy. */
  binding?: Record<string, unknown>;
  params?: Record<string, unknown>[];
  namespace?: string;
  object: KubeObject;
  oldObject?: KubeObject;
  expected?: KubeObject;
  expectedErr?: string;
}

/** A Deployment whose pod template has this spec. */
const withPodSpec = (podSpec: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  deployment({ ...spec, template: { spec: podSpec } });

// compilation_test.go TestCompilation: every case of its table (the schema's fields: the merge schema's).
const COMPILATION: CompilationCase[] = [
  {
    name: 'jsonPatch with false test operation',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "test", path: "/spec/replicas", value: 100},
          JSONPatch{op: "replace", path: "/spec/replicas", value: 3},
        ]`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 1 }),
  },
  {
    name: 'jsonPatch with true test operation',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "test", path: "/spec/replicas", value: 1},
          JSONPatch{op: "replace", path: "/spec/replicas", value: 3},
        ]`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 3 }),
  },
  {
    name: 'jsonPatch remove to unset field',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "remove", path: "/spec/replicas"}]`)] },
    object: deployment({ replicas: 1 }),
    expected: deployment({}),
  },
  {
    name: 'jsonPatch remove map entry by key',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "remove", path: "/metadata/labels/y"}]`)] },
    object: deployment({}, { labels: { x: '1', y: '1' } }),
    expected: deployment({}, { labels: { x: '1' } }),
  },
  {
    name: 'jsonPatch remove element in list',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "remove", path: "/spec/template/spec/containers/1"}]`)] },
    object: deployment(containers('a', 'b', 'c')),
    expected: deployment(containers('a', 'c')),
  },
  {
    name: 'jsonPatch copy map entry by key',
    options: {
      mutations: [jsonPatch(`[JSONPatch{op: "copy", from: "/metadata/labels/x", path: "/metadata/labels/y"}]`)],
    },
    object: deployment({}, { labels: { x: '1' } }),
    expected: deployment({}, { labels: { x: '1', y: '1' } }),
  },
  {
    name: 'jsonPatch copy first element to end of list',
    options: {
      mutations: [
        jsonPatch(
          `[JSONPatch{op: "copy", from: "/spec/template/spec/containers/0", path: "/spec/template/spec/containers/-"}]`,
        ),
      ],
    },
    object: deployment(containers('a', 'b', 'c')),
    expected: deployment(containers('a', 'b', 'c', 'a')),
  },
  {
    name: 'jsonPatch move map entry by key',
    options: {
      mutations: [jsonPatch(`[JSONPatch{op: "move", from: "/metadata/labels/x", path: "/metadata/labels/y"}]`)],
    },
    object: deployment({}, { labels: { x: '1' } }),
    expected: deployment({}, { labels: { y: '1' } }),
  },
  {
    name: 'jsonPatch move first element to end of list',
    options: {
      mutations: [
        jsonPatch(
          `[JSONPatch{op: "move", from: "/spec/template/spec/containers/0", path: "/spec/template/spec/containers/-"}]`,
        ),
      ],
    },
    object: deployment(containers('a', 'b', 'c')),
    expected: deployment(containers('b', 'c', 'a')),
  },
  {
    name: 'jsonPatch add map entry by key and value',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/metadata/labels/x", value: "2"}]`)] },
    object: deployment({}, { labels: { y: '1' } }),
    expected: deployment({}, { labels: { y: '1', x: '2' } }),
  },
  {
    name: 'jsonPatch add map value to field',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/metadata/labels", value: {"y": "2"}}]`)] },
    object: deployment({}),
    expected: deployment({}, { labels: { y: '2' } }),
  },
  {
    name: 'jsonPatch add map to existing map',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/metadata/labels", value: {"y": "2"}}]`)] },
    object: deployment({}, { labels: { x: '1' } }),
    expected: deployment({}, { labels: { y: '2' } }),
  },
  {
    name: 'jsonPatch add to start of list',
    options: {
      mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/spec/template/spec/containers/0", value: {"name": "x"}}]`)],
    },
    object: deployment(containers('a')),
    expected: deployment(containers('x', 'a')),
  },
  {
    name: 'jsonPatch add to end of list',
    options: {
      mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: {"name": "x"}}]`)],
    },
    object: deployment(containers('a')),
    expected: deployment(containers('a', 'x')),
  },
  {
    name: 'jsonPatch replace key in map',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "replace", path: "/metadata/labels/x", value: "2"}]`)] },
    object: deployment({}, { labels: { y: '1' } }),
    expected: deployment({}, { labels: { y: '1', x: '2' } }),
  },
  {
    name: 'jsonPatch replace map value of unset field',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "replace", path: "/metadata/labels", value: {"y": "2"}}]`)] },
    object: deployment({}),
    expected: deployment({}, { labels: { y: '2' } }),
  },
  {
    name: 'jsonPatch replace map value of set field',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "replace", path: "/metadata/labels", value: {"y": "2"}}]`)] },
    object: deployment({}, { labels: { x: '1' } }),
    expected: deployment({}, { labels: { y: '2' } }),
  },
  {
    name: 'jsonPatch replace first element in list',
    options: {
      mutations: [
        jsonPatch(`[JSONPatch{op: "replace", path: "/spec/template/spec/containers/0", value: {"name": "x"}}]`),
      ],
    },
    object: deployment(containers('a')),
    expected: deployment(containers('x')),
  },
  {
    name: 'jsonPatch replace end of list with - not allowed',
    options: {
      mutations: [
        jsonPatch(`[JSONPatch{op: "replace", path: "/spec/template/spec/containers/-", value: {"name": "x"}}]`),
      ],
    },
    object: deployment(containers('a')),
    expectedErr:
      'JSON Patch: replace operation does not apply: doc is missing key: /spec/template/spec/containers/-: missing value',
  },
  {
    name: 'jsonPatch replace with variable',
    options: {
      variables: [{ name: 'desired', expression: '10' }],
      mutations: [jsonPatch(`[JSONPatch{op: "replace", path: "/spec/replicas", value: variables.desired + 1}]`)],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 11 }),
  },
  {
    name: 'jsonPatch with CEL initializer',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
            name: "x",
            ports: [Object.spec.template.spec.containers.ports{containerPort: 8080}],
          }},
        ]`),
      ],
    },
    object: deployment(containers('a')),
    expected: deployment({
      template: { spec: { containers: [{ name: 'a' }, { name: 'x', ports: [{ containerPort: 8080 }] }] } },
    }),
  },
  {
    name: 'jsonPatch invalid CEL initializer type',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/spec/template/spec/containers/-",
            value: Object.spec.template.spec.containers{
              name: "x",
              ports: [Object.spec.template.spec.containers.portsZ{containerPort: 8080}]
            }
          }
        ]`),
      ],
    },
    object: deployment(containers('a')),
    expectedErr:
      ' mismatch: unexpected type name "Object.spec.template.spec.containers.portsZ", expected "Object.spec.template.spec.containers.ports", which matches field name path from root Object type',
  },
  {
    name: 'jsonPatch add map entry by key and value (Object initializer)',
    options: {
      mutations: [
        jsonPatch(
          `[JSONPatch{op: "add", path: "/spec", value: Object.spec{selector: Object.spec.selector{}, replicas: 10}}]`,
        ),
      ],
    },
    object: deployment({}),
    expected: deployment({ selector: {}, replicas: 10 }),
  },
  {
    name: 'JSONPatch patch type has field access',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/metadata/labels",
            value: {
              "op": JSONPatch{op: "opValue"}.op,
              "path": JSONPatch{path: "pathValue"}.path,
              "from": JSONPatch{from: "fromValue"}.from,
              "value": string(JSONPatch{value: "valueValue"}.value),
            }
          }
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment({}, { labels: { op: 'opValue', path: 'pathValue', from: 'fromValue', value: 'valueValue' } }),
  },
  {
    name: 'JSONPatch patch type has field testing',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/metadata/labels",
            value: {
              "op": string(has(JSONPatch{op: "opValue"}.op)),
              "path": string(has(JSONPatch{path: "pathValue"}.path)),
              "from": string(has(JSONPatch{from: "fromValue"}.from)),
              "value": string(has(JSONPatch{value: "valueValue"}.value)),
              "op-unset": string(has(JSONPatch{}.op)),
              "path-unset": string(has(JSONPatch{}.path)),
              "from-unset": string(has(JSONPatch{}.from)),
              "value-unset": string(has(JSONPatch{}.value)),
            }
          }
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment(
      {},
      {
        labels: {
          op: 'true',
          path: 'true',
          from: 'true',
          value: 'true',
          'op-unset': 'false',
          'path-unset': 'false',
          'from-unset': 'false',
          'value-unset': 'false',
        },
      },
    ),
  },
  {
    name: 'JSONPatch patch type equality',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/metadata/labels",
            value: {
              "empty": string(JSONPatch{} == JSONPatch{}),
              "partial": string(JSONPatch{op: "add"} == JSONPatch{op: "add"}),
              "same-all": string(JSONPatch{op: "add", path: "path", from: "from", value: 1} == JSONPatch{op: "add", path: "path", from: "from", value: 1}),
              "different-op": string(JSONPatch{op: "add"} == JSONPatch{op: "remove"}),
              "different-path": string(JSONPatch{op: "add", path: "x", from: "from", value: 1} == JSONPatch{op: "add", path: "path", from: "from", value: 1}),
              "different-from": string(JSONPatch{op: "add", path: "path", from: "x", value: 1} == JSONPatch{op: "add", path: "path", from: "from", value: 1}),
              "different-value": string(JSONPatch{op: "add", path: "path", from: "from", value: "1"} == JSONPatch{op: "add", path: "path", from: "from", value: 1}),
            }
          }
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment(
      {},
      {
        labels: {
          empty: 'true',
          partial: 'true',
          'same-all': 'true',
          'different-op': 'false',
          'different-path': 'false',
          'different-from': 'false',
          'different-value': 'false',
        },
      },
    ),
  },
  {
    name: 'applyConfiguration then jsonPatch',
    options: {
      mutations: [
        applyConfiguration(`Object{spec: Object.spec{replicas: object.spec.replicas + 100}}`),
        jsonPatch(`[JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas + 10}]`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 111 }),
  },
  {
    name: 'jsonPatch then applyConfiguration',
    options: {
      mutations: [
        jsonPatch(`[JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas + 10}]`),
        applyConfiguration(`Object{spec: Object.spec{replicas: object.spec.replicas + 100}}`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 111 }),
  },
  {
    name: 'apply configuration with conditionals',
    options: {
      mutations: [
        applyConfiguration(`
          Object{
            spec: Object.spec{
              replicas: object.spec.replicas % 2 == 0?object.spec.replicas + 1:object.spec.replicas
            }
          }`),
      ],
    },
    object: deployment({ replicas: 2 }),
    expected: deployment({ replicas: 3 }),
  },
  {
    name: 'apply configuration with old object',
    options: {
      mutations: [
        applyConfiguration(`Object{
          spec: Object.spec{
            replicas: oldObject.spec.replicas % 2 == 0?oldObject.spec.replicas + 1:oldObject.spec.replicas
          }
        }`),
      ],
    },
    object: deployment({ replicas: 1 }),
    oldObject: deployment({ replicas: 2 }),
    expected: deployment({ replicas: 3 }),
  },
  {
    name: 'apply configuration with variable',
    options: {
      variables: [{ name: 'desired', expression: '10' }],
      mutations: [applyConfiguration(`Object{spec: Object.spec{replicas: variables.desired + 1}}`)],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 11 }),
  },
  {
    name: 'apply configuration with invalid type name',
    options: { mutations: [applyConfiguration(`Object{spec: Object.specx{replicas: 1}}`)] },
    object: deployment({ replicas: 1 }),
    expectedErr:
      'type mismatch: unexpected type name "Object.specx", expected "Object.spec", which matches field name path from root Object type',
  },
  {
    name: 'jsonPatch with excessive cost',
    options: {
      variables: [{ name: 'list', expression: '[0,1,2,3,4,5,6,7,8,9]' }],
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "replace", path: "/spec/replicas",
            value: variables.list.all(x1, variables.list.all(x2, variables.list.all(x3, variables.list.all(x4, variables.list.all(x5, variables.list.all(x5, "0123456789" == "0123456789"))))))? 1 : 0
          }
        ]`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expectedErr: 'operation cancelled: actual cost limit exceeded',
  },
  {
    name: 'request variable',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "replace", path: "/spec/replicas",
            value: request.kind.group == 'apps' && request.kind.version == 'v1' && request.kind.kind == 'Deployment' ? 10 : 0
          }
        ]`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 10 }),
  },
  {
    name: 'object type has field access',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "add", path: "/metadata/labels", value: {"value": Object{field: "fieldValue"}.field}}
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment({}, { labels: { value: 'fieldValue' } }),
  },
  {
    name: 'object type has field testing',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/metadata/labels",
            value: {
              "field": string(has(Object{field: "fieldValue"}.field)),
              "field-unset": string(has(Object{}.field)),
            }
          }
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment({}, { labels: { field: 'true', 'field-unset': 'false' } }),
  },
  {
    name: 'object type equality',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/metadata/labels",
            value: {
              "empty": string(Object{} == Object{}),
              "same": string(Object{field: "x"} == Object{field: "x"}),
              "different": string(Object{field: "x"} == Object{field: "y"}),
            }
          }
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment({}, { labels: { empty: 'true', same: 'true', different: 'false' } }),
  },
  {
    name: 'apply configuration with params',
    options: {
      paramKind: { kind: 'ConfigMap', apiVersion: 'v1' },
      mutations: [applyConfiguration(`Object{spec: Object.spec{replicas: int(params.data['k1'])}}`)],
    },
    binding: { paramRef: { name: 'p', parameterNotFoundAction: 'Deny' } },
    params: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', namespace: 'default' }, data: { k1: '100' } },
    ],
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 100 }),
  },
  {
    name: 'applyConfiguration with excessive cost',
    options: {
      variables: [{ name: 'list', expression: '[0,1,2,3,4,5,6,7,8,9]' }],
      mutations: [
        applyConfiguration(`Object{
          spec: Object.spec{
            replicas: variables.list.all(x1, variables.list.all(x2, variables.list.all(x3, variables.list.all(x4, variables.list.all(x5, variables.list.all(x5, "0123456789" == "0123456789"))))))? 1 : 0
          }
        }`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expectedErr: 'operation cancelled: actual cost limit exceeded',
  },
  {
    name: 'namespace request variable',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "replace", path: "/spec/replicas",
            value: namespaceObject.metadata.name == 'ns1' ? 10 : 0
          }
        ]`),
      ],
    },
    namespace: 'ns1',
    object: deployment({ replicas: 1 }, { namespace: 'ns1' }),
    expected: deployment({ replicas: 10 }, { namespace: 'ns1' }),
  },
  {
    // Strict decoding of the JSON patch's result into the typed Deployment.
    name: 'jsonPatch invalid CEL initializer field',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/spec/template/spec/containers/-",
            value: Object.spec.template.spec.containers{
              name: "x",
              ports: [Object.spec.template.spec.containers.ports{containerPortZ: 8080}]
            }
          }
        ]`),
      ],
    },
    object: withPodSpec({ containers: [{ name: 'a' }] }),
    expectedErr: 'strict decoding error: unknown field "spec.template.spec.containers[1].ports[0].containerPortZ"',
  },
  {
    // Upstream documents it as behaviour to fix: Object types are not checked against the schema.
    name: 'object types are not fully type checked',
    options: { mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/spec", value: Object.invalid{replicas: 1}}]`)] },
    object: deployment({}, { labels: {} }),
    expected: deployment({ replicas: 1 }, { labels: {} }),
  },
  {
    // patch/json_patch_test.go TestJSONPatch (its other rows are TestCompilation's above).
    name: 'JSONPatch key escaping',
    options: {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "add", path: "/metadata/labels", value: {}},
          JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("k8s.io/x~y"), value: "true"}
        ]`),
      ],
    },
    object: deployment({}, { labels: {} }),
    expected: deployment({}, { labels: { 'k8s.io/x~y': 'true' } }),
  },
];

describe('TestCompilation (compilation_test.go) and TestJSONPatch (patch/json_patch_test.go)', () => {
  for (const c of COMPILATION) {
    it(c.name, async () => {
      const config = configure({ manifests: [...policy(c.options, c.binding), ...(c.params ?? [])] });
      const result = await run(
        config,
        deploymentReview(asStored(c.object), {
          ...(c.oldObject && { oldObject: asStored(c.oldObject), operation: 'UPDATE' as const }),
          ...(c.namespace && { namespace: c.namespace }),
        }),
      );
      if (c.expectedErr !== undefined) {
        expect(result.decision.kind).toBe('denied');
        expect(deniedMessage(result)).toContain(c.expectedErr);
        return;
      }
      expect(deniedMessage(result)).toBeUndefined();
      expect(result.patchedObject).toEqual(asStored(c.expected));
    });
  }

  it('refuses at start what compilation refuses: a non-Object apply configuration, with the field path', () => {
    for (const [expression, detail] of [
      [`"I'm a teapot!"`, 'must evaluate to Object but got string'],
      ['Object.spec.metadata{}', 'must evaluate to Object but got Object.spec.metadata'],
    ]) {
      const error = configErrorOf(() =>
        configure({ manifests: policy({ mutations: [applyConfiguration(expression)] }) }),
      );
      expect(error.message).toContain('spec.mutations[0].applyConfiguration.expression');
      expect(error.message).toContain(detail);
    }
  });

  it('refuses the authorizer at start, as for ValidatingAdmissionPolicy', () => {
    const error = configErrorOf(() =>
      configure({
        manifests: policy({
          mutations: [
            jsonPatch(`[
              JSONPatch{op: "replace", path: "/spec/replicas",
                value: authorizer.group('').resource('endpoints').check('create').allowed() ? 10 : 0
              }
            ]`),
          ],
        }),
      }),
    );
    expect(error.message).toContain("undeclared reference to 'authorizer'");
  });
});

// patch/smd_test.go TestApplyConfiguration (its cases TestCompilation shares are run there too).
const APPLY_CONFIGURATION: CompilationCase[] = [
  {
    name: 'apply configuration add to listType=map',
    options: {
      mutations: [
        applyConfiguration(`Object{
          spec: Object.spec{
            template: Object.spec.template{
              spec: Object.spec.template.spec{
                volumes: [Object.spec.template.spec.volumes{
                  name: "y"
                }]
              }
            }
          }
        }`),
      ],
    },
    object: withPodSpec({ volumes: [{ name: 'x' }] }),
    expected: withPodSpec({ volumes: [{ name: 'x' }, { name: 'y' }] }),
  },
  {
    name: 'apply configuration update listType=map entry',
    options: {
      mutations: [
        applyConfiguration(`Object{
          spec: Object.spec{
            template: Object.spec.template{
              spec: Object.spec.template.spec{
                volumes: [Object.spec.template.spec.volumes{
                  name: "y",
                  hostPath: Object.spec.template.spec.volumes.hostPath{
                    path: "a"
                  }
                }]
              }
            }
          }
        }`),
      ],
    },
    object: withPodSpec({ volumes: [{ name: 'x' }, { name: 'y' }] }),
    // Upstream's row has no defaults; on a stored object, y already has the emptyDir its defaulter
    // gave it, and the merge keeps it beside the hostPath (validation then refuses two sources).
    expected: withPodSpec({ volumes: [{ name: 'x' }, { name: 'y', emptyDir: {}, hostPath: { path: 'a' } }] }),
  },
  {
    name: 'complex apply configuration initialization',
    options: {
      mutations: [
        applyConfiguration(`Object{
          spec: Object.spec{
            replicas: 1,
            template: Object.spec.template{
              metadata: Object.spec.template.metadata{
                labels: {"app": "nginx"}
              },
              spec: Object.spec.template.spec{
                containers: [Object.spec.template.spec.containers{
                  name: "nginx",
                  image: "nginx:1.14.2",
                  ports: [Object.spec.template.spec.containers.ports{
                    containerPort: 80
                  }],
                  resources: Object.spec.template.spec.containers.resources{
                    limits: {"cpu": "128M"},
                  }
                }]
              }
            }
          }
        }`),
      ],
    },
    object: deployment({}),
    expected: deployment({
      replicas: 1,
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx:1.14.2',
              ports: [{ containerPort: 80 }],
              resources: { limits: { cpu: '128M' } },
            },
          ],
        },
      },
    }),
  },
  {
    name: 'apply configuration with change to atomic',
    options: {
      mutations: [
        applyConfiguration(`Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"l": "v"}}}}`),
      ],
    },
    object: deployment({ replicas: 1 }),
    expectedErr:
      'error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector',
  },
  {
    name: 'apply configuration with duplicate env vars in original object',
    options: { mutations: [applyConfiguration(`Object{spec: Object.spec{replicas: 3}}`)] },
    object: withPodSpec(
      {
        containers: [
          {
            name: 'nginx',
            env: [
              { name: 'test', value: 'a' },
              { name: 'test', value: 'b' },
            ],
          },
        ],
      },
      { replicas: 1 },
    ),
    expected: withPodSpec(
      {
        containers: [
          {
            name: 'nginx',
            env: [
              { name: 'test', value: 'a' },
              { name: 'test', value: 'b' },
            ],
          },
        ],
      },
      { replicas: 3 },
    ),
  },
  {
    name: 'apply configuration modify existing env variable',
    options: {
      mutations: [
        applyConfiguration(`Object{
          spec: Object.spec{
            template: Object.spec.template{
              spec: Object.spec.template.spec{
                containers: [Object.spec.template.spec.containers{
                  name: "nginx",
                  env: [Object.spec.template.spec.containers.env{
                    name: "test",
                    value: "c"
                  }]
                }]
              }
            }
          }
        }`),
      ],
    },
    object: withPodSpec(
      {
        containers: [
          {
            name: 'nginx',
            env: [
              { name: 'test', value: 'a' },
              { name: 'test', value: 'b' },
              { name: 'foo', value: 'bar' },
            ],
          },
        ],
      },
      { replicas: 1 },
    ),
    expected: withPodSpec(
      {
        containers: [
          {
            name: 'nginx',
            env: [
              { name: 'test', value: 'c' },
              { name: 'foo', value: 'bar' },
            ],
          },
        ],
      },
      { replicas: 1 },
    ),
  },
];

describe('TestApplyConfiguration (patch/smd_test.go)', () => {
  for (const c of APPLY_CONFIGURATION) {
    it(c.name, async () => {
      const config = configure({ manifests: policy(c.options) });
      const result = await run(config, deploymentReview(asStored(c.object)));
      if (c.expectedErr !== undefined) {
        expect(deniedMessage(result)).toContain(c.expectedErr);
        return;
      }
      expect(deniedMessage(result)).toBeUndefined();
      expect(result.patchedObject).toEqual(asStored(c.expected));
    });
  }
});

// dispatcher.go dispatchOne: the object is defaulted after every mutation, so a later policy
// reads the defaults of what an earlier one added (lib/kube/defaults.ts).
describe('defaulting between mutations', () => {
  it("a sidecar added by one policy has its imagePullPolicy before the next policy's match condition reads it", async () => {
    const config = configure({
      manifests: [
        ...podPolicy({
          name: 'sidecar',
          mutations: [
            applyConfiguration(
              'Object{spec: Object.spec{containers: [Object.spec.containers{name: "proxy", image: "envoy:v1.30"}]}}',
            ),
          ],
        }),
        ...podPolicy({
          name: 'audit',
          matchConditions: [
            {
              name: 'defaulted',
              expression: 'object.spec.containers.exists(c, c.name == "proxy" && c.imagePullPolicy == "IfNotPresent")',
            },
          ],
          mutations: [applyConfiguration('Object{metadata: Object.metadata{labels: {"proxy-pull": "defaulted"}}}')],
        }),
      ],
    });
    const stored = asStored(pod({ containers: [{ name: 'app', image: 'app:1' }] }));
    const result = await run(config, podReview(stored));
    expect(deniedMessage(result)).toBeUndefined();
    expect(labelsOf(result)).toEqual({ 'proxy-pull': 'defaulted' });
    // The patch adds the defaulted sidecar and the label, and touches nothing else of the stored pod.
    expect(result.patch).toEqual([
      {
        op: 'add',
        path: '/spec/containers/1',
        value: {
          name: 'proxy',
          image: 'envoy:v1.30',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      },
      { op: 'add', path: '/metadata/labels', value: { 'proxy-pull': 'defaulted' } },
    ]);
  });

  it('a mutation that changes nothing still defaults the object, as dispatchOne does', async () => {
    const config = configure({ manifests: podPolicy({ mutations: [jsonPatch('[]')] }) });
    const result = await run(config, podReview(pod({ containers: [{ name: 'app', image: 'app' }] })));
    const spec = result.patchedObject?.spec as { containers: Record<string, unknown>[] } | undefined;
    expect(spec?.containers[0].imagePullPolicy).toBe('Always');
    // A policy whose match conditions skip it defaults nothing.
    const skipped = configure({
      manifests: podPolicy({ matchConditions: [{ name: 'never', expression: 'false' }], mutations: [jsonPatch('[]')] }),
    });
    expect((await run(skipped, podReview(pod({ containers: [{ name: 'app', image: 'app' }] })))).patch).toEqual([]);
  });
});

// What the apiserver's decoders refuse in what a mutation builds, with the merge schema's fields
// of every built-in type. An apply configuration goes through structured-merge-diff's type
// converter (smd_test.go "apply configuration with invalid field name"): a policy error, under
// the failurePolicy. A JSON patch's result is strictly decoded into the typed object
// (json_patch.go): an internal error that ends the request whatever the failurePolicy.
describe('strict decoding of what a mutation builds', () => {
  const refusedBy = async (mutation: Mutation, failurePolicy: 'Fail' | 'Ignore' = 'Fail') =>
    run(
      configure({ manifests: policy({ failurePolicy, mutations: [mutation] }) }),
      deploymentReview(deployment({ replicas: 1 })),
    );
  const prefix =
    "policy 'd1' with binding 'd1-binding' denied request: error applying patch: failed to convert patch object to typed object: ";

  it.each([
    [
      'an unknown field (smd_test.go)',
      'Object{spec: Object.spec{replicasx: 1}}',
      '.spec.replicasx: field not declared in schema',
    ],
    [
      'an unknown field in a list-map entry, named by its key',
      'Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "c", imagex: "i"}]}}}}',
      '.spec.template.spec.containers[name="c"].imagex: field not declared in schema',
    ],
    [
      'a null map value',
      'Object{metadata: Object.metadata{labels: {"a": null}}}',
      '.metadata.labels.a: expected string, got &value.valueUnstructured{Value:0}',
    ],
    [
      'a null number',
      'Object{spec: Object.spec{replicas: null}}',
      '.spec.replicas: expected numeric (int or float), got structpb.NullValue',
    ],
    ['a null struct', 'Object{spec: Object.spec{template: null}}', '.spec.template: expected map, got &{NULL_VALUE}'],
    [
      'two errors at once',
      'Object{metadata: Object.metadata{labels: {"a": null}}, spec: Object.spec{paused: null}}',
      'errors:\n  .metadata.labels.a: expected string, got &value.valueUnstructured{Value:0}\n  .spec.paused: expected boolean, got &{NULL_VALUE}',
    ],
  ])('an apply configuration with %s is a policy error', async (_, expression, error) => {
    const refused = await refusedBy(applyConfiguration(expression));
    expect(deniedMessage(refused)).toBe(prefix + error);
    expect(refused.wire.response!.status).toMatchObject({ code: 403, reason: 'Invalid' });
    // Under Ignore the mutation is skipped.
    const ignored = await refusedBy(applyConfiguration(expression), 'Ignore');
    expect(ignored.wire.response!.allowed).toBe(true);
    expect(ignored.patch).toEqual([]);
  });

  it.each(['Fail', 'Ignore'] as const)(
    'a JSON patch adding an unknown field is an internal error, whatever the failurePolicy (%s)',
    async (failurePolicy) => {
      const result = await refusedBy(
        jsonPatch(
          '[JSONPatch{op: "add", path: "/spec/template", value: Object.spec.template{spec: Object.spec.template.spec{hostnamex: "h"}}}]',
        ),
        failurePolicy,
      );
      const message = 'strict decoding error: unknown field "spec.template.spec.hostnamex"';
      expect(result.wire.response!.allowed).toBe(false);
      expect(result.wire.response!.status).toMatchObject({
        code: 500,
        reason: 'InternalError',
        message: `Internal error occurred: ${message}`,
        details: { causes: [{ message }] },
      });
    },
  );

  it('a known field is decoded as ever; kinds the schema does not know are not checked', async () => {
    const known = await refusedBy(jsonPatch('[JSONPatch{op: "add", path: "/spec/paused", value: true}]'));
    expect(known.patchedObject?.spec).toEqual({ replicas: 1, paused: true });
    const custom = await run(
      configure({
        manifests: policy({
          apiGroups: ['example.com'],
          resources: ['widgets'],
          mutations: [jsonPatch('[JSONPatch{op: "add", path: "/spec/anything", value: 1}]')],
        }),
      }),
      {
        kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
        resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
        namespace: 'default',
        name: 'w',
        object: {
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata: { name: 'w', namespace: 'default' },
          spec: {},
        },
      },
    );
    expect(custom.patchedObject?.spec).toEqual({ anything: 1 });
  });
});

function pod(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ...metadata }, spec };
}
const podReview = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespace: 'default',
  name: 'p',
  object,
  ...extra,
});
const podPolicy = (options: Omit<PolicyOptions, 'resources' | 'apiGroups'>) =>
  policy({ ...options, resources: ['pods'], apiGroups: [''] });

describe('apply configurations on pods: list-map merges and the atomic fields (issue 15)', () => {
  it('merges containers by name, keeping the others and their fields', async () => {
    const config = configure({
      manifests: podPolicy({
        mutations: [
          applyConfiguration(`Object{spec: Object.spec{containers: [Object.spec.containers{
            name: "app", imagePullPolicy: "Always",
            ports: [Object.spec.containers.ports{containerPort: 8080, name: "http"}]
          }]}}`),
        ],
      }),
    });
    const containers = [
      { name: 'sidecar', image: 'envoy' },
      { name: 'app', image: 'app:1', ports: [{ containerPort: 8080, protocol: 'TCP' }] },
    ];
    const result = await run(config, podReview(asStored(pod({ containers }))));
    expect(result.patchedObject?.spec).toEqual(
      asStored(
        pod({
          containers: [
            { name: 'sidecar', image: 'envoy' },
            {
              name: 'app',
              image: 'app:1',
              imagePullPolicy: 'Always',
              // A port without protocol is the TCP one (the key field's schema default).
              ports: [{ containerPort: 8080, protocol: 'TCP', name: 'http' }],
            },
          ],
        }),
      ).spec,
    );
  });

  for (const [field, expression, path] of [
    ['nodeSelector', 'nodeSelector: {"disk": "ssd"}', '.spec.nodeSelector'],
    ['tolerations', 'tolerations: [Object.spec.tolerations{key: "k", operator: "Exists"}]', '.spec.tolerations'],
    [
      'imagePullSecrets',
      'imagePullSecrets: [Object.spec.imagePullSecrets{name: "regcred"}]',
      '.spec.imagePullSecrets[0]',
    ],
    ['container args', 'containers: [Object.spec.containers{name: "app", args: ["-v"]}]', '.spec.containers[0].args'],
  ]) {
    it(`refuses an apply configuration that sets ${field} (atomic), naming ${path}`, async () => {
      const config = configure({
        manifests: podPolicy({ mutations: [applyConfiguration(`Object{spec: Object.spec{${expression}}}`)] }),
      });
      const result = await run(config, podReview(pod({ containers: [{ name: 'app' }] })));
      expect(deniedMessage(result)).toBe(
        `policy 'd1' with binding 'd1-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${path}`,
      );
      expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Invalid' });
    });
  }

  it('adds labels to a pod, keeping the ones it has: one patch from the object as received', async () => {
    const config = configure({
      manifests: podPolicy({
        mutations: [applyConfiguration(`Object{metadata: Object.metadata{labels: {"team": "platform"}}}`)],
      }),
    });
    // A stored pod is already defaulted: the mutation's defaulting changes nothing else.
    const stored = asStored(pod({ containers: [{ name: 'app', image: 'app:1' }] }, { labels: { app: 'web' } }));
    const result = await run(config, podReview(stored));
    expect(result.patch).toEqual([{ op: 'add', path: '/metadata/labels/team', value: 'platform' }]);
    expect(result.patchedObject?.metadata?.labels).toEqual({ app: 'web', team: 'platform' });
  });
});

const labelsOf = (result: Awaited<ReturnType<typeof run>>) => result.patchedObject?.metadata?.labels;

const production = applyConfiguration(`Object{metadata: Object.metadata{labels: {"environment": "production"}}}`);
const prodOnly = [
  { name: 'prodonly', expression: `object.?metadata.labels["environment"].orValue("") == "production"` },
];
const invoked = applyConfiguration(`Object{metadata: Object.metadata{labels: {"policy1invoked": "true"}}}`);

describe('TestDispatcher (dispatcher_test.go)', () => {
  const volumes = () => withPodSpec({ volumes: [{ name: 'x' }] });

  it('simple patch', async () => {
    const config = configure({
      manifests: policy({
        mutations: [applyConfiguration(`Object{spec: Object.spec{replicas: object.spec.replicas + 100}}`)],
      }),
    });
    const result = await run(
      config,
      deploymentReview(asStored(withPodSpec({ volumes: [{ name: 'x' }] }, { replicas: 1 }))),
    );
    expect(result.patchedObject).toEqual(asStored(withPodSpec({ volumes: [{ name: 'x' }] }, { replicas: 101 })));
  });

  it('with param', async () => {
    const config = configure({
      manifests: [
        ...policy(
          {
            paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
            mutations: [
              applyConfiguration(`Object{spec: Object.spec{replicas: object.spec.replicas + int(params.data['key'])}}`),
            ],
          },
          { paramRef: { name: 'cm1', namespace: 'default', parameterNotFoundAction: 'Deny' } },
        ),
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1', namespace: 'default' }, data: { key: '10' } },
      ],
    });
    const result = await run(config, deploymentReview(withPodSpec({ volumes: [{ name: 'x' }] }, { replicas: 1 })));
    expect((result.patchedObject?.spec as { replicas?: number } | undefined)?.replicas).toBe(11);
  });

  it('both policies reinvoked', async () => {
    const labelFrom = (name: string) =>
      applyConfiguration(
        `Object{metadata: Object.metadata{labels: {"${name}": string(int(object.?metadata.labels["count"].orValue("1")) + 1)}}}`,
      );
    const config = configure({
      manifests: [
        ...policy({ name: 'policy1', mutations: [labelFrom('policy1')] }),
        ...policy({ name: 'policy2', mutations: [labelFrom('policy2')] }),
      ],
    });
    const result = await run(config, deploymentReview(volumes()));
    expect(labelsOf(result)).toEqual({ policy1: '2', policy2: '2' });
  });

  it('1st policy sets match condition that 2nd policy matches', async () => {
    const config = configure({
      manifests: [
        ...policy({ name: 'policy1', mutations: [production] }),
        ...policy({ name: 'policy2', matchConditions: prodOnly, mutations: [invoked] }),
      ],
    });
    const result = await run(config, deploymentReview(volumes()));
    expect(labelsOf(result)).toEqual({ environment: 'production', policy1invoked: 'true' });
  });

  it('1st policy still does not match after 2nd policy sets match condition', async () => {
    const config = configure({
      manifests: [
        ...policy({ name: 'policy1', matchConditions: prodOnly, mutations: [invoked] }),
        ...policy({ name: 'policy2', mutations: [production] }),
      ],
    });
    const result = await run(config, deploymentReview(volumes()));
    expect(labelsOf(result)).toEqual({ environment: 'production' });
  });
});

describe('reinvocation, as the apiserver runs the MAP step (dispatcher.go, reinvocationcontext.go)', () => {
  const counter = (name: string) =>
    applyConfiguration(
      `Object{metadata: Object.metadata{labels: {"${name}": string(int(object.?metadata.labels["${name}"].orValue("0")) + 1)}}}`,
    );

  it('runs every IfNeeded policy once more after a mutation, within the one call; Never ones once', async () => {
    const config = configure({
      manifests: [
        ...policy({ name: 'again', reinvocationPolicy: 'IfNeeded', mutations: [counter('again')] }),
        ...policy({ name: 'once', reinvocationPolicy: 'Never', mutations: [counter('once')] }),
      ],
    });
    const result = await run(config, deploymentReview(deployment({})));
    expect(labelsOf(result)).toEqual({ again: '2', once: '1' });
  });

  it('an IfNeeded policy sees what a later policy did: its second run copies the later label', async () => {
    const config = configure({
      manifests: [
        ...policy({
          name: 'copy',
          reinvocationPolicy: 'IfNeeded',
          mutations: [
            applyConfiguration(
              `Object{metadata: Object.metadata{labels: {"copy": object.?metadata.labels["environment"].orValue("none")}}}`,
            ),
          ],
        }),
        ...policy({ name: 'source', mutations: [production] }),
      ],
    });
    const result = await run(config, deploymentReview(deployment({})));
    expect(labelsOf(result)).toEqual({ copy: 'production', environment: 'production' });
  });

  it('a policy whose match conditions skipped it is not reinvoked; nothing applied, nothing reinvoked', async () => {
    const config = configure({
      manifests: policy({
        reinvocationPolicy: 'IfNeeded',
        matchConditions: prodOnly,
        mutations: [counter('n')],
      }),
    });
    const result = await run(config, deploymentReview(deployment({})));
    expect(result.patch).toEqual([]);
  });

  it("the emitted webhook asks for IfNeeded when any policy does, and its rules are the policies' union", () => {
    const config = configure({
      manifests: [
        ...policy({ name: 'a', reinvocationPolicy: 'IfNeeded', failurePolicy: 'Ignore', mutations: [counter('a')] }),
        ...podPolicy({ name: 'b', failurePolicy: 'Ignore', mutations: [counter('b')] }),
      ],
    });
    const phase = mutatingPhaseFor(config);
    expect(phase.reinvocationPolicy).toBe('IfNeeded');
    expect(phase.failurePolicy).toBe('Ignore');
    expect(phase.rules.map((r) => r.resources)).toEqual([['deployments'], ['pods']]);
    const never = mutatingPhaseFor(configure({ manifests: policy({ mutations: [counter('a')] }) }));
    expect(never).toMatchObject({ reinvocationPolicy: 'Never', failurePolicy: 'Fail' });
  });

  it('Fail and Ignore policies on separate resources get a webhook each; on shared ones, one that fails closed', () => {
    const separate = mutatingPhaseFor(
      configure({
        manifests: [
          ...policy({ name: 'a', failurePolicy: 'Fail', mutations: [counter('a')] }),
          ...podPolicy({ name: 'b', failurePolicy: 'Ignore', mutations: [counter('b')] }),
        ],
      }),
    );
    expect(separate.failurePolicyGroups?.map((g) => [g.failurePolicy, g.rules.map((r) => r.resources)])).toEqual([
      ['Fail', [['deployments']]],
      ['Ignore', [['pods']]],
    ]);
    const shared = mutatingPhaseFor(
      configure({
        manifests: [
          ...policy({ name: 'a', failurePolicy: 'Fail', mutations: [counter('a')] }),
          ...policy({ name: 'b', failurePolicy: 'Ignore', mutations: [counter('b')] }),
        ],
      }),
    );
    expect(shared.failurePolicyGroups).toBeUndefined();
    expect(shared.failurePolicy).toBe('Fail');
  });
});

describe('failurePolicy, params and matching (generic dispatcher)', () => {
  const failing = jsonPatch(`[JSONPatch{op: "replace", path: "/spec/missing/x", value: 1}]`);
  const labelled = applyConfiguration(`Object{metadata: Object.metadata{labels: {"ok": "true"}}}`);

  it('Fail: the policy error refuses the request, with the binding named and the error a cause', async () => {
    const config = configure({ manifests: policy({ mutations: [failing] }) });
    const result = await run(config, deploymentReview(deployment({})));
    const message =
      "policy 'd1' with binding 'd1-binding' denied request: JSON Patch: replace operation does not apply: doc is missing path: /spec/missing/x: missing value";
    expect(deniedMessage(result)).toBe(message);
    expect(result.wire.response!.status).toMatchObject({
      code: 403,
      reason: 'Invalid',
      details: { name: 'd', group: 'apps', kind: 'deployments', causes: [{ message }] },
    });
  });

  it("Ignore: the failing mutation is skipped, the policy's next mutation and other policies still apply", async () => {
    const config = configure({
      manifests: [...policy({ failurePolicy: 'Ignore', mutations: [failing, labelled] })],
    });
    const result = await run(config, deploymentReview(deployment({})));
    expect(deniedMessage(result)).toBeUndefined();
    expect(labelsOf(result)).toEqual({ ok: 'true' });
  });

  it('params by selector: one invocation per param, in order; none found with Deny refuses', async () => {
    const manifests = (action: 'Allow' | 'Deny', params: Record<string, unknown>[]) => [
      ...policy(
        {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          mutations: [applyConfiguration(`Object{metadata: Object.metadata{labels: {params.data.key: "set"}}}`)],
        },
        { paramRef: { selector: { matchLabels: { use: 'yes' } }, parameterNotFoundAction: action } },
      ),
      ...params,
    ];
    const cm = (name: string, key: string, use: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', labels: { use } },
      data: { key },
    });
    const two = await run(
      configure({
        manifests: manifests('Deny', [cm('a', 'one', 'yes'), cm('b', 'two', 'yes'), cm('c', 'three', 'no')]),
      }),
      deploymentReview(deployment({})),
    );
    expect(labelsOf(two)).toEqual({ one: 'set', two: 'set' });
    const none = await run(configure({ manifests: manifests('Deny', []) }), deploymentReview(deployment({})));
    expect(deniedMessage(none)).toBe(
      "policy 'd1' with binding 'd1-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    const allowed = await run(configure({ manifests: manifests('Allow', []) }), deploymentReview(deployment({})));
    expect(allowed.patch).toEqual([]);
  });

  // policy_source.go ensureParamsForPolicyLocked: a paramKind the cluster does not serve is the
  // policy's configuration error, answered before its bindings under its failurePolicy.
  it('a paramKind no built-in kind or loaded object serves: a policy error with upstream wording', async () => {
    const manifests = (failurePolicy: 'Fail' | 'Ignore', paramKind: { apiVersion: string; kind: string }) =>
      policy(
        { failurePolicy, paramKind, mutations: [labelled] },
        { paramRef: { name: 'p', namespace: 'default', parameterNotFoundAction: 'Allow' } },
      );
    const missing = { apiVersion: 'example.com/v1', kind: 'Missing' };
    const refused = await run(configure({ manifests: manifests('Fail', missing) }), deploymentReview(deployment({})));
    expect(deniedMessage(refused)).toBe(
      `policy "d1" denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Missing'`,
    );
    expect(refused.wire.response!.status).toMatchObject({ code: 403, reason: 'Invalid' });
    const ignored = await run(configure({ manifests: manifests('Ignore', missing) }), deploymentReview(deployment({})));
    expect(ignored.wire.response!.allowed).toBe(true);
    expect(ignored.patch).toEqual([]);
    // A built-in kind with no object loaded is served: Allow finds nothing and runs nothing.
    const builtIn = await run(
      configure({ manifests: manifests('Fail', { apiVersion: 'v1', kind: 'ConfigMap' }) }),
      deploymentReview(deployment({})),
    );
    expect(builtIn.wire.response!.allowed).toBe(true);
    // So is a kind whose objects are loaded, built in or not.
    const loaded = await run(
      configure({
        manifests: [
          ...manifests('Fail', missing),
          { apiVersion: 'example.com/v1', kind: 'Missing', metadata: { name: 'p', namespace: 'default' } },
        ],
      }),
      deploymentReview(deployment({})),
    );
    expect(labelsOf(loaded)).toEqual({ ok: 'true' });
  });

  it('binding matchResources narrow the policy; objectSelector reads the object', async () => {
    const config = configure({
      manifests: policy(
        { mutations: [labelled] },
        { matchResources: { objectSelector: { matchLabels: { tier: 'web' } } } },
      ),
    });
    const web = await run(config, deploymentReview(deployment({}, { labels: { tier: 'web' } })));
    expect(labelsOf(web)).toEqual({ tier: 'web', ok: 'true' });
    const db = await run(config, deploymentReview(deployment({}, { labels: { tier: 'db' } })));
    expect(db.patch).toEqual([]);
  });

  it('a request no policy names is admitted untouched; DELETE is never patched', async () => {
    const config = configure({ manifests: policy({ mutations: [labelled] }) });
    const pods = await run(config, podReview(pod({ containers: [{ name: 'a' }] })));
    expect(pods.decision).toEqual({ kind: 'allowed' });
    const deletion = await run(
      config,
      deploymentReview(deployment({}), { operation: 'DELETE', object: null, oldObject: deployment({}) }),
    );
    expect(deletion.decision).toEqual({ kind: 'allowed' });
  });

  it('JSONPatch with jsonpatch.escapeKey adds an annotation whose key has a slash', async () => {
    const config = configure({
      manifests: policy({
        mutations: [
          jsonPatch(`[
            JSONPatch{op: "add", path: "/metadata/annotations", value: {}},
            JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/a~b"), value: "v"}
          ]`),
        ],
      }),
    });
    const result = await run(config, deploymentReview(deployment({})));
    expect(result.patchedObject?.metadata?.annotations).toEqual({ 'example.com/a~b': 'v' });
  });
});

// pkg/apis/admissionregistration/validation TestValidateMutatingAdmissionPolicy: what the apiserver
// refuses on create is refused at start, naming the object and the field.
describe('TestValidateMutatingAdmissionPolicy: refused at start', () => {
  const base = () => policy({ mutations: [applyConfiguration('Object{}')] });
  const spec = (manifests: Record<string, unknown>[]) => manifests[0].spec as Record<string, unknown>;
  const cases: [string, (m: Record<string, unknown>[]) => void, string][] = [
    [
      'no reinvocationPolicy',
      (m) => {
        delete spec(m).reinvocationPolicy;
      },
      'spec.reinvocationPolicy: Required value',
    ],
    [
      'an unknown reinvocationPolicy',
      (m) => {
        spec(m).reinvocationPolicy = 'other';
      },
      'spec.reinvocationPolicy: Unsupported value: "other": supported values: "Never", "IfNeeded"',
    ],
    [
      'an unknown failurePolicy',
      (m) => {
        spec(m).failurePolicy = 'other';
      },
      'spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"',
    ],
    [
      'no mutations',
      (m) => {
        spec(m).mutations = [];
      },
      'spec.mutations: Required value: mutations must contain at least one item',
    ],
    [
      'no patchType',
      (m) => {
        spec(m).mutations = [{ applyConfiguration: { expression: 'Object{}' } }];
      },
      'spec.mutations[0].patchType: Required value',
    ],
    [
      'an unknown patchType',
      (m) => {
        spec(m).mutations = [{ patchType: 'other', applyConfiguration: { expression: 'Object{}' } }];
      },
      'spec.mutations[0].patchType: Unsupported value: "other": supported values: "ApplyConfiguration", "JSONPatch"',
    ],
    [
      'applyConfiguration beside patchType JSONPatch',
      (m) => {
        spec(m).mutations = [
          { patchType: 'JSONPatch', jsonPatch: { expression: '[]' }, applyConfiguration: { expression: 'Object{}' } },
        ];
      },
      'spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch',
    ],
    [
      'patchType JSONPatch without jsonPatch',
      (m) => {
        spec(m).mutations = [{ patchType: 'JSONPatch' }];
      },
      'spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch',
    ],
    [
      'a blank expression',
      (m) => {
        spec(m).mutations = [{ patchType: 'JSONPatch', jsonPatch: { expression: '  ' } }];
      },
      'spec.mutations[0].jsonPatch.expression: Required value',
    ],
    [
      'DELETE in the rules',
      (m) => {
        (spec(m).matchConstraints as { resourceRules: { operations: string[] }[] }).resourceRules[0].operations = [
          'DELETE',
        ];
      },
      'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"',
    ],
    [
      'no resource rules',
      (m) => {
        (spec(m).matchConstraints as { resourceRules: unknown[] }).resourceRules = [];
      },
      'spec.matchConstraints.resourceRules: Required value',
    ],
    [
      'a misspelt field',
      (m) => {
        spec(m).mutation = [];
      },
      'unknown field "mutation"; did you mean "mutations"?',
    ],
    [
      'a JSONPatch field that JSONPatch lacks',
      (m) => {
        spec(m).mutations = [
          { patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", pth: "/a"}]' } },
        ];
      },
      "undefined field 'pth'",
    ],
    [
      'a JSONPatch expression that is not a list of JSONPatch',
      (m) => {
        spec(m).mutations = [{ patchType: 'JSONPatch', jsonPatch: { expression: '"add"' } }];
      },
      'must evaluate to list(JSONPatch) but got string',
    ],
    [
      'JSONPatch in a match condition (patch types are for mutations only)',
      (m) => {
        spec(m).matchConditions = [{ name: 'x', expression: 'JSONPatch{} == JSONPatch{}' }];
      },
      "undeclared reference to 'JSONPatch'",
    ],
  ];
  for (const [name, change, expected] of cases) {
    it(`refuses ${name}`, () => {
      const manifests = base();
      change(manifests);
      const error = configErrorOf(() => configure({ manifests }));
      expect(error.message).toContain('MutatingAdmissionPolicy');
      expect(error.message).toContain(expected);
    });
  }

  it('accepts the policy at v1alpha1, v1beta1 and v1, with failurePolicy defaulted to Fail', () => {
    for (const version of ['v1alpha1', 'v1beta1', 'v1']) {
      const manifests = base().map((m) => ({ ...m, apiVersion: `admissionregistration.k8s.io/${version}` }));
      delete spec(manifests).failurePolicy;
      const config = configure({ manifests });
      expect(config.policies.map((p) => [p.name, p.failurePolicy, p.bindings.length])).toEqual([['d1', 'Fail', 1]]);
    }
  });

  it('accepts a binding naming a policy that is not loaded: it does nothing, and the other policies apply', async () => {
    const [, orphan] = base();
    const config = configure({
      manifests: [
        { ...orphan, metadata: { name: 'orphan' }, spec: { policyName: 'not-loaded' } },
        ...policy({
          name: 'labels',
          mutations: [applyConfiguration('Object{metadata: Object.metadata{labels: {"a": "b"}}}')],
        }),
      ],
    });
    expect(config.policies.map((p) => [p.name, p.bindings.map((b) => b.name)])).toEqual([
      ['labels', ['labels-binding']],
    ]);
    expect(labelsOf(await run(config, deploymentReview(deployment({}))))).toEqual({ a: 'b' });
  });

  // validation.go validateParamRef: no default for parameterNotFoundAction (v1beta1 and v1 alike).
  it.each([
    [{ name: 'p' }, 'spec.paramRef.parameterNotFoundAction: Required value'],
    [{ name: 'p', parameterNotFoundAction: '' }, 'spec.paramRef.parameterNotFoundAction: Required value'],
    [
      { name: 'p', parameterNotFoundAction: 'Skip' },
      'spec.paramRef.parameterNotFoundAction: Unsupported value: "Skip": supported values: "Deny", "Allow"',
    ],
  ])('refuses paramRef %j', (paramRef, expected) => {
    const manifests = policy(
      { mutations: [applyConfiguration('Object{}')], paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } },
      { paramRef },
    );
    expect(configErrorOf(() => configure({ manifests })).message).toContain(expected);
  });

  it('is inactive without configuration, as ValidatingAdmissionPolicy without policies', () => {
    expect(plugin.inactiveReason!(configure(undefined))).toMatch(/no policies to apply/);
  });
});

describe('the shipped example (config/examples/mutating-admission-policy.yaml)', () => {
  const file = resolve(import.meta.dirname, '../../config/examples/mutating-admission-policy.yaml');
  const configuration = parseAdmissionConfiguration(readFileSync(file, 'utf8'), file);
  const config = configurePlugin<PluginConfig>(plugin, configuration);

  it("labels a pod with its namespace's team, and a second call on the result changes nothing", async () => {
    const stored = asStored(pod({ containers: [{ name: 'app', image: 'app:1' }] }));
    const result = await mutateIdempotently(plugin, podReview(stored), config);
    expect(result.patch).toEqual([{ op: 'add', path: '/metadata/labels', value: { team: 'platform' } }]);
  });

  it('gives a Deployment without replicas two, recorded under an escaped annotation key', async () => {
    const result = await mutateIdempotently(plugin, deploymentReview(deployment({ template: {} })), config);
    expect(result.patchedObject?.spec).toEqual({ template: {}, replicas: 2 });
    expect(result.patchedObject?.metadata?.annotations).toEqual({ 'example.com/defaulted-replicas': 'true' });
  });
});

describe('reinvocation after an error', () => {
  it('a Fail policy error refuses at once: no second round, one cause per error', async () => {
    const config = configure({
      manifests: [
        ...policy({
          name: 'again',
          reinvocationPolicy: 'IfNeeded',
          mutations: [applyConfiguration(`Object{metadata: Object.metadata{labels: {"x": "1"}}}`)],
        }),
        ...policy({
          name: 'broken',
          reinvocationPolicy: 'IfNeeded',
          mutations: [jsonPatch(`[JSONPatch{op: "remove", path: "/spec/absent"}]`)],
        }),
      ],
    });
    const result = await run(config, deploymentReview(deployment({})));
    const causes = (result.wire.response!.status as { details?: { causes?: unknown[] } }).details?.causes;
    expect(causes).toEqual([
      {
        message:
          "policy 'broken' with binding 'broken-binding' denied request: JSON Patch: error in remove for path: '/spec/absent': Unable to remove nonexistent key: absent: missing value",
      },
    ]);
  });
});
