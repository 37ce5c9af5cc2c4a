// The apiserver's validation of webhook configurations (infra/emit/apiserver-validation.ts), with
// upstream's rows (pkg/apis/admissionregistration/validation/validation_test.go:
// TestValidateValidatingWebhookConfiguration and TestValidateMutatingWebhookConfiguration, the same
// rows for both kinds) ported as they read: each expects the aggregate error to contain its text,
// values printed as JSON, as kube-apiserver v1.36 prints them (`["*","*/*"]`). Then rows of our own,
// in the words of upstream's code, for what those tables leave out (matchPolicy, reinvocationPolicy,
// scope, API groups and versions, label selectors, metadata); and every configuration the emitter
// can print, for every plugin active with its example configuration, in both caller-auth modes,
// staged and not, with and without matchConditions: none would be refused by `kubectl apply`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugins as registry } from '../../functions/index.js';
import { apiserverViolations } from '../../infra/emit/apiserver-validation.js';
import type { CallerAuthOption, EmitOptions } from '../../infra/emit/webhooks.js';
import { EmitError, webhookConfigurations } from '../../infra/emit/webhooks.js';
import { aggregateMessage } from '../../lib/admission/field.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import { OLD_KEY } from '../support/capability.js';

type Webhook = Record<string, unknown>;
const VALID_CLIENT_CONFIG = { url: 'https://example.com' };

/**
 * newValidatingWebhookConfiguration / newMutatingWebhookConfiguration: named `config`; a webhook
 * without admissionReviewVersions gets [v1beta1] unless the row asks otherwise, as upstream's helper
 * stands in for production defaulting.
 */
function configuration(kind: string, hooks: Webhook[], defaultVersions = true) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name: 'config' },
    webhooks: hooks.map((hook) =>
      defaultVersions && hook.admissionReviewVersions === undefined
        ? { ...hook, admissionReviewVersions: ['v1beta1'] }
        : hook,
    ),
  };
}

/** What `errs.ToAggregate().Error()` prints: one message alone, several in brackets. */
const aggregate = (violations: string[]) => (violations.length === 0 ? '' : aggregateMessage(violations));

const hook = (extra: Webhook = {}): Webhook => ({ name: 'webhook.k8s.io', ...extra });
const valid = (extra: Webhook = {}): Webhook =>
  hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'None', ...extra });
const rule = (extra: Webhook = {}) => ({ apiGroups: ['a'], apiVersions: ['a'], resources: ['a'], ...extra });
const service = (extra: Webhook = {}) => ({ service: { namespace: 'ns', name: 'n', port: 443, ...extra } });
const condition = (name: string | undefined, expression: string | undefined) => ({
  ...(name !== undefined && { name }),
  ...(expression !== undefined && { expression }),
});
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

interface Row {
  name: string;
  hooks: Webhook[];
  defaultVersions?: boolean;
  /** '' : no error at all. */
  expectedError: string;
}

