// certificate-approval natively: the ValidatingAdmissionPolicy `emit --native` compiles for
// CertificateApproval, applied to a real apiserver whose built-in CertificateApproval is off,
// answers upstream's TestPlugin_Validate (as test/native/native-only.test.ts ports it) as the
// built-in does on another apiserver where it is on (by default) and no policy is applied. Each row
// is a real approval (PUT certificatesigningrequests/<name>/approval) of a CertificateSigningRequest
// stored before, by a user whose RBAC grant is the row's fake authorizer: update on the approval
// subresource, and `approve` on the row's signer name (resourceNames) in certificates.k8s.io. The
// rows where upstream's authorizer fails are users with no grant on signers (both plugins treat an
// authorizer error as a refusal). The row sending an object of another type has no real request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { requestAt } from './support/kube.js';
import { certificateRequestPem, base64 } from './support/certificates.js';
import { typeCheckingWarnings } from './support/native.js';
import type { BuiltinPair } from './support/native-pair.js';
import { expectSameAsBuiltin, grant, seedObject, startBuiltinPair } from './support/native-pair.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: CertificateApproval
`;

interface Row {
  readonly name: string;
  /** The signer the user may approve for; none: an authorizer that fails (no grant). */
  readonly allowedName?: string;
  /** The stored request's signer, and the one the approval sends (upstream: signerName changed). */
  readonly storedSigner?: string;
  readonly sentSigner?: string;
  readonly allowed: boolean;
}
const ROWS: Row[] = [
  { name: 'reject requests if looking up permissions fails', allowed: false },
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
    storedSigner: 'notallowed.com/xyz',
    sentSigner: 'allowed.com/xyz',
    allowed: false,
  },
];

const REQUEST = base64(certificateRequestPem('e2e'));
const csr = (index: number, signerName: string): KubeObject => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: `csr-${index}` },
  spec: { signerName, request: REQUEST, usages: ['client auth'] },
});
const user = (index: number) => `approver-${index}`;

async function seed(cluster: ControlPlane): Promise<void> {
  for (const [index, row] of ROWS.entries()) {
    await seedObject(cluster, csr(index, row.storedSigner ?? 'abc.com/xyz'));
    await grant(
      cluster,
      user(index),
      [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['get'] },
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['certificatesigningrequests/approval'],
          verbs: ['update'],
        },
        ...(row.allowedName
          ? [
              {
                apiGroups: ['certificates.k8s.io'],
                resources: ['signers'],
                resourceNames: [row.allowedName],
                verbs: ['approve'],
              },
            ]
          : []),
      ],
      { users: [user(index)] },
    );
  }
}

/** The approval a user sends: the stored request with an Approved condition. */
async function approve(cluster: ControlPlane, index: number, options: { dryRun?: boolean } = {}) {
  const path = `/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-${index}`;
  const stored = (await cluster.request('GET', path)).json<KubeObject>();
  const sent = ROWS[index]?.sentSigner;
  return requestAt(
    cluster,
    'PUT',
    `${path}/approval`,
    {
      ...stored,
      ...(sent && { spec: { ...(stored.spec as object), signerName: sent } }),
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'E2E', message: 'approved in a test' }] },
    },
    { as: user(index), ...options },
  );
}

let pair: BuiltinPair;
beforeAll(async () => {
  pair = await startBuiltinPair(CONFIG, {
    builtin: 'CertificateApproval',
    seed,
    inForce: async (cluster) => (await approve(cluster, 0, { dryRun: true })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const conditionsOf = (object: KubeObject | undefined) =>
  ((object?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).map(
    ({ type, status }) => `${type}=${status}`,
  );

describe('certificate-approval (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  ROWS.forEach((row, index) => {
    it(`answers as the built-in does: ${row.name}`, async () => {
      const [builtin, native] = await pair.both((cluster) => approve(cluster, index));
      expect(builtin.status < 300, builtin.message ?? 'admitted').toBe(row.allowed);
      expectSameAsBuiltin(builtin, native);
      if (row.allowed) expect(conditionsOf(native.object)).toEqual(conditionsOf(builtin.object));
      else
        expect(builtin.message).toBe(
          `certificatesigningrequests.certificates.k8s.io "csr-${index}" is forbidden: user not permitted to approve requests with signerName "${row.storedSigner ?? 'abc.com/xyz'}"`,
        );
    });
  });
});
