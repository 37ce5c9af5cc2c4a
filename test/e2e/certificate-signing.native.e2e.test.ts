// certificate-signing natively: the ValidatingAdmissionPolicy `emit --native` compiles for
// CertificateSigning, applied to a real apiserver whose built-in CertificateSigning is off, answers
// upstream's TestPlugin_Validate (as test/native/native-only.test.ts ports it) as the built-in does
// on another apiserver where it is on (by default) and no policy is applied. Each row is a real
// status write (PUT certificatesigningrequests/<name>/status) of an approved
// CertificateSigningRequest stored before, by a user whose RBAC grant is the row's fake
// authorizer: update on the status subresource, and `sign` on the row's signer name in
// certificates.k8s.io. Upstream's failing authorizer is a user with no grant on signers. The row
// sending an object of another type has no real request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { requestAt } from './support/kube.js';
import { base64, certificatePem, certificateRequestPem } from './support/certificates.js';
import { typeCheckingWarnings } from './support/native.js';
import type { BuiltinPair } from './support/native-pair.js';
import { expectSameAsBuiltin, grant, seedObject, startBuiltinPair } from './support/native-pair.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: CertificateSigning
`;

interface Row {
  readonly name: string;
  /** The signer the user may sign for; none: an authorizer that fails (no grant). */
  readonly allowedName?: string;
  /** The stored request's signer, and the one the status write sends. */
  readonly storedSigner?: string;
  readonly sentSigner?: string;
  /** The stored request already has the certificate; the write changes nothing. */
  readonly unchanged?: boolean;
  /** The write adds a Failed condition instead of the certificate. */
  readonly fails?: boolean;
  readonly allowed: boolean;
}
const ROWS: Row[] = [
  { name: "allowed if the 'certificate' and conditions field has not changed", unchanged: true, allowed: true },
  { name: 'deny request if authz lookup fails on certificate change', allowed: false },
  { name: 'deny request if authz lookup fails on condition change', fails: true, allowed: false },
  { name: 'allow request if user is authorized for specific signerName', allowedName: 'abc.com/xyz', allowed: true },
  { name: 'allow request if user is authorized with wildcard', allowedName: 'abc.com/*', allowed: true },
  {
    name: 'should deny request if user does not have permission for this signerName',
    allowedName: 'notabc.com/xyz',
    allowed: false,
  },
  {
    name: 'should deny request if user attempts to update signerName to a new value they *do* have permission to sign for',
    allowedName: 'allowed.com/xyz',
    storedSigner: 'notallowed.com/xyz',
    sentSigner: 'allowed.com/xyz',
    allowed: false,
  },
];

const REQUEST = base64(certificateRequestPem('e2e'));
const CERTIFICATE = base64(certificatePem('e2e'));
const APPROVED = { type: 'Approved', status: 'True', reason: 'E2E', message: 'approved in a test' };
const path = (index: number) => `/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-${index}`;
const user = (index: number) => `signer-${index}`;

async function setStatus(cluster: ControlPlane, index: number, status: object, subresource: string) {
  const stored = (await cluster.request('GET', path(index))).json<KubeObject>();
  const answer = await requestAt(cluster, 'PUT', `${path(index)}/${subresource}`, {
    ...stored,
    status: { ...(stored.status as object), ...status },
  });
  if (answer.status !== 200) throw new Error(`csr-${index} ${subresource}: ${answer.message}`);
}

async function seed(cluster: ControlPlane): Promise<void> {
  for (const [index, row] of ROWS.entries()) {
    await seedObject(cluster, {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: `csr-${index}` },
      spec: { signerName: row.storedSigner ?? 'abc.com/xyz', request: REQUEST, usages: ['client auth'] },
    });
    await setStatus(cluster, index, { conditions: [APPROVED] }, 'approval');
    if (row.unchanged) await setStatus(cluster, index, { certificate: CERTIFICATE }, 'status');
    await grant(
      cluster,
      user(index),
      [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/status'], verbs: ['update'] },
        ...(row.allowedName
          ? [
              {
                apiGroups: ['certificates.k8s.io'],
                resources: ['signers'],
                resourceNames: [row.allowedName],
                verbs: ['sign'],
              },
            ]
          : []),
      ],
      { users: [user(index)] },
    );
  }
}

/** The status write a signer sends: the certificate, or a Failed condition, on the stored request. */
async function sign(cluster: ControlPlane, index: number, options: { dryRun?: boolean } = {}) {
  const row = ROWS[index];
  const stored = (await cluster.request('GET', path(index))).json<KubeObject>();
  const status = stored.status as { conditions: object[] };
  return requestAt(
    cluster,
    'PUT',
    `${path(index)}/status`,
    {
      ...stored,
      ...(row.sentSigner && { spec: { ...(stored.spec as object), signerName: row.sentSigner } }),
      status: row.fails
        ? { ...status, conditions: [...status.conditions, { type: 'Failed', status: 'True', reason: 'E2E' }] }
        : { ...status, certificate: CERTIFICATE },
    },
    { as: user(index), ...options },
  );
}

let pair: BuiltinPair;
beforeAll(async () => {
  pair = await startBuiltinPair(CONFIG, {
    builtin: 'CertificateSigning',
    seed,
    inForce: async (cluster) => (await sign(cluster, 1, { dryRun: true })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('certificate-signing (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  ROWS.forEach((row, index) => {
    it(`answers as the built-in does: ${row.name}`, async () => {
      const [builtin, native] = await pair.both((cluster) => sign(cluster, index));
      expect(builtin.status < 300, builtin.message ?? 'admitted').toBe(row.allowed);
      expectSameAsBuiltin(builtin, native);
      if (row.allowed)
        expect((native.object?.status as { certificate?: string } | undefined)?.certificate).toBe(
          (builtin.object?.status as { certificate?: string } | undefined)?.certificate,
        );
      else
        expect(builtin.message).toBe(
          `certificatesigningrequests.certificates.k8s.io "csr-${index}" is forbidden: user not permitted to sign requests with signerName "${row.storedSigner ?? 'abc.com/xyz'}"`,
        );
    });
  });
});
