// The EKS reader's token, held to the AWS SDK's own Signature V4 presigner: the presigned STS
// GetCallerIdentity URL that aws-iam-authenticator makes, its signature covering `host` and
// `x-k8s-aws-id` (the cluster's name) and nothing EKS will not send, 60 s, `k8s-aws-v1.` and
// base64url without padding. No AWS call: the signature is computed twice, here and by the SDK.
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { EKS_TOKEN_PREFIX, eksToken } from '../../lib/kube/eks-token.js';
import type { AwsCredentials } from '../../lib/state/dynamodb-http.js';

const bytes = (data: string | ArrayBuffer | ArrayBufferView) =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** The SDK's hash interface over node:crypto (what its Node runtime config supplies). */
class Sha256 {
  private hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.hash.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
  reset() {}
}

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const AT = new Date('2026-03-01T12:00:00Z');

function decode(token: string): URL {
  expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
  const encoded = token.slice(EKS_TOKEN_PREFIX.length);
  expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
  return new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
}

describe('the EKS token', () => {
  it('is a presigned STS GetCallerIdentity URL for 60 s, signed over host and x-k8s-aws-id', () => {
    const url = decode(eksToken('prod', 'eu-west-1', CREDENTIALS, AT));
    expect(url.origin).toBe('https://sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const query = Object.fromEntries(url.searchParams);
    expect(query).toMatchObject({
      Action: 'GetCallerIdentity',
      Version: '2011-06-15',
      'X-Amz-Expires': '60',
      'X-Amz-Date': '20260301T120000Z',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIDEXAMPLE/20260301/eu-west-1/sts/aws4_request',
      'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
    });
    expect(query).not.toHaveProperty('X-Amz-Security-Token');
  });

  it('carries the signature the AWS SDK computes for the same request', async () => {
    for (const credentials of [
      CREDENTIALS,
      { ...CREDENTIALS, sessionToken: 'session/token+value=' },
    ] as AwsCredentials[]) {
      const url = decode(eksToken('team-cluster', 'us-east-2', credentials, AT));
      const signer = new SignatureV4({ service: 'sts', region: 'us-east-2', credentials, sha256: Sha256 });
      const presigned = await signer.presign(
        {
          method: 'GET',
          protocol: 'https:',
          hostname: 'sts.us-east-2.amazonaws.com',
          path: '/',
          query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
          headers: { host: 'sts.us-east-2.amazonaws.com', 'x-k8s-aws-id': 'team-cluster' },
        },
        { expiresIn: 60, signingDate: AT },
      );
      expect(url.searchParams.get('X-Amz-Signature')).toBe(presigned.query?.['X-Amz-Signature']);
      expect(url.searchParams.get('X-Amz-Security-Token')).toBe(credentials.sessionToken ?? null);
    }
  });

  it('a token for one cluster is not a token for another', () => {
    const one = decode(eksToken('one', 'eu-west-1', CREDENTIALS, AT)).searchParams.get('X-Amz-Signature');
    const two = decode(eksToken('two', 'eu-west-1', CREDENTIALS, AT)).searchParams.get('X-Amz-Signature');
    expect(one).not.toBe(two);
  });
});
