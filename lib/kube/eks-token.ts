// The EKS cluster reader's bearer token, as aws-iam-authenticator and `aws eks get-token` make it:
// a presigned STS GetCallerIdentity URL whose signature covers the header `x-k8s-aws-id: <cluster
// name>` (so a token for one cluster is refused by another), valid for 60 s, base64url-encoded
// without padding after the `k8s-aws-v1.` prefix. EKS calls the URL to learn the caller's IAM role
// and maps it through the cluster's access entries: no Kubernetes secret is stored anywhere.
// Signed with `aws4`, as the functions' DynamoDB client is (lib/state/dynamodb-http.ts).
import aws4 from 'aws4';
import type { AwsCredentials } from '../state/dynamodb-http.js';

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** EKS accepts a token 15 minutes after it was signed; it is renewed well before. */
const TOKEN_LIFETIME_MS = 14 * 60_000;

/** STS's regional endpoint host (the partition's domain for China's regions). */
export function stsHost(region: string): string {
  return `sts.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;
}

/** A token for `clusterName`, signed now with `credentials`. */
export function eksToken(clusterName: string, region: string, credentials: AwsCredentials, now = new Date()): string {
  const host = stsHost(region);
  const signed = aws4.sign(
    {
      host,
      service: 'sts',
      region,
      method: 'GET',
      // The date in the query, not a header: EKS calls the URL with no header but the cluster's name.
      path: `/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Expires=60&X-Amz-Date=${amzDate(now)}`,
      headers: { 'x-k8s-aws-id': clusterName },
      signQuery: true,
    },
    credentials,
  );
  return `${EKS_TOKEN_PREFIX}${Buffer.from(`https://${host}${signed.path}`).toString('base64url')}`;
}

/** aws4's date format: 20260101T000000Z. */
function amzDate(now: Date): string {
  return now.toISOString().replace(/[:-]|\.\d{3}/g, '');
}

/** How long a token signed at `signedAt` is used before a new one is signed. */
export function eksTokenExpiresAt(signedAt: number): number {
  return signedAt + TOKEN_LIFETIME_MS;
}
