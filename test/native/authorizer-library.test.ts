// The authz CEL library (k8s.io/apiserver/pkg/cel/library/authz.go) as the native-policy proofs
// use it: with an authorizer installed, `authorizer` is declared and asks it with the attributes
// upstream builds; without one, the webhook's refusal stands.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationAttributes } from '../../lib/cel/library/authorizer.js';
import { authorizerBindings, installAuthorizer } from '../../lib/cel/library/authorizer.js';
import { CelCompileError, compileExpression } from '../../lib/cel/compile.js';
import { requestOf } from '../support/review.js';

describe('without an installed authorizer', () => {
  it('refuses `authorizer` at compile time, as the webhook always has', () => {
    expect(() =>
      compileExpression("authorizer.path('/healthz').check('get').allowed()", { variables: new Set() }),
    ).toThrow(CelCompileError);
  });
});

describe('with an installed authorizer', () => {
  const asked: AuthorizationAttributes[] = [];
  let uninstall: () => void;
  beforeAll(() => {
    uninstall = installAuthorizer((attributes) => {
      asked.push(attributes);
      if (attributes.verb === 'boom') return { decision: 'NoOpinion', reason: '', error: 'webhook authorizer down' };
      const allowed =
        attributes.user.username === 'alice' || attributes.user.username?.startsWith('system:serviceaccount:');
      return { decision: allowed ? 'Allow' : 'NoOpinion', reason: allowed ? 'RBAC: allowed' : '' };
    });
  });
  afterAll(() => uninstall());

  const request = requestOf({
    userInfo: { username: 'alice', groups: ['devs'] },
    kind: { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest' },
    resource: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' },
    subResource: 'approval',
    name: 'csr-1',
    operation: 'UPDATE',
    object: { kind: 'CertificateSigningRequest', metadata: { name: 'csr-1' } },
  });
  const evaluate = (text: string) => {
    const expression = compileExpression(text, { variables: new Set(), environment: '1.30' });
    return expression.evaluate({ request: null, ...authorizerBindings(request) }, 1_000_000);
  };

  const cases: {
    name: string;
    expression: string;
    value?: unknown;
    error?: string;
    attributes?: Partial<AuthorizationAttributes>;
  }[] = [
    {
      name: 'a resource check names group, resource, name and verb, version *',
      expression:
        "authorizer.group('certificates.k8s.io').resource('signers').name('example.com/x').check('approve').allowed()",
      value: true,
      attributes: {
        resourceRequest: true,
        apiGroup: 'certificates.k8s.io',
        apiVersion: '*',
        resource: 'signers',
        name: 'example.com/x',
        verb: 'approve',
        namespace: '',
        subresource: '',
      },
    },
    {
      name: 'namespace and subresource are carried',
      expression:
        "authorizer.group('').resource('pods').subresource('binding').namespace('ns').check('create').reason()",
      value: 'RBAC: allowed',
      attributes: { apiGroup: '', resource: 'pods', subresource: 'binding', namespace: 'ns', verb: 'create' },
    },
    {
      name: 'a path check is a non-resource request',
      expression: "authorizer.path('/healthz').check('get').allowed()",
      value: true,
      attributes: { resourceRequest: false, path: '/healthz', verb: 'get' },
    },
    {
      name: 'serviceAccount asks as that service account',
      expression: "authorizer.serviceAccount('ns', 'sa').group('').resource('secrets').check('get').allowed()",
      value: true,
      attributes: {
        user: {
          username: 'system:serviceaccount:ns:sa',
          groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
        },
      },
    },
    {
      name: 'requestResource is the request itself',
      expression: "authorizer.requestResource.check('update').allowed()",
      value: true,
      attributes: {
        apiGroup: 'certificates.k8s.io',
        resource: 'certificatesigningrequests',
        subresource: 'approval',
        name: 'csr-1',
        verb: 'update',
      },
    },
    {
      name: 'an authorizer error',
      expression: "authorizer.path('/x').check('boom').error()",
      value: 'webhook authorizer down',
    },
    { name: 'errored', expression: "authorizer.path('/x').check('boom').errored()", value: true },
    { name: 'no error', expression: "authorizer.path('/x').check('get').error()", value: '' },
    {
      name: 'an empty path',
      expression: "authorizer.path('  ').check('get').allowed()",
      error: 'path must not be empty',
    },
    {
      name: 'an empty resource',
      expression: "authorizer.group('').resource('').check('get').allowed()",
      error: 'resource must not be empty',
    },
    {
      name: 'an invalid service account name',
      expression: "authorizer.serviceAccount('ns', 'Bad!').path('/').check('get').allowed()",
      error: 'Invalid service account name',
    },
    {
      name: 'an invalid service account namespace',
      expression: "authorizer.serviceAccount('a.b', 'sa').path('/').check('get').allowed()",
      error: 'Invalid service account namespace',
    },
  ];

  it.each(cases)('$name', ({ expression, value, error, attributes }) => {
    asked.length = 0;
    const outcome = evaluate(expression);
    if (error !== undefined) {
      expect(outcome).toMatchObject({ error: expect.stringContaining(error) });
      return;
    }
    expect(outcome).toMatchObject({ value });
    if (attributes) expect(asked.at(-1)).toMatchObject({ user: { username: 'alice' }, ...attributes });
  });

  it('types a check as a Decision: a validation must still end in a bool', () => {
    expect(() =>
      compileExpression("authorizer.path('/x').check('get')", { variables: new Set(), role: 'validation' }),
    ).toThrow('must evaluate to bool but got kubernetes.authorization.Decision');
  });
});
