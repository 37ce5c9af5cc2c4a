// Real certificate material for the certificate plugins' end-to-end rows: a PEM certificate
// request and a PEM certificate, as the apiserver's validation of CertificateSigningRequests and
// ClusterTrustBundles asks.
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import { issueCertificate } from '../../../infra/pki/pki.js';

/** A PEM certificate request for `commonName` (RSA 2048, SHA-256). */
export function certificateRequestPem(commonName: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.publicKeyFromPem(publicKey);
  csr.setSubject([{ name: 'commonName', value: commonName }]);
  csr.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return forge.pki.certificationRequestToPem(csr);
}

/** A self-signed PEM certificate (a CA's, as a trust bundle holds). */
export function certificatePem(commonName: string): string {
  return issueCertificate({ commonName, days: 1, usage: 'ca' }).certPem;
}

export const base64 = (text: string) => Buffer.from(text).toString('base64');
