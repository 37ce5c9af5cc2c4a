// The plugins only an apiserver can serve, as native policies: upstream's TestPlugin_Validate
// (plugin/pkg/admission/certificates/approval and signing) and TestPluginValidate
// (certificates/ctbattest), ported anew with their fake authorizer (the verb on signers in
// certificates.k8s.io, API version *, one allowed name, or a forced error); and
// route.openshift.io/IngressAdmission's cases from its source. Each refusal is upstream's message
// where the apiserver puts a policy's. ("wrong type" rows need an object the apiserver would not
// decode: no native counterpart.)
import { describe, expect, it } from 'vitest';
import { forbiddenMessage } from '../../lib/admission/decision.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import {
  certificateApproval,
  certificateSigning,
  clusterTrustBundleAttest,
  ingressAdmission,
} from '../../infra/native/native-only.js';
import type { ReviewInput } from '../support/review.js';
import { requestOf } from '../support/review.js';
import { NativeCluster, asPolicyMessage, configured, nativeObjectsOf, useAuthorizer } from './support/proof.js';

/** upstream's fakeAuthorizer, reconfigured per case. */
const fake = { verb: '', allowedName: '', error: false };
/** Who may set Ingress hosts (create and update routes/custom-host). */
const ROUTE_ADMINS = new Set(['router-admin']);
const asked = useAuthorizer((a) => {
  if (a.apiGroup === 'route.openshift.io')
    return ROUTE_ADMINS.has(a.user.username ?? '') && a.resource === 'routes' && a.subresource === 'custom-host';
  if (fake.error) return 'error';
  return (
    a.verb === fake.verb &&
    a.apiGroup === 'certificates.k8s.io' &&
    a.apiVersion === '*' &&
    a.resource === 'signers' &&
    a.name === fake.allowedName &&
    a.resourceRequest
  );
});

interface Row {
  readonly name: string;
  readonly allowedName?: string;
  readonly error?: boolean;
  readonly operation?: Operation;
  readonly object?: KubeObject;
  readonly oldObject?: KubeObject | null;
  readonly allowed: boolean;
}

const csr = (signerName: string, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: 'csr-1' },
  spec: { signerName, request: 'LS0t', usages: ['client auth'] },
  ...(status && { status }),
});
const ctb = (signerName?: string, metadata: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'certificates.k8s.io/v1beta1',
  kind: 'ClusterTrustBundle',
  metadata: { name: 'ctb-1', ...metadata },
  spec: { ...(signerName !== undefined && { signerName }), trustBundle: 'pem' },
});

