// Every middleware's behaviour, through the real middy stack that each Lambda runs, with events
// shaped as API Gateway REST (v1) and HTTP API (v2) deliver them.
import { generateKeyPairSync } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { allowed, denied } from '../../lib/admission/decision.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import type { AdmissionHandlerOptions } from '../../lib/http/admission-handler.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { callerAuthFromEnv, commonName } from '../../lib/http/caller-identity.js';
import { capability, capabilityKeysEnv, capabilityPath, NEW_KEY, OLD_KEY, TEST_DOMAIN } from '../support/capability.js';
import { jsonDepth } from '../../lib/http/bounded-json.js';
import { setLogSink } from '../../lib/http/log.js';
import { StoreUnavailableError } from '../../lib/admission/ports.js';
import { review } from '../support/review.js';

const context = { getRemainingTimeInMillis: () => 5000 } as unknown as Context;
const SUBJECT = 'CN=kube-apiserver-admission-client,O=serverless-admission';

/** A plugin whose answer each test chooses through the pod's name. */
/** The judge is sent what its rules match, and only that: this probe is sent everything. */
const EVERYTHING = { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' } as const;

const probe = definePlugin({
  metadata: {
    upstreamName: 'Probe',
    name: 'probe',
    summary: 'test plugin',
    validating: { rules: [EVERYTHING], failurePolicy: 'Fail', timeoutSeconds: 5 },
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },
  validate(request) {
    switch (request.name) {
      case 'throw':
        throw new Error('boom\nsecond line');
      case 'store-down':
        throw new StoreUnavailableError('store unreachable');
      case 'deny':
        return denied('no');
      default:
        return allowed();
    }
  },
});

const body = (name = 'p') => JSON.stringify(review({ object: { kind: 'Pod', metadata: { name, namespace: 'ns' } } }));

function restEvent(
  overrides: Partial<APIGatewayProxyEvent> = {},
  subjectDN: string | null = SUBJECT,
): APIGatewayProxyEvent {
  return {
    resource: '/probe/validate',
    path: '/probe/validate',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: { timeout: '10s' },
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    isBase64Encoded: false,
    body: body(),
    requestContext: {
      identity: {
        clientCert:
          subjectDN === null
            ? null
            : {
                clientCertPem: '',
                subjectDN,
                issuerDN: 'CN=ca',
                serialNumber: '01',
                validity: { notBefore: '', notAfter: '' },
              },
      },
      domainName: TEST_DOMAIN,
    } as unknown as APIGatewayProxyEvent['requestContext'],
    ...overrides,
  };
}

function httpApiEvent(subjectDN: string | undefined): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /probe/validate',
    rawPath: '/probe/validate',
    rawQueryString: 'timeout=10s',
    headers: { 'content-type': 'application/json' },
    isBase64Encoded: false,
    body: body(),
    requestContext: {
      authentication: subjectDN
        ? {
            clientCert: {
              clientCertPem: '',
              subjectDN,
              issuerDN: 'CN=ca',
              serialNumber: '01',
              validity: { notBefore: '', notAfter: '' },
            },
          }
        : undefined,
    } as unknown as APIGatewayProxyEventV2['requestContext'],
  };
}

const handlerWith = (options: AdmissionHandlerOptions<undefined> = {}) =>
  createAdmissionHandler(probe, { config: undefined, callerAuth: { mode: 'mtls', allowedSubjects: [] }, ...options });

afterEach(() => setLogSink(undefined));

describe('bodyLimit', () => {
  it('refuses a body over the limit with 413 before parsing it', async () => {
    const result = await handlerWith({ maxBodyBytes: 100 })(restEvent({ body: '{'.repeat(200) }), context);
    expect(result).toMatchObject({ statusCode: 413, body: 'body of 200 bytes exceeds the limit of 100 bytes\n' });
  });

  it('refuses an empty body with 400', async () => {
    expect((await handlerWith()(restEvent({ body: null }), context)).statusCode).toBe(400);
  });

  it('accepts a base64 body as API Gateway may send it', async () => {
    const result = await handlerWith()(
      restEvent({ body: Buffer.from(body()).toString('base64'), isBase64Encoded: true }),
      context,
    );
    expect(result.statusCode).toBe(200);
  });
});

