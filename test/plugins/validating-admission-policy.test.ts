// The Kubernetes 1.27 ValidatingAdmissionPolicy page, example by example (test/fixtures/vap), then
// upstream's dispatcher behaviours: actions, failurePolicy, params, matching, compile errors.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/validating-admission-policy/plugin.js';
import type { PluginConfig } from '../../functions/validating-admission-policy/config.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import type { LearnedNamespace, LearnedNamespaces, PluginState } from '../../lib/admission/ports.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, requestOf as requestFor, runPhase } from '../support/review.js';
import { configErrorOf } from '../support/config-error.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/vap');
const source = { file: 'test AdmissionConfiguration', baseDir: FIXTURES };

function configure(raw: unknown): PluginConfig {
  return plugin.configure!(raw, source);
}

/** A LearnedNamespaces of our own: what the Namespace webhook would have recorded. */
function namespaces(labels: Record<string, Record<string, string>>): PluginState & { reads: string[] } {
  const reads: string[] = [];
  const learnedNamespaces: LearnedNamespaces = {
    async get(name) {
      reads.push(name);
      if (!(name in labels)) return undefined;
      return {
        name,
        labels: labels[name],
        annotations: {},
        phase: 'Active',
        observedAt: '2024-01-01T00:00:00Z',
      } satisfies LearnedNamespace;
    },
    async knownAbsent() {
      return false;
    },
  };
  return { ...NO_STATE, learnedNamespaces, reads };
}

const cluster = namespaces({ test: { environment: 'test' }, prod: { environment: 'prod' }, plain: {}, demo: {} });

function deployment(replicas: number, namespace = 'test', name = 'nginx'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { replicas, template: { spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
  };
}

function deploymentReview(replicas: number, namespace = 'test', extra: Partial<ReviewInput> = {}): ReviewInput {
  return {
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    object: deployment(replicas, namespace),
    ...extra,
  };
}

const run = (config: PluginConfig, input: ReviewInput, state: PluginState = cluster) =>
  runPhase(plugin, 'validate', input, config, state);

describe("the demo policy (the page's first example)", () => {
  const config = configure({ paths: ['demo.yaml'] });

  it("denies 6 replicas in a namespace labelled environment: test, with the apiserver's message", async () => {
    const result = await run(config, deploymentReview(6));
    expect(deniedMessage(result)).toBe(
      `deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`,
    );
    expect(result.wire.response!.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      details: { name: 'nginx', group: 'apps', kind: 'deployments' },
    });
  });

  it('admits 5 replicas, and 6 replicas in a namespace the binding does not select', async () => {
    expect(deniedMessage(await run(config, deploymentReview(5)))).toBeUndefined();
    expect(deniedMessage(await run(config, deploymentReview(6, 'prod')))).toBeUndefined();
  });

  it('leaves other resources and operations alone without reading the namespace store', async () => {
    const state = namespaces({ test: { environment: 'test' } });
    const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'test' }, spec: {} };
    expect(deniedMessage(await run(config, { object: pod }, state))).toBeUndefined();
    expect(
      deniedMessage(
        await run(
          config,
          { ...deploymentReview(6), operation: 'DELETE', object: null, oldObject: deployment(6) },
          state,
        ),
      ),
    ).toBeUndefined();
    expect(state.reads).toEqual([]);
  });

  it('answers a v1beta1 review in kind', async () => {
    const result = await run(config, { ...deploymentReview(6), apiVersion: 'admission.k8s.io/v1beta1', uid: 'beta' });
    expect(result.wire).toMatchObject({
      apiVersion: 'admission.k8s.io/v1beta1',
      response: { uid: 'beta', allowed: false },
    });
  });
});

