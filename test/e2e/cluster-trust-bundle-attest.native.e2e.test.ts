// cluster-trust-bundle-attest natively: the ValidatingAdmissionPolicy `emit --native` compiles for
// ClusterTrustBundleAttest, applied to a real apiserver whose built-in ClusterTrustBundleAttest is
// off, answers upstream's TestPluginValidate (as test/native/native-only.test.ts ports it, with its
// one more row) as the built-in does on another apiserver where it is on (by default) and no policy
// is applied. ClusterTrustBundles (certificates.k8s.io/v1beta1) are served on both once their
// feature gate and API are switched on. Each row is a real create or update of a bundle (updates
// change a bundle stored before) by a user whose RBAC grant is the row's fake authorizer: `attest`
// on the row's signer name in certificates.k8s.io; upstream's failing authorizer is a user with no
// grant on signers. Upstream's UPDATE rows without an old object are updates that change the
// bundle; the rows sending an object of another type have no real request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { createAt, get, update } from './support/kube.js';
import { certificatePem } from './support/certificates.js';
import { typeCheckingWarnings } from './support/native.js';
import type { BuiltinPair } from './support/native-pair.js';
import { expectSameAsBuiltin, grant, startBuiltinPair } from './support/native-pair.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ClusterTrustBundleAttest
`;
const SERVED = [
  '--feature-gates=ClusterTrustBundle=true',
  '--runtime-config=certificates.k8s.io/v1beta1/clustertrustbundles=true',
];
const COLLECTION = '/apis/certificates.k8s.io/v1beta1/clustertrustbundles';

interface Row {
  readonly name: string;
  readonly allowedName?: string;
  readonly operation: 'CREATE' | 'UPDATE';
  /** The bundle's signer ('' for none). */
  readonly signer: string;
  /** What an update changes: the trust bundle, a label, an owner reference, or nothing. */
  readonly change?: 'bundle' | 'label' | 'owner' | 'nothing';
  readonly allowed: boolean;
}
const ROWS: Row[] = [
  {
    name: 'reject requests if looking up permissions fails',
    operation: 'UPDATE',
    signer: 'abc.com/xyz',
    change: 'bundle',
    allowed: false,
  },
  {
    name: 'should allow create if no signer name is specified',
    allowedName: 'abc.com/xyz',
    operation: 'CREATE',
    signer: '',
    allowed: true,
  },
  {
    name: 'should allow update if no signer name is specified',
    allowedName: 'abc.com/xyz',
    operation: 'UPDATE',
    signer: '',
    change: 'bundle',
    allowed: true,
  },
  {
    name: 'should allow create if user is authorized for specific signerName',
    allowedName: 'abc.com/xyz',
    operation: 'CREATE',
    signer: 'abc.com/xyz',
    allowed: true,
  },
  {
    name: 'should allow update if user is authorized for specific signerName',
    allowedName: 'abc.com/xyz',
    operation: 'UPDATE',
    signer: 'abc.com/xyz',
    change: 'bundle',
    allowed: true,
  },
  {
    name: 'should allow create if user is authorized with wildcard',
    allowedName: 'abc.com/*',
    operation: 'CREATE',
    signer: 'abc.com/xyz',
    allowed: true,
  },
  {
    name: 'should allow update if user is authorized with wildcard',
    allowedName: 'abc.com/*',
    operation: 'UPDATE',
    signer: 'abc.com/xyz',
    change: 'bundle',
    allowed: true,
  },
  {
    name: 'should deny create if user does not have permission for this signerName',
    allowedName: 'notabc.com/xyz',
    operation: 'CREATE',
    signer: 'abc.com/xyz',
    allowed: false,
  },
  {
    name: 'should deny update if user does not have permission for this signerName',
    allowedName: 'notabc.com/xyz',
    operation: 'UPDATE',
    signer: 'abc.com/xyz',
    change: 'bundle',
    allowed: false,
  },
  {
    name: 'should always allow no-op update',
    operation: 'UPDATE',
    signer: 'panda.com/foo',
    change: 'nothing',
    allowed: true,
  },
  {
    name: 'should always allow finalizer update',
    operation: 'UPDATE',
    signer: 'panda.com/foo',
    change: 'owner',
    allowed: true,
  },
  {
    name: 'a trust bundle change is attested',
    operation: 'UPDATE',
    signer: 'panda.com/foo',
    change: 'bundle',
    allowed: false,
  },
];

const [FIRST, SECOND] = [certificatePem('e2e-one'), certificatePem('e2e-two')];
/** A bundle's name starts with its signer's, ':' for '/' (the apiserver's validation). */
const nameOf = (index: number) => {
  const { signer } = ROWS[index];
  return signer ? `${signer.replace('/', ':')}:row-${index}` : `row-${index}`;
};
const bundle = (index: number, trustBundle = FIRST): KubeObject => ({
  apiVersion: 'certificates.k8s.io/v1beta1',
  kind: 'ClusterTrustBundle',
  metadata: { name: nameOf(index) },
  spec: { ...(ROWS[index].signer && { signerName: ROWS[index].signer }), trustBundle },
});
const user = (index: number) => `attester-${index}`;

async function seed(cluster: ControlPlane): Promise<void> {
  for (const [index, row] of ROWS.entries()) {
    if (row.operation === 'UPDATE') {
      const stored = await createAt(cluster, COLLECTION, bundle(index));
      if (stored.status !== 201) throw new Error(`seeding ${nameOf(index)}: ${stored.message}`);
    }
    await grant(
      cluster,
      user(index),
      [
        { apiGroups: ['certificates.k8s.io'], resources: ['clustertrustbundles'], verbs: ['get', 'create', 'update'] },
        ...(row.allowedName
          ? [
              {
                apiGroups: ['certificates.k8s.io'],
                resources: ['signers'],
                resourceNames: [row.allowedName],
                verbs: ['attest'],
              },
            ]
          : []),
      ],
      { users: [user(index)] },
    );
  }
}

async function write(cluster: ControlPlane, index: number, options: { dryRun?: boolean } = {}): Promise<Answer> {
  const row = ROWS[index];
  const as = { as: user(index), ...options };
  if (row.operation === 'CREATE') return createAt(cluster, COLLECTION, bundle(index), as);
  const stored = (await get(cluster, bundle(index)))!;
  const changed: KubeObject =
    row.change === 'bundle'
      ? { ...stored, spec: { ...(stored.spec as object), trustBundle: SECOND } }
      : row.change === 'label'
        ? { ...stored, metadata: { ...stored.metadata, labels: { changed: 'yes' } } }
        : row.change === 'owner'
          ? {
              ...stored,
              metadata: {
                ...stored.metadata,
                ownerReferences: [
                  { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: '6f1f3a8e-5b9e-4c55-9a57-0d1f7c1d2e3f' },
                ],
              },
            }
          : stored;
  return update(cluster, changed, as);
}

let pair: BuiltinPair;
beforeAll(async () => {
  pair = await startBuiltinPair(CONFIG, {
    builtin: 'ClusterTrustBundleAttest',
    extraApiserverArgs: SERVED,
    seed,
    inForce: async (cluster) => (await write(cluster, 0, { dryRun: true })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('cluster-trust-bundle-attest (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  ROWS.forEach((row, index) => {
    it(`answers as the built-in does: ${row.name}`, async () => {
      const [builtin, native] = await pair.both((cluster) => write(cluster, index));
      expect(builtin.status < 300, builtin.message ?? 'admitted').toBe(row.allowed);
      expectSameAsBuiltin(builtin, native);
      if (row.allowed) expect(native.object?.spec).toEqual(builtin.object?.spec);
      else
        expect(builtin.message).toBe(
          `clustertrustbundles.certificates.k8s.io "${nameOf(index)}" is forbidden: user not permitted to attest for signerName "${row.signer}"`,
        );
    });
  });
});
