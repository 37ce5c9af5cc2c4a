// End to end through the local server: a real HTTPS server that requires client certificates,
// the deployed Lambda handler behind an API Gateway event adapter, real reviews captured from a
// kube-apiserver, and the hostile bodies the apiserver would never send.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import alwaysPullImages from '../../functions/always-pull-images/plugin.js';
import type { AdmissionReviewWire, KubeObject } from '../../lib/admission/types.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { capabilityPath, OLD_KEY, urlSecretAuth } from '../support/capability.js';
import type { LocalServer } from '../../infra/local/server.js';
import {
  HEADERS_TIMEOUT_MS,
  IDLE_CONNECTION_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  requestTarget,
  startLocalServer,
} from '../../infra/local/server.js';
import type { ClientIdentity } from '../support/https-client.js';
import { post } from '../support/https-client.js';
import { strangerPki, testPki } from '../support/pki.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/apiserver/${name}`, import.meta.url), 'utf8');
const podCreate = fixture('admissionreview-v1-pod-create-k8s-v1.20.2.json');
const podCreateDryRun = fixture('admissionreview-v1-pod-create-dryrun-k8s-v1.20.2.json');

const pki = testPki();
const stranger = strangerPki(); // another CA entirely
const apiserver: ClientIdentity = { caPem: pki.ca.certPem, certPem: pki.client.certPem, keyPem: pki.client.keyPem };

let server: LocalServer;
let picky: LocalServer;
let secretPath: LocalServer;

function handlers(allowedSubjects: string[] = []) {
  const handler = createAdmissionHandler(alwaysPullImages, {
    config: undefined,
    callerAuth: { mode: 'mtls', allowedSubjects },
  });
  return new Map([[alwaysPullImages.metadata.name, handler]]);
}

beforeAll(async () => {
  const tls = { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem };
  server = await startLocalServer({ handlers: handlers(), tls, requireClientCertificate: true, port: 0 });
  picky = await startLocalServer({
    handlers: handlers(['someone-else']),
    tls,
    requireClientCertificate: true,
    port: 0,
  });
  const urlSecret = createAdmissionHandler(alwaysPullImages, {
    config: undefined,
    callerAuth: urlSecretAuth(),
  });
  secretPath = await startLocalServer({
    handlers: new Map([[alwaysPullImages.metadata.name, urlSecret]]),
    tls,
    requireClientCertificate: false,
    port: 0,
  });
});

afterAll(async () => {
  await server?.close();
  await picky?.close();
  await secretPath?.close();
});

const mutateUrl = () => `${server.url}/always-pull-images/mutate?timeout=10s`;

function reviewOf(body: string): AdmissionReviewWire {
  return JSON.parse(body) as AdmissionReviewWire;
}

describe('callers', () => {
  it('answers the apiserver presenting a certificate from the local CA', async () => {
    const answer = await post(mutateUrl(), podCreate, apiserver);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
  });

  it('refuses the handshake without a client certificate', async () => {
    await expect(post(mutateUrl(), podCreate, { caPem: pki.ca.certPem })).rejects.toThrow(
      /certificate|socket hang up|ECONNRESET/i,
    );
  });

  it('refuses the handshake with a certificate from another CA', async () => {
    const outsider = { caPem: pki.ca.certPem, certPem: stranger.client.certPem, keyPem: stranger.client.keyPem };
    await expect(post(mutateUrl(), podCreate, outsider)).rejects.toThrow(
      /certificate|unknown ca|socket hang up|ECONNRESET/i,
    );
  });

  it('refuses a valid certificate whose subject is not on the allowlist with 403', async () => {
    const answer = await post(`${picky.url}/always-pull-images/mutate`, podCreate, apiserver);
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('kube-apiserver-admission-client');
  });
});

describe('url-secret mode (EKS, GKE, AKS: no client certificate)', () => {
  const noCertificate = { caPem: pki.ca.certPem };

  it("answers on the endpoint's capability path without a client certificate", async () => {
    const answer = await post(
      `${secretPath.url}${capabilityPath('always-pull-images', 'mutate', OLD_KEY, secretPath.url)}?timeout=10s`,
      podCreate,
      noCertificate,
    );
    expect(answer.status).toBe(200);
    expect(reviewOf(answer.body).response!.uid).toBe(JSON.parse(podCreate).request.uid);
  });

  it('refuses a wrong capability and the bare path alike, with 403', async () => {
    expect((await post(`${secretPath.url}/wrong/always-pull-images/mutate`, podCreate, noCertificate)).status).toBe(
      403,
    );
    expect((await post(`${secretPath.url}/always-pull-images/mutate`, podCreate, noCertificate)).status).toBe(403);
  });
});