describe('parameter resources', () => {
  const config = configure({ paths: ['replicalimit.yaml'] });

  it('limits test namespaces to 3 and the others to 100, each through its own binding and params', async () => {
    expect(deniedMessage(await run(config, deploymentReview(3)))).toBeUndefined();
    expect(deniedMessage(await run(config, deploymentReview(4)))).toBe(
      `deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: failed expression: object.spec.replicas <= params.maxReplicas`,
    );
    expect(deniedMessage(await run(config, deploymentReview(100, 'prod')))).toBeUndefined();
    expect(deniedMessage(await run(config, deploymentReview(101, 'prod')))).toContain(
      "with binding 'replicalimit-binding-nontest' denied request",
    );
    expect(deniedMessage(await run(config, deploymentReview(101, 'plain')))).toContain(
      "'replicalimit-binding-nontest'",
    );
  });

  it('messageExpression builds the message from params, as the page shows', async () => {
    const config = configure({ paths: ['message-expression.yaml'] });
    const result = await run(config, deploymentReview(5));
    expect(deniedMessage(result)).toBe(
      `deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' with binding 'demo-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3`,
    );
  });

  it('optional params: has() short-circuits when absent, checks the range when present; params is null when unbound', async () => {
    const config = configure({ paths: ['optional-params.yaml'] });
    const state = namespaces({
      a: { params: 'with-number' },
      b: { params: 'without-number' },
      c: { params: 'unbound' },
    });
    expect(deniedMessage(await run(config, deploymentReview(1, 'a'), state))).toContain(
      "with binding 'with-number' denied request: failed expression: !has(params.optionalNumber) || (params.optionalNumber >= 5 && params.optionalNumber <= 10)",
    );
    expect(deniedMessage(await run(config, deploymentReview(1, 'b'), state))).toBeUndefined();
    expect(deniedMessage(await run(config, deploymentReview(1, 'c'), state))).toContain(
      "with binding 'unbound' denied request: params missing but required to bind to this policy",
    );
  });

  it('the page\'s "global" binding (spec.params) is refused at start, as kubectl apply refuses it', () => {
    expect(() => configure({ paths: ['replicalimit.yaml', 'global-binding-as-documented.yaml'] })).toThrow(
      /ValidatingAdmissionPolicyBinding "replicalimit-binding-global" \(global-binding-as-documented.yaml document 1\) spec.params: unknown field/,
    );
  });
});

/** A policy on deployments with these spec fields, bound with these actions to every namespace. */
function policy(
  spec: Record<string, unknown>,
  actions: string[] = ['Deny'],
  binding: Record<string, unknown> = {},
  name = 'p.example.com',
): PluginConfig {
  return configure({
    manifests: [
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name },
        spec: {
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['apps'],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['deployments'],
              },
            ],
          },
          ...spec,
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'b' },
        spec: { policyName: name, validationActions: actions, ...binding },
      },
    ],
  });
}