describe('admissionReviewParser', () => {
  it('refuses a non-JSON content type with 415', async () => {
    const result = await handlerWith()(
      restEvent({ headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      context,
    );
    expect(result.statusCode).toBe(415);
  });

  it('accepts a JSON content type with parameters', async () => {
    const result = await handlerWith()(
      restEvent({ headers: { 'content-type': 'application/json; charset=utf-8' } }),
      context,
    );
    expect(result.statusCode).toBe(200);
  });

  it('measures depth outside strings only', () => {
    expect(jsonDepth('{"a":"[[[[[[","b":[{}]}')).toBe(3);
    expect(jsonDepth('{"a":"\\"[[[["}')).toBe(1);
  });
});

describe('callerIdentity', () => {
  it('takes the client certificate from a REST event and from an HTTP API event', async () => {
    expect((await handlerWith()(restEvent(), context)).statusCode).toBe(200);
    expect((await handlerWith()(httpApiEvent(SUBJECT) as never, context)).statusCode).toBe(200);
  });

  it('refuses a request without a client certificate with 403 (a mis-wired endpoint)', async () => {
    expect(await handlerWith()(restEvent({}, null), context)).toMatchObject({
      statusCode: 403,
      body: 'client certificate required\n',
    });
    expect((await handlerWith()(httpApiEvent(undefined) as never, context)).statusCode).toBe(403);
  });

  it('applies the subject allowlist by CN or by full DN', async () => {
    const byCn = handlerWith({ callerAuth: { mode: 'mtls', allowedSubjects: ['kube-apiserver-admission-client'] } });
    const byDn = handlerWith({ callerAuth: { mode: 'mtls', allowedSubjects: [SUBJECT] } });
    const other = handlerWith({ callerAuth: { mode: 'mtls', allowedSubjects: ['other'] } });
    expect((await byCn(restEvent(), context)).statusCode).toBe(200);
    expect((await byDn(restEvent(), context)).statusCode).toBe(200);
    expect((await other(restEvent(), context)).statusCode).toBe(403);
    expect(commonName('O=x,CN=a\\,b')).toBe('a,b');
  });

  it('accepts the capability of this plugin and endpoint under either live key (a rotation), nothing else', async () => {
    const env = { CALLER_AUTH: 'url-secret', URL_CAPABILITY_KEYS: capabilityKeysEnv(OLD_KEY, NEW_KEY) };
    const handler = handlerWith({ callerAuth: callerAuthFromEnv(env) });
    for (const key of [OLD_KEY, NEW_KEY]) {
      const path = capabilityPath('probe', 'validate', key);
      expect((await handler(restEvent({ path }, null), context)).statusCode).toBe(200);
      // Checked once, then remembered: the same capability again is answered the same.
      expect((await handler(restEvent({ path }, null), context)).statusCode).toBe(200);
    }
    const refused = async (path: string) => (await handler(restEvent({ path }, null), context)).statusCode;
    expect(await refused('/wrong/probe/validate')).toBe(403);
    // Another plugin's capability, or this plugin's for another endpoint, grants nothing here.
    expect(await refused(`/${capability({ plugin: 'other', endpoint: 'validate' })}/probe/validate`)).toBe(403);
    expect(await refused(`/${capability({ plugin: 'probe', endpoint: 'mutate' })}/probe/validate`)).toBe(403);
    expect(await refused(`/${capability('metrics')}/probe/validate`)).toBe(403);
    // A key the deployment does not hold makes nothing it accepts.
    const stranger = generateKeyPairSync('ed25519').privateKey;
    expect(await refused(capabilityPath('probe', 'validate', stranger))).toBe(403);
    // Without its capability segment the path has not the url-secret shape: refused like any other.
    expect(await refused('/probe/validate')).toBe(403);
    expect(await refused('/%zz/probe/validate')).toBe(403);
    const answer = await handler(restEvent({ path: '/wrong/probe/validate' }, null), context);
    expect(answer.body).toBe('caller capability missing or not valid\n');
  });

  it('refuses to start with a url-secret mode and no key, a malformed one, three, or an unknown mode', () => {
    expect(() => callerAuthFromEnv({ CALLER_AUTH: 'url-secret' })).toThrow(/URL_CAPABILITY_KEYS/);
    expect(() => callerAuthFromEnv({ CALLER_AUTH: 'url-secret', URL_CAPABILITY_KEYS: 'abc' })).toThrow(
      /URL_CAPABILITY_KEYS: .*not an Ed25519 public key/,
    );
    const three = capabilityKeysEnv(OLD_KEY, NEW_KEY, OLD_KEY);
    expect(() => callerAuthFromEnv({ CALLER_AUTH: 'url-secret', URL_CAPABILITY_KEYS: three })).toThrow(
      /one or two public keys/,
    );
    expect(() => callerAuthFromEnv({ CALLER_AUTH: 'none' })).toThrow(/mtls or url-secret/);
  });
});

describe('httpErrors', () => {
  it('turns a plugin failure into HTTP 500 with one line, never an allow', async () => {
    const result = await handlerWith()(restEvent({ body: body('throw') }), context);
    expect(result).toMatchObject({ statusCode: 500, body: 'internal error\n' });
  });

  it('turns an unreachable store into HTTP 500 so the failurePolicy decides', async () => {
    expect((await handlerWith()(restEvent({ body: body('store-down') }), context)).statusCode).toBe(500);
  });

  it('answers 404 for a phase the plugin does not serve', async () => {
    expect((await handlerWith()(restEvent({ path: '/probe/mutate' }), context)).statusCode).toBe(404);
  });
});

describe('requestLog', () => {
  it('writes one JSON line per request with uid, plugin, operation, resource, answer and latency', async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    await handlerWith()(restEvent({ body: body('deny') }), context);
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]);
    expect(record).toMatchObject({
      level: 'info',
      plugin: 'probe',
      operation: 'CREATE',
      resource: 'pods',
      namespace: 'ns',
      statusCode: 200,
      answer: { allowed: false, code: 403 },
    });
    expect(record.uid).toMatch(/^uid-/);
    expect(typeof record.latencyMs).toBe('number');
  });

  it('writes its fields in one order, and only those that have a value', async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    const withRequestId = { ...context, awsRequestId: 'request-1' } as Context;
    for (const requestBody of [body('deny'), body('throw'), '{'])
      await handlerWith()(restEvent({ body: requestBody }), withRequestId);
    const head = ['time', 'level', 'plugin', 'path', 'statusCode', 'requestId', 'coldStart', 'timeout'];
    const reviewed = ['uid', 'operation', 'resource', 'namespace', 'name', 'dryRun'];
    expect(lines.map((line) => Object.keys(JSON.parse(line)))).toEqual([
      [...head, ...reviewed, 'answer', 'caller', 'latencyMs'],
      [...head, ...reviewed, 'failure', 'caller', 'latencyMs'],
      [...head, 'failure', 'caller', 'latencyMs'],
    ]);
  });

  it('logs failures at error level with the reason', async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    await handlerWith()(restEvent({ body: body('throw') }), context);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'error',
      statusCode: 500,
      failure: { statusCode: 500, reason: 'internal error: boom second line' },
    });
  });
});