describe('protocol', () => {
  it('answers a captured v1 pod create in kind, same uid, with a patch that applies', async () => {
    const sent = JSON.parse(podCreate);
    const review = reviewOf((await post(mutateUrl(), podCreate, apiserver)).body);
    expect(review).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: sent.request.uid, allowed: true, patchType: 'JSONPatch' },
    });
    const patch = JSON.parse(Buffer.from(review.response!.patch!, 'base64').toString('utf8'));
    const result = jsonpatch.applyPatch(sent.request.object, patch, true, false).newDocument as KubeObject & {
      spec: { containers: { imagePullPolicy: string }[] };
    };
    expect(result.spec.containers[0].imagePullPolicy).toBe('Always');
  });

  it('answers the same request as v1beta1 with a v1beta1 review', async () => {
    const sent = JSON.parse(podCreate);
    sent.apiVersion = 'admission.k8s.io/v1beta1';
    const review = reviewOf((await post(mutateUrl(), JSON.stringify(sent), apiserver)).body);
    expect(review.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(review.response!.uid).toBe(sent.request.uid);
  });

  it('denies through the validating twin with 403 and the field path', async () => {
    const answer = await post(`${server.url}/always-pull-images/validate?timeout=5s`, podCreateDryRun, apiserver);
    const review = reviewOf(answer.body);
    expect(review.response).toMatchObject({
      allowed: false,
      status: {
        code: 403,
        message:
          'pods "p2" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"',
      },
    });
    expect(review.response!.patch).toBeUndefined();
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    expect((await post(`${server.url}/no-such-plugin/mutate`, podCreate, apiserver)).status).toBe(404);
    expect((await post(`${server.url}/extra/always-pull-images/mutate`, podCreate, apiserver)).status).toBe(404);
    expect((await post(`${server.url}/always-pull-images`, podCreate, apiserver)).status).toBe(404);
    expect((await post(mutateUrl(), '', apiserver, { method: 'PUT' })).status).toBe(405);
  });
});

describe('answers ready in the same turn', () => {
  // A handler whose answer Node refuses to send (a header value with a line break): the server
  // answers 500 for it, and the answers ready beside it still go out, each to its own caller.
  let mixed: LocalServer;
  beforeAll(async () => {
    const refused = async () => ({ statusCode: 200, headers: { 'x-reason': 'two\nlines' }, body: 'never sent' });
    mixed = await startLocalServer({
      handlers: new Map([...handlers(), ['refused-headers', refused]]),
      tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
      requireClientCertificate: true,
      port: 0,
    });
  });
  afterAll(async () => mixed?.close());

  it('each reach their caller, and one Node cannot send is answered 500', async () => {
    const uid = (n: number) => {
      const review = JSON.parse(podCreate);
      review.request.uid = `uid-${n}`;
      return JSON.stringify(review);
    };
    const answers = await Promise.all([
      ...[0, 1, 2].map((n) => post(`${mixed.url}/always-pull-images/mutate`, uid(n), apiserver)),
      post(`${mixed.url}/refused-headers/validate`, podCreate, apiserver),
      ...[3, 4].map((n) => post(`${mixed.url}/always-pull-images/mutate`, uid(n), apiserver)),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 500, 200, 200]);
    expect(answers.map((a) => (a.status === 200 ? reviewOf(a.body).response?.uid : a.body))).toEqual([
      'uid-0',
      'uid-1',
      'uid-2',
      // Node's reason is logged, never answered: a 5xx carries no internal text.
      'internal error\n',
      'uid-3',
      'uid-4',
    ]);
  });
});