const CSRS = {
  kind: { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest' },
  resource: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' },
};
const CTBS = {
  kind: { group: 'certificates.k8s.io', version: 'v1beta1', kind: 'ClusterTrustBundle' },
  resource: { group: 'certificates.k8s.io', version: 'v1beta1', resource: 'clustertrustbundles' },
};

const PLUGINS = [
  {
    plugin: certificateApproval,
    verb: 'approve',
    input: (row: Row): ReviewInput => ({
      ...CSRS,
      subResource: 'approval',
      operation: 'UPDATE',
      object: row.object ?? csr('abc.com/xyz', { conditions: [{ type: 'Approved', status: 'True' }] }),
      oldObject: row.oldObject ?? csr('abc.com/xyz'),
    }),
    message: (signer: string) => `user not permitted to approve requests with signerName "${signer}"`,
    rows: [
      { name: 'reject requests if looking up permissions fails', error: true, allowed: false },
      {
        name: 'should allow request if user is authorized for specific signerName',
        allowedName: 'abc.com/xyz',
        allowed: true,
      },
      { name: 'should allow request if user is authorized with wildcard', allowedName: 'abc.com/*', allowed: true },
      {
        name: 'should deny request if user does not have permission for this signerName',
        allowedName: 'notabc.com/xyz',
        allowed: false,
      },
      {
        name: 'should deny request if user attempts to update signerName to a new value they *do* have permission to approve for',
        allowedName: 'allowed.com/xyz',
        oldObject: csr('notallowed.com/xyz'),
        object: csr('allowed.com/xyz'),
        allowed: false,
      },
    ] as Row[],
  },
  {
    plugin: certificateSigning,
    verb: 'sign',
    input: (row: Row): ReviewInput => ({
      ...CSRS,
      subResource: 'status',
      operation: 'UPDATE',
      object: row.object ?? csr('abc.com/xyz', { certificate: 'ZGF0YQ==' }),
      oldObject: row.oldObject ?? csr('abc.com/xyz'),
    }),
    message: (signer: string) => `user not permitted to sign requests with signerName "${signer}"`,
    rows: [
      {
        name: "allowed if the 'certificate' and conditions field has not changed",
        error: true,
        object: csr('abc.com/xyz', { certificate: 'ZGF0YQ==' }),
        oldObject: csr('abc.com/xyz', { certificate: 'ZGF0YQ==' }),
        allowed: true,
      },
      {
        name: 'deny request if authz lookup fails on certificate change',
        allowedName: 'abc.com/xyz',
        error: true,
        allowed: false,
      },
      {
        name: 'deny request if authz lookup fails on condition change',
        allowedName: 'abc.com/xyz',
        error: true,
        object: csr('abc.com/xyz', { conditions: [{ type: 'Failed', status: 'True' }] }),
        allowed: false,
      },
      {
        name: 'allow request if user is authorized for specific signerName',
        allowedName: 'abc.com/xyz',
        allowed: true,
      },
      { name: 'allow request if user is authorized with wildcard', allowedName: 'abc.com/*', allowed: true },
      {
        name: 'should deny request if user does not have permission for this signerName',
        allowedName: 'notabc.com/xyz',
        allowed: false,
      },
      {
        name: 'should deny request if user attempts to update signerName to a new value they *do* have permission to sign for',
        allowedName: 'allowed.com/xyz',
        oldObject: csr('notallowed.com/xyz'),
        object: csr('allowed.com/xyz', { certificate: 'ZGF0YQ==' }),
        allowed: false,
      },
    ] as Row[],
  },
  {
    plugin: clusterTrustBundleAttest,
    verb: 'attest',
    input: (row: Row): ReviewInput => ({
      ...CTBS,
      operation: row.operation ?? 'CREATE',
      object: row.object ?? ctb('abc.com/xyz'),
      oldObject: row.oldObject ?? null,
    }),
    message: (signer: string) => `user not permitted to attest for signerName "${signer}"`,
    rows: [
      { name: 'reject requests if looking up permissions fails', operation: 'UPDATE', error: true, allowed: false },
      {
        name: 'should allow create if no signer name is specified',
        allowedName: 'abc.com/xyz',
        object: ctb(),
        allowed: true,
      },
      {
        name: 'should allow update if no signer name is specified',
        allowedName: 'abc.com/xyz',
        operation: 'UPDATE',
        object: ctb(),
        oldObject: ctb(),
        allowed: true,
      },
      {
        name: 'should allow create if user is authorized for specific signerName',
        allowedName: 'abc.com/xyz',
        allowed: true,
      },
      {
        name: 'should allow update if user is authorized for specific signerName',
        allowedName: 'abc.com/xyz',
        operation: 'UPDATE',
        oldObject: ctb('abc.com/xyz'),
        allowed: true,
      },
      { name: 'should allow create if user is authorized with wildcard', allowedName: 'abc.com/*', allowed: true },
      {
        name: 'should allow update if user is authorized with wildcard',
        allowedName: 'abc.com/*',
        operation: 'UPDATE',
        oldObject: ctb('abc.com/xyz'),
        allowed: true,
      },
      {
        name: 'should deny create if user does not have permission for this signerName',
        allowedName: 'notabc.com/xyz',
        allowed: false,
      },
      {
        name: 'should deny update if user does not have permission for this signerName',
        allowedName: 'notabc.com/xyz',
        operation: 'UPDATE',
        allowed: false,
      },
      {
        name: 'should always allow no-op update',
        error: true,
        operation: 'UPDATE',
        object: ctb('panda.com/foo'),
        oldObject: ctb('panda.com/foo'),
        allowed: true,
      },
      {
        name: 'should always allow finalizer update',
        error: true,
        operation: 'UPDATE',
        object: ctb('panda.com/foo', { ownerReferences: [{ apiVersion: 'something' }] }),
        oldObject: ctb('panda.com/foo'),
        allowed: true,
      },
      // Beyond upstream's rows: a change outside the GC fields is attested again.
      {
        name: 'a trust bundle change is attested',
        error: true,
        operation: 'UPDATE',
        object: { ...ctb('panda.com/foo'), spec: { signerName: 'panda.com/foo', trustBundle: 'other' } },
        oldObject: ctb('panda.com/foo'),
        allowed: false,
      },
    ] as Row[],
  },
];

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  describe.each(PLUGINS)('$plugin.metadata.upstreamName', ({ plugin, verb, input, message, rows }) => {
    const cluster = new NativeCluster(nativeObjectsOf(configured(plugin, {}), version), version);
    it.each(rows)('$name', async (row) => {
      Object.assign(fake, { verb, allowedName: row.allowedName ?? '', error: row.error === true });
      const request = input(row);
      const native = await cluster.validate(request);
      expect(native.wire.response?.allowed).toBe(row.allowed);
      if (row.allowed) return;
      // The signer upstream names: the stored CSR's, the bundle's own.
      const source = plugin === clusterTrustBundleAttest ? request.object : request.oldObject;
      const signer = String((source?.spec as { signerName?: string } | undefined)?.signerName);
      const upstream = forbiddenMessage(requestOf(request), message(signer));
      expect(native.wire.response?.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        message: asPolicyMessage(upstream, `serverless-admission-${plugin.metadata.name}`),
      });
    });
  });

  it('CertificateApproval asks approve on the signer, then on its domain wildcard', async () => {
    const cluster = new NativeCluster(nativeObjectsOf(configured(certificateApproval, {}), version), version);
    Object.assign(fake, { verb: 'approve', allowedName: 'nobody', error: false });
    asked.length = 0;
    await cluster.validate(PLUGINS[0].input({ name: '', allowed: false }));
    expect(asked.map((a) => `${a.verb} ${a.apiGroup}/${a.resource} ${a.name}`)).toEqual([
      'approve certificates.k8s.io/signers abc.com/xyz',
      'approve certificates.k8s.io/signers abc.com/*',
    ]);
  });
});