const tooMany = { validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many replicas' }] };

describe('validationActions', () => {
  it('Warn: a warning, and the request is admitted', async () => {
    const result = await run(policy(tooMany, ['Warn']), deploymentReview(6));
    expect(result.wire.response).toMatchObject({
      allowed: true,
      warnings: ["Validation failed for ValidatingAdmissionPolicy 'p.example.com' with binding 'b': too many replicas"],
    });
  });

  it('Audit: admitted silently, with the validation_failure audit annotation as upstream writes it', async () => {
    const result = await run(policy(tooMany, ['Audit']), deploymentReview(6));
    const response = result.wire.response!;
    expect(response.allowed).toBe(true);
    expect(response.warnings).toBeUndefined();
    expect(JSON.parse(response.auditAnnotations!.validation_failure)).toEqual([
      {
        message: 'too many replicas',
        policy: 'p.example.com',
        binding: 'b',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
  });

  it('Warn and Audit together; Deny and Warn together are refused at start', async () => {
    const result = await run(policy(tooMany, ['Warn', 'Audit']), deploymentReview(6));
    expect(result.wire.response!.warnings).toHaveLength(1);
    expect(result.wire.response!.auditAnnotations).toHaveProperty(['validation_failure']);
    expect(() => policy(tooMany, ['Deny', 'Warn'])).toThrow(
      /spec.validationActions: Invalid value: \["Deny","Warn"\]: must not contain both Deny and Warn/,
    );
  });

  it('reason picks the status code: Forbidden 403, Invalid 422, RequestEntityTooLarge 413; other reasons are refused', async () => {
    for (const [reason, code] of [
      ['Forbidden', 403],
      ['Invalid', 422],
      ['RequestEntityTooLarge', 413],
    ] as const) {
      const result = await run(policy({ validations: [{ expression: 'false', reason }] }), deploymentReview(1));
      expect(result.wire.response!.status).toMatchObject({ code, reason });
    }
    expect(() => policy({ validations: [{ expression: 'false', reason: 'Unauthorized' }] })).toThrow(
      /spec.validations\[0\].reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"/,
    );
  });

  it("the first failed validation decides the message; fieldPath is reported as the cause's field", async () => {
    const spec = {
      validations: [
        { expression: 'true' },
        { expression: 'object.spec.replicas < 2', message: 'first', fieldPath: 'spec.replicas' },
        { expression: 'false', message: 'second' },
      ],
    };
    const result = await run(policy(spec), deploymentReview(3));
    expect(deniedMessage(result)).toContain('denied request: first');
    expect(result.wire.response!.status!.details!.causes).toEqual([
      { message: expect.stringContaining('denied request: first'), field: 'spec.replicas' },
    ]);
  });
});

describe('failurePolicy: evaluation errors', () => {
  const broken = { validations: [{ expression: 'object.spec.missing.field == 1' }] };

  it('Fail (the default) denies with the error', async () => {
    const result = await run(policy(broken), deploymentReview(1));
    expect(deniedMessage(result)).toBe(
      `deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy 'p.example.com' with binding 'b' denied request: expression 'object.spec.missing.field == 1' resulted in error: no such key: missing`,
    );
  });

  it('Ignore admits', async () => {
    expect(
      deniedMessage(await run(policy({ ...broken, failurePolicy: 'Ignore' }), deploymentReview(1))),
    ).toBeUndefined();
  });

  it('missing params: parameterNotFoundAction Deny fails the binding under failurePolicy, Allow skips it', async () => {
    const spec = {
      paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
      validations: [{ expression: 'false' }],
    };
    const deny = await run(
      policy(spec, ['Deny'], { paramRef: { name: 'nope', parameterNotFoundAction: 'Deny' } }),
      deploymentReview(1),
    );
    expect(deniedMessage(deny)).toContain(
      "with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    expect(
      deniedMessage(
        await run(
          policy({ ...spec, failurePolicy: 'Ignore' }, ['Deny'], {
            paramRef: { name: 'nope', parameterNotFoundAction: 'Deny' },
          }),
          deploymentReview(1),
        ),
      ),
    ).toBeUndefined();
    expect(
      deniedMessage(
        await run(
          policy(spec, ['Deny'], { paramRef: { name: 'nope', parameterNotFoundAction: 'Allow' } }),
          deploymentReview(1),
        ),
      ),
    ).toBeUndefined();
  });

  it('a runaway expression is cancelled at the per-expression cost limit and handled by failurePolicy', async () => {
    const ten = '[1,2,3,4,5,6,7,8,9,10]';
    const expression = `${ten}.all(a, ${ten}.all(b, ${ten}.all(c, ${ten}.all(d, ${ten}.all(e, ${ten}.all(f, a*b*c*d*e*f > 0))))))`;
    const result = await run(policy({ validations: [{ expression }] }), deploymentReview(1));
    expect(deniedMessage(result)).toContain('resulted in error: operation cancelled: actual cost limit exceeded');
    expect(
      deniedMessage(await run(policy({ validations: [{ expression }], failurePolicy: 'Ignore' }), deploymentReview(1))),
    ).toBeUndefined();
  });
});

describe("matchConditions (the page's example)", () => {
  const config = configure({ paths: ['match-conditions.yaml'] });
  const named = (name: string, namespace: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
  });

  it('evaluates the validation when every condition holds', async () => {
    expect(
      deniedMessage(await run(config, { object: named('demo-x', 'plain'), resource: { resource: 'configmaps' } })),
    ).toContain(
      "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding.example.com' denied request: failed expression: !object.metadata.name.contains('demo') || object.metadata.namespace == 'demo'",
    );
    expect(
      deniedMessage(await run(config, { object: named('demo-x', 'demo'), resource: { resource: 'configmaps' } })),
    ).toBeUndefined();
  });

  it('skips kubelet requests, leases and RBAC objects', async () => {
    const kubelet = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
    expect(
      deniedMessage(
        await run(config, {
          object: named('demo-x', 'plain'),
          resource: { resource: 'configmaps' },
          userInfo: kubelet,
        }),
      ),
    ).toBeUndefined();
    const lease = {
      object: named('demo-lease', 'plain'),
      kind: { group: 'coordination.k8s.io', kind: 'Lease' },
      resource: { group: 'coordination.k8s.io', resource: 'leases' },
    };
    expect(deniedMessage(await run(config, lease))).toBeUndefined();
    const role = {
      object: named('demo-role', 'plain'),
      kind: { group: 'rbac.authorization.k8s.io', kind: 'Role' },
      resource: { group: 'rbac.authorization.k8s.io', resource: 'roles' },
    };
    expect(deniedMessage(await run(config, role))).toBeUndefined();
  });

  it('a false condition wins over errors; errors alone follow failurePolicy', async () => {
    const conditions = (failurePolicy: string) => ({
      failurePolicy,
      matchConditions: [
        { name: 'err', expression: 'object.nope == true' },
        { name: 'f', expression: 'object.spec.replicas > 10' },
      ],
      validations: [{ expression: 'false' }],
    });
    expect(deniedMessage(await run(policy(conditions('Fail')), deploymentReview(1)))).toBeUndefined();
    expect(deniedMessage(await run(policy(conditions('Fail')), deploymentReview(11)))).toContain(
      "denied request: expression 'object.nope == true' resulted in error: no such key: nope",
    );
    expect(deniedMessage(await run(policy(conditions('Ignore')), deploymentReview(11)))).toBeUndefined();
  });
});

describe("auditAnnotations (the page's example)", () => {
  const config = configure({ paths: ['audit-annotations.yaml'] });

  it('answers <policy>/<key> only when the value is not null', async () => {
    const high = await run(config, deploymentReview(128));
    expect(high.wire.response).toMatchObject({
      allowed: true,
      auditAnnotations: { 'demo-policy.example.com_high-replica-count': 'Deployment spec.replicas set to 128' },
    });
    expect((await run(config, deploymentReview(3))).wire.response!.auditAnnotations).toBeUndefined();
  });

  it("the page's literal form (key under validations) is refused at start with the field named", () => {
    const literal = {
      apiVersion: 'admissionregistration.k8s.io/v1alpha1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'demo-policy.example.com' },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
          ],
        },
        validations: [{ key: 'high-replica-count', expression: 'object.spec.replicas > 50' }],
      },
    };
    expect(() => configure({ manifests: [literal] })).toThrow(
      /ValidatingAdmissionPolicy "demo-policy.example.com" \(manifests\[0\]\) spec.validations\[0\].key: unknown field/,
    );
  });
});