const UPSTREAM_ROWS: Row[] = [
  {
    name: 'AdmissionReviewVersions are required',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'Unknown' })],
    defaultVersions: false,
    expectedError: 'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
  },
  {
    name: 'should fail on bad AdmissionReviewVersion value',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, admissionReviewVersions: ['0v'] })],
    expectedError: 'Invalid value: "0v": a DNS-1035 label',
  },
  {
    name: 'should pass on valid AdmissionReviewVersion',
    hooks: [valid({ admissionReviewVersions: ['v1beta1'] })],
    expectedError: '',
  },
  {
    name: 'should pass on mix of accepted and unaccepted AdmissionReviewVersion',
    hooks: [valid({ admissionReviewVersions: ['v1beta1', 'invalid-version'] })],
    expectedError: '',
  },
  {
    name: 'should fail on invalid AdmissionReviewVersion',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, admissionReviewVersions: ['invalidVersion'] })],
    expectedError: 'Invalid value: ["invalidVersion"]',
  },
  {
    name: 'should fail on duplicate AdmissionReviewVersion',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, admissionReviewVersions: ['v1beta1', 'v1beta1'] })],
    expectedError: 'Invalid value: "v1beta1": duplicate version',
  },
  {
    name: 'all Webhooks must have a fully qualified name',
    hooks: [valid(), valid({ name: 'k8s.io' }), valid({ name: '' })],
    expectedError:
      'webhooks[1].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots, webhooks[2].name: Required value',
  },
  {
    name: 'Webhooks must have unique names when created',
    hooks: [
      hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'Unknown' }),
      hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'Unknown' }),
    ],
    expectedError: 'webhooks[1].name: Duplicate value: "webhook.k8s.io"',
  },
  {
    name: 'Operations must not be empty or nil',
    hooks: [hook({ rules: [rule({ operations: [] }), rule()] })],
    expectedError: 'webhooks[0].rules[0].operations: Required value, webhooks[0].rules[1].operations: Required value',
  },
  {
    name: '"" is NOT a valid operation',
    hooks: [hook({ rules: [rule({ operations: ['CREATE', ''] })] })],
    expectedError: 'Unsupported value: ""',
  },
  {
    name: 'operation must be either create/update/delete/connect',
    hooks: [hook({ rules: [rule({ operations: ['PATCH'] })] })],
    expectedError: 'Unsupported value: "PATCH"',
  },
  {
    name: 'wildcard operation cannot be mixed with other strings',
    hooks: [hook({ rules: [rule({ operations: ['CREATE', '*'] })] })],
    expectedError: "if '*' is present, must not specify other operations",
  },
  {
    name: 'resource "*" can co-exist with resources that have subresources',
    hooks: [valid({ rules: [rule({ operations: ['CREATE'], resources: ['*', 'a/b', 'a/*', '*/b'] })] })],
    expectedError: '',
  },
  {
    name: `resource "*" cannot mix with resources that don't have subresources`,
    hooks: [
      hook({
        clientConfig: VALID_CLIENT_CONFIG,
        sideEffects: 'Unknown',
        rules: [rule({ operations: ['CREATE'], resources: ['*', 'a'] })],
      }),
    ],
    expectedError: "if '*' is present, must not specify other resources without subresources",
  },
  {
    name: 'resource a/* cannot mix with a/x',
    hooks: [hook({ rules: [rule({ operations: ['CREATE'], resources: ['a/*', 'a/x'] })] })],
    expectedError: `webhooks[0].rules[0].resources[1]: Invalid value: "a/x": if 'a/*' is present, must not specify a/x`,
  },
  {
    name: 'resource a/* can mix with a',
    hooks: [valid({ rules: [rule({ operations: ['CREATE'], resources: ['a/*', 'a'] })] })],
    expectedError: '',
  },
  {
    name: 'resource */a cannot mix with x/a',
    hooks: [hook({ rules: [rule({ operations: ['CREATE'], resources: ['*/a', 'x/a'] })] })],
    expectedError: `webhooks[0].rules[0].resources[1]: Invalid value: "x/a": if '*/a' is present, must not specify x/a`,
  },
  {
    name: 'resource */* cannot mix with other resources',
    hooks: [hook({ rules: [rule({ operations: ['CREATE'], resources: ['*/*', 'a'] })] })],
    expectedError: `webhooks[0].rules[0].resources: Invalid value: ["*/*","a"]: if '*/*' is present, must not specify other resources`,
  },
  {
    name: 'FailurePolicy can only be "Ignore" or "Fail"',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'Unknown', failurePolicy: 'other' })],
    expectedError: 'webhooks[0].failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"',
  },
  {
    name: 'SideEffects are required',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG })],
    expectedError: 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
  },
  {
    name: 'SideEffects can only be "None" or "NoneOnDryRun" when created',
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'other' })],
    expectedError: 'webhooks[0].sideEffects: Unsupported value: "other": supported values: "None", "NoneOnDryRun"',
  },
  { name: 'both service and URL missing', hooks: [hook({ clientConfig: {} })], expectedError: 'exactly one of' },
  {
    name: 'both service and URL provided',
    hooks: [hook({ clientConfig: { ...service(), url: 'example.com/k8s/webhook' } })],
    expectedError: '[0].clientConfig: Required value: exactly one of url or service is required',
  },
  {
    name: 'blank URL',
    hooks: [hook({ clientConfig: { url: '' } })],
    expectedError: '[0].clientConfig.url: Invalid value: "": host must be specified',
  },
  { name: 'wrong scheme', hooks: [hook({ clientConfig: { url: 'http://example.com' } })], expectedError: 'https' },
  {
    name: 'missing host',
    hooks: [hook({ clientConfig: { url: 'https:///fancy/webhook' } })],
    expectedError: 'host must be specified',
  },
  {
    name: 'fragment',
    hooks: [hook({ clientConfig: { url: 'https://example.com/#bookmark' } })],
    expectedError: '"bookmark": fragments are not permitted',
  },
  {
    name: 'query',
    hooks: [hook({ clientConfig: { url: 'https://example.com?arg=value' } })],
    expectedError: '"arg=value": query parameters are not permitted',
  },
  {
    name: 'user',
    hooks: [hook({ clientConfig: { url: 'https://harry.potter@example.com/' } })],
    expectedError: '"harry.potter": user information is not permitted',
  },
  {
    name: 'just totally wrong',
    hooks: [hook({ clientConfig: { url: 'arg#backwards=thisis?html.index/port:host//:https' } })],
    expectedError: 'host must be specified',
  },
  {
    name: 'path must start with slash',
    hooks: [hook({ clientConfig: service({ path: 'foo/' }) })],
    expectedError: `clientConfig.service.path: Invalid value: "foo/": must start with a '/'`,
  },
  {
    name: 'path accepts slash',
    hooks: [valid({ clientConfig: service({ path: '/' }) })],
    expectedError: '',
  },
  {
    name: 'path accepts no trailing slash',
    hooks: [valid({ clientConfig: service({ path: '/foo' }) })],
    expectedError: '',
  },
  {
    name: 'path fails //',
    hooks: [valid({ clientConfig: service({ path: '//' }) })],
    expectedError: 'clientConfig.service.path: Invalid value: "//": segment[0] may not be empty',
  },
  {
    name: 'path no empty step',
    hooks: [hook({ clientConfig: service({ path: '/foo//bar/' }), sideEffects: 'Unknown' })],
    expectedError: 'clientConfig.service.path: Invalid value: "/foo//bar/": segment[1] may not be empty',
  },
  {
    name: 'path no empty step 2',
    hooks: [hook({ clientConfig: service({ path: '/foo/bar//' }), sideEffects: 'Unknown' })],
    expectedError: 'clientConfig.service.path: Invalid value: "/foo/bar//": segment[2] may not be empty',
  },
  {
    name: 'path no non-subdomain',
    hooks: [hook({ clientConfig: service({ path: '/apis/foo.bar/v1alpha1/--bad' }), sideEffects: 'Unknown' })],
    expectedError:
      'clientConfig.service.path: Invalid value: "/apis/foo.bar/v1alpha1/--bad": segment[3]: a lowercase RFC 1123 subdomain',
  },
  {
    name: 'invalid port 0',
    hooks: [hook({ clientConfig: service({ path: 'https://apis/foo.bar', port: 0 }), sideEffects: 'Unknown' })],
    expectedError: 'Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
  },
  {
    name: 'invalid port >65535',
    hooks: [hook({ clientConfig: service({ path: 'https://apis/foo.bar', port: 65536 }), sideEffects: 'Unknown' })],
    expectedError: 'Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive',
  },
  ...[31, 0, -1].map((timeoutSeconds) => ({
    name: `timeout seconds ${timeoutSeconds} is out of range`,
    hooks: [hook({ clientConfig: VALID_CLIENT_CONFIG, sideEffects: 'Unknown', timeoutSeconds })],
    expectedError: `webhooks[0].timeoutSeconds: Invalid value: ${timeoutSeconds}: the timeout value must be between 1 and 30 seconds`,
  })),
  {
    name: 'valid timeout seconds',
    hooks: [
      valid({ timeoutSeconds: 1 }),
      valid({ name: 'webhook2.k8s.io', timeoutSeconds: 15 }),
      valid({ name: 'webhook3.k8s.io', timeoutSeconds: 30 }),
    ],
    expectedError: '',
  },
  {
    name: 'single match condition must have a name',
    hooks: [valid({ matchConditions: [condition(undefined, 'true')] })],
    expectedError: 'webhooks[0].matchConditions[0].name: Required value',
  },
  {
    name: 'all match conditions must have a name',
    hooks: [
      valid({ matchConditions: [condition(undefined, 'true'), condition(undefined, 'true')] }),
      valid({ matchConditions: [condition('', 'true')] }),
    ],
    expectedError:
      'webhooks[0].matchConditions[0].name: Required value, webhooks[0].matchConditions[1].name: Required value, webhooks[1].matchConditions[0].name: Required value',
  },
  {
    name: 'single match condition must have a qualified name',
    hooks: [valid({ matchConditions: [condition('-hello', 'true')] })],
    expectedError: `webhooks[0].matchConditions[0].name: Invalid value: "-hello": ${NAME_PART}`,
  },
  {
    name: 'all match conditions must have qualified names',
    hooks: [
      valid({ matchConditions: [condition('.io', 'true'), condition('thing.test.com', 'true')] }),
      valid({ name: 'webhook2.k8s.io', matchConditions: [condition('some name', 'true')] }),
    ],
    expectedError: `[webhooks[0].matchConditions[0].name: Invalid value: ".io": ${NAME_PART}, webhooks[1].matchConditions[0].name: Invalid value: "some name": ${NAME_PART}]`,
  },
  {
    name: 'expression is required',
    hooks: [valid({ matchConditions: [condition('webhook.k8s.io', undefined)] })],
    expectedError: 'webhooks[0].matchConditions[0].expression: Required value',
  },
  {
    name: 'expression is required to have some value',
    hooks: [valid({ matchConditions: [condition('webhook.k8s.io', '')] })],
    expectedError: 'webhooks[0].matchConditions[0].expression: Required value',
  },
  {
    // Upstream: `...Syntax error: missing ']' at '<EOF>'`, ANTLR's recovery text; lib/cel's parser
    // words the same syntax error otherwise, so the row stops at the position.
    name: 'invalid expression',
    hooks: [valid({ matchConditions: [condition('webhook.k8s.io', 'object.x in [1, 2, ')] })],
    expectedError: `webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed: ERROR: <input>:1:19: Syntax error: `,
  },
  {
    name: 'unique names same hook',
    hooks: [valid({ matchConditions: [condition('webhook.k8s.io', 'true'), condition('webhook.k8s.io', 'true')] })],
    expectedError: 'matchConditions[1].name: Duplicate value: "webhook.k8s.io"',
  },
  {
    name: 'repeat names allowed across different hooks',
    hooks: [
      valid({ matchConditions: [condition('webhook.k8s.io', 'true')] }),
      valid({ name: 'webhook2.k8s.io', matchConditions: [condition('webhook.k8s.io', 'true')] }),
    ],
    expectedError: '',
  },
  {
    name: 'must evaluate to bool',
    hooks: [valid({ matchConditions: [condition('webhook.k8s.io', '6')] })],
    expectedError: 'webhooks[0].matchConditions[0].expression: Invalid value: "6": must evaluate to bool',
  },
  {
    name: 'max of 64 match conditions',
    hooks: [valid({ matchConditions: Array.from({ length: 65 }, (_, i) => condition(`test${i}`, 'true')) })],
    expectedError: 'webhooks[0].matchConditions: Too many: 65: must have at most 64 items',
  },
];