describe('route.openshift.io/IngressAdmission', () => {
  const ingress = (...hosts: string[]): KubeObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'team' },
    spec: { rules: hosts.map((host) => (host === '' ? { http: {} } : { host, http: {} })) },
  });
  const INGRESSES = {
    kind: { group: 'networking.k8s.io', kind: 'Ingress' },
    resource: { group: 'networking.k8s.io', resource: 'ingresses' },
  };
  const as = (
    user: string,
    operation: Operation,
    object: KubeObject,
    oldObject: KubeObject | null = null,
  ): ReviewInput => ({
    ...INGRESSES,
    operation,
    object,
    oldObject,
    userInfo: { username: user, groups: ['system:authenticated'] },
  });
  const cases: { name: string; input: ReviewInput; refusal?: string; allowHostnameChanges?: boolean }[] = [
    { name: 'a create without hosts', input: as('dev', 'CREATE', ingress('')) },
    {
      name: 'a create with a host, without create routes/custom-host',
      input: as('dev', 'CREATE', ingress('', 'a.example.com')),
      refusal: 'spec.rules[1]: Forbidden: you do not have permission to set host fields in ingress rules',
    },
    { name: 'a create with a host, with the grant', input: as('router-admin', 'CREATE', ingress('a.example.com')) },
    {
      name: 'an update keeping the hosts',
      input: as('dev', 'UPDATE', ingress('b.example.com', 'a.example.com'), ingress('a.example.com', 'b.example.com')),
    },
    {
      name: 'an update dropping a host',
      input: as('dev', 'UPDATE', ingress('a.example.com'), ingress('a.example.com', 'b.example.com')),
    },
    {
      name: 'an update adding a host, without update routes/custom-host',
      input: as('dev', 'UPDATE', ingress('a.example.com', 'c.example.com'), ingress('a.example.com')),
      refusal: 'cannot change hostname',
    },
    {
      name: 'an update adding a host, with the grant',
      input: as('router-admin', 'UPDATE', ingress('c.example.com'), ingress('a.example.com')),
    },
    {
      name: 'an update adding a host where allowHostnameChanges',
      input: as('dev', 'UPDATE', ingress('c.example.com'), ingress('a.example.com')),
      allowHostnameChanges: true,
    },
  ];

  it.each(cases)('$name', async ({ input, refusal, allowHostnameChanges }) => {
    const raw = allowHostnameChanges
      ? { apiVersion: 'route.openshift.io/v1', kind: 'IngressAdmissionConfig', allowHostnameChanges }
      : undefined;
    const cluster = new NativeCluster(nativeObjectsOf(configured(ingressAdmission, raw), '1.36'), '1.36');
    asked.length = 0;
    const native = await cluster.validate(input);
    const customHost = asked.filter((a) => a.apiGroup === 'route.openshift.io');
    for (const a of customHost) {
      expect(a).toMatchObject({
        resource: 'routes',
        subresource: 'custom-host',
        namespace: 'team',
        name: a.verb === 'update' ? 'web' : '',
      });
    }
    expect(native.wire.response?.allowed).toBe(refusal === undefined);
    if (refusal !== undefined)
      expect(native.wire.response?.status?.message).toBe(
        asPolicyMessage(
          `ingresses.networking.k8s.io "web" is forbidden: ${refusal}`,
          'serverless-admission-ingress-admission',
        ),
      );
  });
});