describe('compile errors fail the start, naming the policy, the field and the position', () => {
  it('a syntax error in a validation', () => {
    const error = configErrorOf(() =>
      policy({ validations: [{ expression: 'object.spec.replicas <= ' }] }, ['Deny'], {}, 'broken.example.com'),
    );
    expect(error.field).toBe(
      'ValidatingAdmissionPolicy "broken.example.com" (manifests[0]) spec.validations[0].expression',
    );
    expect(error.message).toBe(
      'ValidatingAdmissionPolicy: ValidatingAdmissionPolicy "broken.example.com" (manifests[0]) spec.validations[0].expression: ' +
        `Invalid value: "object.spec.replicas <= ": compilation failed: ERROR: <input>:1:25: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n` +
        ' | object.spec.replicas <= \n' +
        ' | ........................^',
    );
  });

  it('undeclared references, in every expression field', () => {
    expect(() => policy({ validations: [{ expression: 'obj.spec.replicas > 1' }] })).toThrow(
      /spec.validations\[0\].expression: .*ERROR: <input>:1:1: undeclared reference to 'obj'/s,
    );
    expect(() => policy({ validations: [{ expression: 'true', messageExpression: "'x' + nope()" }] })).toThrow(
      /spec.validations\[0\].messageExpression: .*<input>:1:11: undeclared reference to 'nope'/s,
    );
    expect(() =>
      policy({ matchConditions: [{ name: 'a', expression: 'foo' }], validations: [{ expression: 'true' }] }),
    ).toThrow(/spec.matchConditions\[0\].expression/);
    expect(() =>
      policy({
        variables: [
          { name: 'a', expression: 'variables.b' },
          { name: 'b', expression: '1' },
        ],
        validations: [{ expression: 'true' }],
      }),
    ).toThrow(/spec.variables\[0\].expression: .*<input>:1:10: undefined field 'b'/s);
    expect(() => policy({ auditAnnotations: [{ key: 'k', valueExpression: 'object.x +' }] })).toThrow(
      /spec.auditAnnotations\[0\].valueExpression: .*Syntax error/s,
    );
  });

  it('celEnvironment pins the apiserver version whose CEL environment compiles the policies', () => {
    const spec = {
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
        ],
      },
      validations: [{ expression: "isIP('10.0.0.1')" }],
    };
    const manifests = [
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'ip.example.com' },
        spec,
      },
    ];
    expect(() => configure({ manifests })).not.toThrow();
    expect(() => configure({ celEnvironment: '1.31', manifests })).not.toThrow();
    expect(() => configure({ celEnvironment: '1.30', manifests })).toThrow(
      /spec.validations\[0\].expression: Invalid value: "isIP\('10.0.0.1'\)": compilation failed: ERROR: <input>:1:5: undeclared reference to 'isIP'/,
    );
    expect(() => configure({ celEnvironment: '1.29', manifests })).toThrow(
      /celEnvironment: Unsupported value: "1.29": supported values: "1.30", "1.31"/,
    );
  });

  it('result types are checked per field at start: must evaluate to bool but got dyn', () => {
    expect(() => policy({ validations: [{ expression: 'object.spec.paused' }] })).toThrow(
      /spec.validations\[0\].expression: Invalid value: "object.spec.paused": must evaluate to bool but got dyn$/,
    );
    expect(() => policy({ validations: [{ expression: 'true', messageExpression: 'object.spec.replicas' }] })).toThrow(
      /spec.validations\[0\].messageExpression: Invalid value: "object.spec.replicas": must evaluate to string but got dyn$/,
    );
    expect(() => policy({ validations: [{ expression: 'params.max > 1' }] })).toThrow(
      /undeclared reference to 'params'/,
    );
    expect(() =>
      policy({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'params.max > 1' }] }),
    ).not.toThrow();
    expect(() =>
      policy({
        variables: [{ name: 'big', expression: 'object.spec.replicas > 3' }],
        validations: [{ expression: 'variables.big' }],
      }),
    ).not.toThrow();
  });

  it('authorizer is refused with a reason (this webhook cannot make authorization checks)', () => {
    expect(() =>
      policy({ validations: [{ expression: "authorizer.group('').resource('pods').check('create').allowed()" }] }),
    ).toThrow(/authorization checks are not supported by this webhook/);
  });

  // A binding to a policy that is not loaded is accepted, as the apiserver stores it: its policy
  // source skips it (shared with MutatingAdmissionPolicy, lib/admission-policy/policy-set.ts).
  it('a policy without validations or audit annotations is refused; a binding to a missing policy is not', () => {
    expect(() => policy({})).toThrow(
      /spec.validations: Required value: validations or auditAnnotations must contain at least one item/,
    );
    const orphan = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'o' },
      spec: { policyName: 'missing', validationActions: ['Deny'] },
    };
    expect(configure({ manifests: [orphan] }).policies).toEqual([]);
  });

  it('paramRef.parameterNotFoundAction is required in v1beta1 and v1, defaulted to Deny in v1alpha1', () => {
    const withParams = (version: string) =>
      configure({
        manifests: [
          {
            apiVersion: `admissionregistration.k8s.io/${version}`,
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'p' },
            spec: {
              paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
              matchConstraints: {
                resourceRules: [
                  { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
                ],
              },
              validations: [{ expression: 'true' }],
            },
          },
          {
            apiVersion: `admissionregistration.k8s.io/${version}`,
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: 'b' },
            spec: { policyName: 'p', validationActions: ['Deny'], paramRef: { name: 'cm' } },
          },
        ],
      });
    for (const version of ['v1beta1', 'v1'])
      expect(() => withParams(version)).toThrow(/spec.paramRef.parameterNotFoundAction: Required value/);
    expect(withParams('v1alpha1').policies[0].bindings[0].paramRef?.parameterNotFoundAction).toBe('Deny');
  });
});

