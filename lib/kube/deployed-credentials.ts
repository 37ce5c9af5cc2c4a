// The deployed reader's credentials (CLUSTER_READER), with no Kubernetes secret in the function's
// environment in clear and none ever logged:
//   eks    the IAM authenticator token of the function's own role (eks-token.ts), signed afresh
//          before the last one lapses; the role is given read access by an EKS access entry.
//   token  a read-only ServiceAccount's token held in AWS Secrets Manager or an SSM SecureString
//          parameter (CLUSTER_TOKEN_SOURCE: its ARN), fetched once per cold start through one
//          aws4-signed call (as lib/state/dynamodb-http.ts calls DynamoDB), kept in memory only.
// The endpoint (CLUSTER_ENDPOINT) and the CA that signs it (CLUSTER_CA, base64 PEM as a
// kubeconfig's certificate-authority-data) are deploy parameters: neither is a secret.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import aws4 from 'aws4';
import { ConfigError } from '../config/errors.js';
import type { AwsCredentials } from '../state/dynamodb-http.js';
import type { ClusterCredentials } from './cluster-credentials.js';
import { checkedServer } from './cluster-credentials.js';
import { eksToken, eksTokenExpiresAt } from './eks-token.js';

const WHAT = 'cluster reader';

function required(env: NodeJS.ProcessEnv, name: string, why: string): string {
  const value = env[name];
  if (!value) throw new ConfigError(WHAT, name, `is required ${why}`);
  return value;
}

function awsCredentials(env: NodeJS.ProcessEnv): AwsCredentials {
  const accessKeyId = required(env, 'AWS_ACCESS_KEY_ID', '(Lambda sets it from the function role)');
  const secretAccessKey = required(env, 'AWS_SECRET_ACCESS_KEY', '(Lambda sets it from the function role)');
  return { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN && { sessionToken: env.AWS_SESSION_TOKEN }) };
}

/** Where a token source's ARN points: Secrets Manager's GetSecretValue or SSM's GetParameter. */
export function tokenSourceCall(arn: string): { service: string; region: string; target: string; body: object } {
  const parts = arn.split(':');
  const [prefix, , service, region] = parts;
  if (prefix === 'arn' && service === 'secretsmanager' && region)
    return { service, region, target: 'secretsmanager.GetSecretValue', body: { SecretId: arn } };
  if (prefix === 'arn' && service === 'ssm' && region && parts.slice(5).join(':').startsWith('parameter/'))
    return { service, region, target: 'AmazonSSM.GetParameter', body: { Name: arn, WithDecryption: true } };
  throw new ConfigError(
    WHAT,
    'CLUSTER_TOKEN_SOURCE',
    'must be the ARN of a Secrets Manager secret (arn:aws:secretsmanager:...) or an SSM parameter (arn:aws:ssm:...:parameter/...)',
  );
}

/**
 * The token a source holds, through one signed call. `endpoint` replaces the service's regional
 * one (tests). Errors name the source and the service's error code, never the value.
 */
export async function fetchToken(arn: string, credentials: AwsCredentials, endpoint?: string): Promise<string> {
  const call = tokenSourceCall(arn);
  const url = new URL(endpoint ?? `https://${call.service}.${call.region}.amazonaws.com`);
  const body = JSON.stringify(call.body);
  const signed = aws4.sign(
    {
      host: url.host,
      service: call.service,
      region: call.region,
      method: 'POST',
      path: '/',
      headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': call.target },
      body,
    },
    credentials,
  );
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = send(
      {
        hostname: url.hostname,
        port: url.port || undefined,
        path: '/',
        method: 'POST',
        headers: signed.headers,
        timeout: 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end(body);
  }).catch((error: Error) => {
    throw new Error(`${WHAT}: reading ${arn}: ${error.message}`);
  });
  let parsed: { SecretString?: unknown; Parameter?: { Value?: unknown }; __type?: unknown } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // an answer that is not JSON: only its status is told below
  }
  if (status !== 200) {
    const code = typeof parsed.__type === 'string' ? parsed.__type.split('#').pop() : `HTTP ${status}`;
    throw new Error(`${WHAT}: reading ${arn}: ${code}`);
  }
  const value = call.service === 'ssm' ? parsed.Parameter?.Value : parsed.SecretString;
  if (typeof value !== 'string' || value.trim() === '')
    throw new Error(`${WHAT}: ${arn} holds no token (a SecretString or a parameter value)`);
  return value.trim();
}

/** The deployed reader's credentials, from its environment; undefined when it reads no cluster. */
export function deployedCredentials(
  env: NodeJS.ProcessEnv = process.env,
  options: { tokenEndpoint?: string; now?: () => number } = {},
): ClusterCredentials | undefined {
  const mode = env.CLUSTER_READER || 'none';
  if (mode === 'none') return undefined;
  const server = checkedServer(required(env, 'CLUSTER_ENDPOINT', 'with a reader'), 'CLUSTER_ENDPOINT');
  const ca = Buffer.from(required(env, 'CLUSTER_CA', 'with a reader (base64 PEM)'), 'base64').toString('utf8');
  if (!ca.includes('-----BEGIN CERTIFICATE-----'))
    throw new ConfigError(WHAT, 'CLUSTER_CA', 'must be a base64 PEM certificate (certificate-authority-data)');
  const now = options.now ?? Date.now;
  if (mode === 'eks') {
    const name = required(env, 'CLUSTER_NAME', 'with CLUSTER_READER=eks');
    const region = required(env, 'AWS_REGION', '(Lambda sets it)');
    let cached: { token: string; until: number } | undefined;
    return {
      server,
      ca,
      present: async () => {
        if (!cached || cached.until <= now()) {
          const signedAt = now();
          cached = {
            token: eksToken(name, region, awsCredentials(env), new Date(signedAt)),
            until: eksTokenExpiresAt(signedAt),
          };
        }
        return { token: cached.token };
      },
      invalidate: () => {
        cached = undefined;
      },
    };
  }
  if (mode === 'token') {
    const source = required(env, 'CLUSTER_TOKEN_SOURCE', 'with CLUSTER_READER=token');
    tokenSourceCall(source);
    let token: Promise<string> | undefined;
    return {
      server,
      ca,
      present: async () => {
        token ??= fetchToken(source, awsCredentials(env), options.tokenEndpoint).catch((error: unknown) => {
          token = undefined;
          throw error;
        });
        return { token: await token };
      },
      // A 401: the token was rotated in its store; read it again.
      invalidate: () => {
        token = undefined;
      },
    };
  }
  throw new ConfigError(WHAT, 'CLUSTER_READER', `must be one of none, eks, token, got ${JSON.stringify(mode)}`);
}