describe.each(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'])('upstream rows, %s', (kind) => {
  it.each(UPSTREAM_ROWS)('$name', ({ hooks, defaultVersions, expectedError }) => {
    const message = aggregate(apiserverViolations(configuration(kind, hooks, defaultVersions)));
    if (expectedError === '') expect(message).toBe('');
    else expect(message).toContain(expectedError);
  });
});

describe('rows of our own, in the words of upstream code', () => {
  const validating = (hooks: Webhook[]) => apiserverViolations(configuration('ValidatingWebhookConfiguration', hooks));
  const mutating = (hooks: Webhook[]) => apiserverViolations(configuration('MutatingWebhookConfiguration', hooks));
  const selectorCases: [string, Webhook, string][] = [
    [
      'In without values',
      { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ],
    [
      'Exists with values',
      { objectSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } },
      "webhooks[0].objectSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ],
    [
      'an unknown operator',
      { objectSelector: { matchExpressions: [{ key: 'a', operator: 'Equals', values: ['x'] }] } },
      'webhooks[0].objectSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator',
    ],
    [
      'a value that is not a label value',
      { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['-x'] }] } },
      'webhooks[0].namespaceSelector.matchExpressions[0].values[0]: Invalid value: "-x": a valid label must be an empty string',
    ],
    [
      'a matchLabels key that is not a qualified name',
      { namespaceSelector: { matchLabels: { 'a b': 'c' } } },
      `webhooks[0].namespaceSelector.matchLabels: Invalid value: "a b": ${NAME_PART}`,
    ],
  ];
  it.each(selectorCases)('label selectors: %s', (_, fields, expected) => {
    expect(validating([valid(fields)])).toEqual([expect.stringContaining(expected)]);
  });

  it('matchPolicy and reinvocationPolicy (the latter on mutating webhooks only)', () => {
    const fields = { matchPolicy: 'Similar', reinvocationPolicy: 'Always' };
    expect(mutating([valid(fields)])).toEqual([
      'webhooks[0].matchPolicy: Unsupported value: "Similar": supported values: "Equivalent", "Exact"',
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    ]);
    expect(validating([valid(fields)])).toEqual([
      'webhooks[0].matchPolicy: Unsupported value: "Similar": supported values: "Equivalent", "Exact"',
    ]);
  });

  it('API groups, versions and scope', () => {
    const rules = [
      { operations: ['*'], apiGroups: ['*', 'apps'], apiVersions: ['v1', ''], resources: ['pods'], scope: 'Some' },
      { operations: ['CREATE'], apiGroups: [], apiVersions: ['*', 'v1'], resources: [] },
    ];
    expect(validating([valid({ rules })])).toEqual([
      `webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
      'webhooks[0].rules[0].apiVersions[1]: Required value',
      'webhooks[0].rules[0].scope: Unsupported value: "Some": supported values: "*", "Cluster", "Namespaced"',
      'webhooks[0].rules[1].apiGroups: Required value',
      `webhooks[0].rules[1].apiVersions: Invalid value: ["*","v1"]: if '*' is present, must not specify other API versions`,
      'webhooks[0].rules[1].resources: Required value',
    ]);
  });

  it('metadata: a DNS subdomain name, no namespace, valid labels and annotation keys', () => {
    const doc = {
      ...configuration('ValidatingWebhookConfiguration', [valid()]),
      metadata: { name: 'Bad_Name', namespace: 'x', labels: { ok: 'not ok!' }, annotations: { 'Example.COM/Ok': '' } },
    };
    expect(apiserverViolations(doc)).toEqual([
      "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'metadata.namespace: Forbidden: not allowed on this type',
      "metadata.labels: Invalid value: \"not ok!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
    const huge = { ...doc, metadata: { name: 'ok', annotations: { a: 'x'.repeat(256 * 1024) } } };
    expect(apiserverViolations(huge)).toEqual(['metadata.annotations: Too long: may not be more than 262144 bytes']);
  });

  it('a URL Go cannot parse', () => {
    expect(validating([valid({ clientConfig: { url: 'https://h:port/x' } })])).toEqual([
      'webhooks[0].clientConfig.url: Required value: url must be a valid URL: parse "https://h:port/x": invalid port ":port" after host; desired format: https://host[/path]',
    ]);
  });

  it('a missing service namespace is reported at .name, as the apiserver reports it (its arguments are swapped)', () => {
    expect(validating([valid({ clientConfig: { service: { name: 'svc' } } })])).toEqual([
      'webhooks[0].clientConfig.service.name: Required value',
    ]);
  });

  it("the rule AlwaysAdmit used to emit, in the apiserver's exact words", () => {
    const rules = [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'], scope: '*' }];
    expect(validating([valid({ name: 'always-admit.validate.serverless-admission.io', rules })])).toEqual([
      `webhooks[0].rules[0].resources: Invalid value: ["*","*/*"]: if '*/*' is present, must not specify other resources`,
    ]);
  });
});

describe('every configuration the emitter prints is one the apiserver accepts', () => {
  let file: string;
  let remove = () => {};
  beforeAll(() => {
    ({ file, remove } = everyPluginActiveConfiguration());
  });
  afterAll(() => remove());

  const AUTH: CallerAuthOption[] = [{ mode: 'mtls' }, { mode: 'url-secret', key: OLD_KEY }];
  const cases = AUTH.flatMap((auth) =>
    [undefined, 'canary'].flatMap((stagedNamespace) =>
      [true, false].map((matchConditions) => ({ auth, stagedNamespace, matchConditions })),
    ),
  );

  it.each(cases)('$auth.mode, staged $stagedNamespace, matchConditions $matchConditions', (c) => {
    const set = loadPluginSet(registry, { ADMISSION_CONFIG: file });
    const active = activePlugins(set);
    expect(active.length).toBe(registry.length);
    const options: EmitOptions = {
      baseUrl: 'https://admission.example.com',
      auth: c.auth,
      matchConditions: c.matchConditions,
      ...(c.stagedNamespace !== undefined && { stagedNamespace: c.stagedNamespace }),
      configs: new Map(active.map((p) => [p.plugin.metadata.name, p.config])),
      enforcement: new Map(
        active.map(({ plugin, enforcement, exemptions }) => [plugin.metadata.name, { enforcement, exemptions }]),
      ),
    };
    let emitted = 0;
    for (const { plugin } of active) {
      let docs: ReturnType<typeof webhookConfigurations>;
      try {
        docs = webhookConfigurations([plugin], options);
      } catch (error) {
        // Without matchConditions the emitter refuses a plugin whose rules reach protected resources.
        expect(error).toBeInstanceOf(EmitError);
        expect(c.matchConditions).toBe(false);
        expect((error as Error).message).toMatch(/which only a matchCondition can exclude/);
        continue;
      }
      for (const doc of docs) {
        expect(apiserverViolations(doc), `${doc.kind} ${doc.metadata?.name}`).toEqual([]);
        emitted++;
      }
    }
    expect(emitted).toBeGreaterThan(registry.length);
  });
});
