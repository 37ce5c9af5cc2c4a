// The deployed reader's credentials from its environment. Secrets Manager and SSM are stood in for
// by a loopback server (AWS itself is the one thing mocked): one signed call per cold start, for
// the ARN given, by the service the ARN names; a 401 reads the token again; a refusal names the
// source and the service's error code, never a value. EKS mode signs a token of the function's
// own role and signs again once it is about to lapse or was refused.
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config/errors.js';
import { deployedCredentials } from '../../lib/kube/deployed-credentials.js';
import { EKS_TOKEN_PREFIX } from '../../lib/kube/eks-token.js';
import { testPki } from '../support/pki.js';

interface Call {
  readonly target: string;
  readonly authorization: string;
  readonly body: unknown;
}

const calls: Call[] = [];
let answers: { status: number; body: unknown }[] = [];
let endpoint = '';
const server = createServer((request: IncomingMessage, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    calls.push({
      target: String(request.headers['x-amz-target']),
      authorization: String(request.headers.authorization),
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
    });
    const next = answers.shift() ?? { status: 500, body: {} };
    response.writeHead(next.status, { 'content-type': 'application/x-amz-json-1.1' });
    response.end(JSON.stringify(next.body));
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  calls.splice(0);
  answers = [];
});

const SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:reader-token-AbCdEf';
const PARAMETER = 'arn:aws:ssm:eu-west-1:111122223333:parameter/serverless-admission/reader-token';

const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'secret',
  AWS_SESSION_TOKEN: 'session',
  AWS_REGION: 'eu-west-1',
  CLUSTER_ENDPOINT: 'https://cluster.example:443',
  CLUSTER_CA: Buffer.from(testPki().ca.certPem).toString('base64'),
  ...extra,
});

describe('token mode', () => {
  it('reads a Secrets Manager secret once, signed for secretsmanager, and again after a 401', async () => {
    answers = [
      { status: 200, body: { SecretString: 'token-one\n' } },
      { status: 200, body: { SecretString: 'token-two' } },
    ];
    const credentials = deployedCredentials(env({ CLUSTER_READER: 'token', CLUSTER_TOKEN_SOURCE: SECRET }), {
      tokenEndpoint: endpoint,
    });
    expect(credentials?.server).toBe('https://cluster.example:443');
    expect(credentials?.ca).toBe(testPki().ca.certPem);
    expect(await credentials?.present()).toEqual({ token: 'token-one' });
    expect(await credentials?.present()).toEqual({ token: 'token-one' });
    expect(calls).toHaveLength(1);
    expect(calls[0].target).toBe('secretsmanager.GetSecretValue');
    expect(calls[0].body).toEqual({ SecretId: SECRET });
    expect(calls[0].authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, SignedHeaders=/,
    );
    credentials?.invalidate();
    expect(await credentials?.present()).toEqual({ token: 'token-two' });
    expect(calls).toHaveLength(2);
  });

  it('reads an SSM SecureString parameter decrypted', async () => {
    answers = [
      { status: 200, body: { Parameter: { Name: '/serverless-admission/reader-token', Value: 'ssm-token' } } },
    ];
    const credentials = deployedCredentials(env({ CLUSTER_READER: 'token', CLUSTER_TOKEN_SOURCE: PARAMETER }), {
      tokenEndpoint: endpoint,
    });
    expect(await credentials?.present()).toEqual({ token: 'ssm-token' });
    expect(calls.map((c) => [c.target, c.body])).toEqual([
      ['AmazonSSM.GetParameter', { Name: PARAMETER, WithDecryption: true }],
    ]);
    expect(calls[0].authorization).toContain('/eu-west-1/ssm/aws4_request');
  });

  it('a refusal names the source and the error code, and the next call asks again', async () => {
    answers = [
      { status: 400, body: { __type: 'AccessDeniedException', message: 'not authorized' } },
      { status: 200, body: { SecretString: 'token-after' } },
    ];
    const credentials = deployedCredentials(env({ CLUSTER_READER: 'token', CLUSTER_TOKEN_SOURCE: SECRET }), {
      tokenEndpoint: endpoint,
    });
    await expect(credentials?.present()).rejects.toThrow(`cluster reader: reading ${SECRET}: AccessDeniedException`);
    expect(await credentials?.present()).toEqual({ token: 'token-after' });
  });

  it('refuses at start a source that is not a secret or parameter ARN, and a missing CA', () => {
    expect(() => deployedCredentials(env({ CLUSTER_READER: 'token', CLUSTER_TOKEN_SOURCE: 'reader-token' }))).toThrow(
      ConfigError,
    );
    expect(() =>
      deployedCredentials(env({ CLUSTER_READER: 'token', CLUSTER_TOKEN_SOURCE: SECRET, CLUSTER_CA: '' })),
    ).toThrow('cluster reader: CLUSTER_CA: is required with a reader (base64 PEM)');
  });
});

describe('eks mode', () => {
  it("signs a token of the function's role for the cluster, and signs again when it lapses or is refused", async () => {
    let clock = Date.parse('2026-03-01T12:00:00Z');
    const credentials = deployedCredentials(env({ CLUSTER_READER: 'eks', CLUSTER_NAME: 'prod' }), {
      now: () => clock,
    });
    const first = (await credentials?.present())?.token ?? '';
    expect(first.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
    const url = new URL(Buffer.from(first.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('session');
    clock += 60_000;
    expect((await credentials?.present())?.token).toBe(first);
    clock += 14 * 60_000;
    const second = (await credentials?.present())?.token;
    expect(second).not.toBe(first);
    credentials?.invalidate();
    clock += 1_000;
    expect((await credentials?.present())?.token).not.toBe(second);
    expect(calls).toEqual([]);
  });

  it('none reads nothing', () => {
    expect(deployedCredentials(env({}))).toBeUndefined();
  });
});