describe('variables and namespaceObject', () => {
  it('variables compose, each evaluated once when used', async () => {
    const spec = {
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'limit', expression: 'variables.replicas < 3 ? 3 : 5' },
      ],
      validations: [
        {
          expression: 'variables.replicas <= variables.limit',
          messageExpression: "'replicas ' + string(variables.replicas) + ' over ' + string(variables.limit)",
        },
      ],
    };
    expect(deniedMessage(await run(policy(spec), deploymentReview(6)))).toContain('denied request: replicas 6 over 5');
    expect(deniedMessage(await run(policy(spec), deploymentReview(4)))).toBeUndefined();
  });

  it('namespaceObject comes from the learned namespaces', async () => {
    const spec = {
      validations: [{ expression: "namespaceObject.metadata.labels.environment == 'test'", message: 'only in test' }],
    };
    expect(deniedMessage(await run(policy(spec), deploymentReview(1, 'test')))).toBeUndefined();
    expect(deniedMessage(await run(policy(spec), deploymentReview(1, 'prod')))).toContain('only in test');
  });
});

describe('matching', () => {
  const config = configure({ paths: ['demo.yaml'] });

  // The default changed from NoLabels to Skip: judging a never-seen namespace as unlabelled applies
  // a NotIn or DoesNotExist selector that its real labels might not match (lib/admission-policy/manifests.ts).
  it('a never-seen namespace: skipped with one warning by default; NoLabels judges no labels; Fail denies under failurePolicy', async () => {
    const unseen = namespaces({});
    const skipped = await run(config, deploymentReview(6, 'new'), unseen);
    expect(deniedMessage(skipped)).toBeUndefined();
    expect(skipped.wire.response!.warnings).toEqual([
      `ValidatingAdmissionPolicy: namespace "new" is not learned yet, so every policy and binding whose namespaceSelector reads its labels was skipped; load the cluster's existing namespaces with npm run sync (docs/seed-state.md)`,
    ]);
    // A learned namespace the selector does not match: skipped without a warning.
    const learned = await run(config, deploymentReview(6, 'prod'), namespaces({ prod: { environment: 'prod' } }));
    expect(learned.wire.response!.warnings).toBeUndefined();
    const notProd = (unknownNamespace?: string) =>
      configure({
        ...(unknownNamespace && { unknownNamespace }),
        manifests: [
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'p' },
            spec: {
              matchConstraints: {
                resourceRules: [
                  { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
                ],
              },
              validations: [{ expression: 'object.spec.replicas <= 5' }],
            },
          },
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: 'b' },
            spec: {
              policyName: 'p',
              validationActions: ['Deny'],
              matchResources: {
                namespaceSelector: { matchExpressions: [{ key: 'environment', operator: 'NotIn', values: ['prod'] }] },
              },
            },
          },
        ],
      });
    expect(deniedMessage(await run(notProd(), deploymentReview(6, 'new'), unseen))).toBeUndefined();
    expect(deniedMessage(await run(notProd('NoLabels'), deploymentReview(6, 'new'), unseen))).toContain(
      "with binding 'b' denied request: failed expression: object.spec.replicas <= 5",
    );
    const strict = configure({ paths: ['demo.yaml'], unknownNamespace: 'Fail' });
    expect(deniedMessage(await run(strict, deploymentReview(6, 'new'), unseen))).toContain(
      'with binding \'demo-binding-test.example.com\' denied request: failed to configure binding: namespace "new" has never been seen by this webhook (unknownNamespace: Fail)',
    );
  });

  it('a Namespace being created is matched on its own labels', async () => {
    const nsPolicy = configure({
      manifests: [
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name: 'ns' },
          spec: {
            matchConstraints: {
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] },
              ],
            },
            validations: [{ expression: 'false', message: 'no' }],
          },
        },
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name: 'b' },
          spec: {
            policyName: 'ns',
            validationActions: ['Deny'],
            matchResources: { namespaceSelector: { matchLabels: { team: 'a' } } },
          },
        },
      ],
    });
    const ns = (labels: Record<string, string>): ReviewInput => ({
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels } },
      kind: { kind: 'Namespace' },
      resource: { resource: 'namespaces' },
      namespace: 'x',
    });
    expect(deniedMessage(await run(nsPolicy, ns({ team: 'a' }), namespaces({})))).toContain('denied request: no');
    expect(deniedMessage(await run(nsPolicy, ns({ team: 'b' }), namespaces({})))).toBeUndefined();
  });

  it('resourceNames, excludeResourceRules and objectSelector', async () => {
    const spec = (constraints: Record<string, unknown>) => ({
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            operations: ['CREATE'],
            resources: ['deployments'],
            resourceNames: ['nginx'],
          },
        ],
        ...constraints,
      },
      validations: [{ expression: 'false' }],
    });
    const named = policy(spec({}));
    expect(deniedMessage(await run(named, deploymentReview(1)))).toBeDefined();
    expect(
      deniedMessage(
        await run(named, { ...deploymentReview(1), name: 'other', object: deployment(1, 'test', 'other') }),
      ),
    ).toBeUndefined();
    const excluded = policy(
      spec({
        excludeResourceRules: [
          { apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['deployments'], scope: 'Namespaced' },
        ],
      }),
    );
    expect(deniedMessage(await run(excluded, deploymentReview(1)))).toBeUndefined();
    const labelled = policy(
      spec({ objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] } }),
    );
    expect(deniedMessage(await run(labelled, deploymentReview(1)))).toBeDefined();
    const skip = deployment(1);
    skip.metadata!.labels = { skip: 'yes' };
    expect(deniedMessage(await run(labelled, { ...deploymentReview(1), object: skip }))).toBeUndefined();
  });

  it('a request no policy names reads nothing, whether 1 or 1,000 policies are loaded', async () => {
    const manifests = Array.from({ length: 1000 }, (_, i) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: `p${i}` },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: [`g${i}.example.com`], apiVersions: ['v1'], operations: ['*'], resources: ['widgets'] },
          ],
        },
        validations: [{ expression: 'false' }],
      },
    }));
    const many = configure({ manifests });
    expect(many.index.candidates(requestFor(deploymentReview(1)))).toEqual([]);
    expect(
      many.index
        .candidates(
          requestFor({
            kind: { group: 'g7.example.com', kind: 'Widget' },
            resource: { group: 'g7.example.com', resource: 'widgets' },
          }),
        )
        .map((p) => p.name),
    ).toEqual(['p7']);
  });

  it("validatingRulesFor emits the union of the policies' resourceRules", () => {
    const config = configure({ paths: ['demo.yaml', 'replicalimit.yaml'] });
    expect(plugin.validatingRulesFor!(config)).toEqual([
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['deployments'],
        scope: '*',
      },
    ]);
    expect(plugin.validatingRulesFor!(configure({ paths: ['match-conditions.yaml'] }))).toEqual([
      { operations: ['CREATE', 'UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*' },
    ]);
  });
});

describe('config/examples/validating-admission-policy', () => {
  it('loads through the AdmissionConfiguration and denies as the page shows', async () => {
    const file = resolve(import.meta.dirname, '../../config/examples/validating-admission-policy/admission.yaml');
    const admission = parseAdmissionConfiguration(readFileSync(file, 'utf8'), file);
    const config = plugin.configure!(admission.entries.get('ValidatingAdmissionPolicy'), admission.source);
    expect(deniedMessage(await run(config, deploymentReview(4)))).toBe(
      `deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3`,
    );
    expect(deniedMessage(await run(config, deploymentReview(6)))).toContain(
      "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5",
    );
    expect(deniedMessage(await run(config, deploymentReview(101, 'prod')))).toContain('must be no greater than 100');
  });
});
