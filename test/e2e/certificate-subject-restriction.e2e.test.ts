// certificate-subject-restriction through a real kube-apiserver, against the built-in
// CertificateSubjectRestriction (on by default) on a second apiserver: a request for the
// kube-apiserver-client signer with system:masters is refused with the same message, others are
// stored alike; a dry run, and failurePolicy Fail during an outage.
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: CertificateSubjectRestriction
`;

let webhook: WebhookCluster;
let builtin: ControlPlane;
let keys: forge.pki.rsa.KeyPair;

beforeAll(async () => {
  keys = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      // The apiserver enables its own by default: only the webhook judges here.
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['CertificateSubjectRestriction'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
});

function csr(name: string, organizations: string[], signerName = 'kubernetes.io/kube-apiserver-client'): KubeObject {
  const request = forge.pki.createCertificationRequest();
  request.publicKey = keys.publicKey;
  request.setSubject([
    { name: 'commonName', value: name },
    ...organizations.map((value) => ({ name: 'organizationName', value })),
  ]);
  request.sign(keys.privateKey, forge.md.sha256.create());
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: Buffer.from(forge.pki.certificationRequestToPem(request)).toString('base64'),
      signerName,
      usages: ['client auth'],
    },
  };
}

describe('certificate-subject-restriction', () => {
  it('admits a client certificate request outside system:masters, stored as the built-in stores it', async () => {
    const object = csr('alice', ['developers']);
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    // The apiserver records the requesting user: the same admin on both, whose certificates differ.
    const requested = async (cluster: ControlPlane) => {
      const stored = await get(cluster, object);
      const { extra, ...spec } = stored!.spec as { extra: Record<string, string[]> };
      expect(Object.keys(extra)).toEqual(['authentication.kubernetes.io/credential-id']);
      return admittedShape({ ...stored!, spec });
    };
    expect(await requested(webhook.cluster)).toEqual(await requested(builtin));
  });

  it('refuses system:masters for the kube-apiserver-client signer with the built-in’s message', async () => {
    const object = csr('mallory', ['developers', 'system:masters']);
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(reference.status).toBe(403);
    expect(reference.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "mallory" is forbidden: use of ' +
        'kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    expect(served.status).toBe(403);
    expect(webhookDenial(served.message)).toEqual({
      webhook: 'certificate-subject-restriction.validate.serverless-admission.io',
      message: reference.message,
    });
  });

  it('admits system:masters for another signer, as the built-in does', async () => {
    const object = csr('kubelet-serving', ['system:masters'], 'example.com/custom');
    const [served, reference] = await Promise.all([create(webhook.cluster, object), create(builtin, object)]);
    expect(served.status, served.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
  });

  it('refuses a dry run as a real request, and admits one without storing it', async () => {
    const refused = await create(webhook.cluster, csr('dry-masters', ['system:masters']), { dryRun: true });
    expect(refused.status).toBe(403);
    const dry = csr('dry', ['developers']);
    const admitted = await create(webhook.cluster, dry, { dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(await get(webhook.cluster, dry)).toBeUndefined();
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    await webhook.stopServer();
    try {
      const answer = await create(webhook.cluster, csr('outage', ['developers']));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        /^Internal error occurred: failed calling webhook "certificate-subject-restriction\.validate\.serverless-admission\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/certificate-subject-restriction\/validate\?timeout=\d+s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
    } finally {
      await webhook.startServer();
    }
    const after = await create(webhook.cluster, csr('after', ['developers']));
    expect(after.status, after.message).toBe(201);
  });
});