describe('hostile bodies get a 4xx with a one-line reason, and the server keeps answering', () => {
  const valid = JSON.parse(podCreate);
  const withRequest = (patch: Record<string, unknown>) =>
    JSON.stringify({ ...valid, request: { ...valid.request, ...patch } });
  const { uid: _uid, ...withoutUid } = valid.request;

  it.each([
    ['malformed JSON', '{"kind":"AdmissionReview",', 400, /not valid JSON/],
    ['not an AdmissionReview', JSON.stringify({ kind: 'Pod', apiVersion: 'v1' }), 400, /kind must be AdmissionReview/],
    [
      'an unknown version',
      JSON.stringify({ ...valid, apiVersion: 'admission.k8s.io/v2' }),
      400,
      /unsupported AdmissionReview apiVersion "admission.k8s.io\/v2"/,
    ],
    ['no uid', JSON.stringify({ ...valid, request: withoutUid }), 400, /request\.uid/],
    ['a non-object object', withRequest({ object: 'a string' }), 400, /request\.object must be an object/],
    ['an array object', withRequest({ object: [1, 2] }), 400, /request\.object must be an object/],
    ['100,000-deep nesting', `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 400, /nests deeper than 1000/],
    ['an empty body', '', 400, /empty body/],
    ['a 7 MB body', JSON.stringify({ ...valid, padding: 'x'.repeat(7_000_000) }), 413, /exceeds the limit/],
  ])('%s', async (_name, body, status, reason) => {
    const answer = await post(mutateUrl(), body, apiserver);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatch(reason);
    expect(answer.body.trim().split('\n')).toHaveLength(1);
    const after = reviewOf((await post(mutateUrl(), podCreate, apiserver)).body);
    expect(after.response!.uid).toBe(valid.request.uid);
  });

  it('a non-JSON content type gets 415', async () => {
    const answer = await post(mutateUrl(), podCreate, apiserver, { contentType: 'text/plain' });
    expect(answer.status).toBe(415);
  });
});

describe('request targets', () => {
  // What the server routes on, or the failure it answers 500 for (`//` is no path to the parser).
  const readWith = (read: (target: string) => { pathname: string; searchParams: URLSearchParams }) => (t: string) => {
    try {
      const { pathname, searchParams } = read(t);
      return { pathname, query: [...searchParams] };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  const asTheUrlParserReadsIt = readWith((target) => new URL(target, 'https://local'));
  const asRead = readWith(requestTarget);

  it.each([
    '/always-pull-images/mutate?timeout=10s',
    '/always-pull-images/mutate',
    '/always-pull-images/mutate?',
    '/always-pull-images/mutate?timeout=10s&timeout=5s&x=a+b%20c',
    '/cap_-abc/always-pull-images/validate?timeout=10s',
    '/',
    '//evil/always-pull-images/mutate',
    '/a/../always-pull-images/mutate',
    '/a/%2e%2e/always-pull-images/mutate',
    '/always-pull-images/mutate#frag?timeout=1s',
    '/always-pull-images/mutate?timeout=10s#frag',
    '/a\\b/mutate',
    "/a b/mutate?q='x'",
  ])('splits %s as the URL parser does', (target) => {
    expect(asRead(target)).toEqual(asTheUrlParserReadsIt(target));
  });

  it('splits any target made of path and query characters as the URL parser does', () => {
    const chars = fc.constantFrom(...'/a-_.%2e?=&+# \\'.split(''));
    const target = fc.array(chars, { maxLength: 24 }).map((c) => `/${c.join('')}`);
    fc.assert(
      fc.property(target, (t) => {
        expect(asRead(t)).toEqual(asTheUrlParserReadsIt(t));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('keep-alive connections', () => {
  /** One POST over `agent`, answering the TLS socket it went over and whether that was reused. */
  function postOver(agent: Agent, body: string) {
    return new Promise<{ status: number; keepAlive: string; socket: Socket; reused: boolean }>((resolve, reject) => {
      const req = request(
        mutateUrl(),
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              keepAlive: String(res.headers['keep-alive']),
              socket: req.socket as Socket,
              reused: req.reusedSocket,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  // The apiserver's Go client keeps an idle connection 90 s and reuses it without retrying a POST
  // that meets a closed socket. Node's default idle time (5 s) made that race a reset.
  it('an idle connection is still open, and reused, after longer than the old 5 s idle time', async () => {
    const agent = new Agent({
      keepAlive: true,
      maxSockets: 1,
      ca: apiserver.caPem,
      cert: apiserver.certPem,
      key: apiserver.keyPem,
    });
    try {
      const first = await postOver(agent, podCreate);
      expect(first).toMatchObject({ status: 200, reused: false });
      expect(first.keepAlive).toBe(`timeout=${IDLE_CONNECTION_TIMEOUT_MS / 1000}`);
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect(first.socket.destroyed).toBe(false);
      const second = await postOver(agent, podCreate);
      expect(second).toMatchObject({ status: 200, reused: true });
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  }, 30_000);

  it('outlasts the Go client idle pool, with timeouts Node accepts together', () => {
    expect(IDLE_CONNECTION_TIMEOUT_MS).toBeGreaterThan(90_000);
    expect(HEADERS_TIMEOUT_MS).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS);
  });
});
