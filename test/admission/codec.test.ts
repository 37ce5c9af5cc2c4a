// The codec both ways, on reviews captured from a real kube-apiserver: decoding into one view for
// v1 and v1beta1, and encoding every kind of decision the way the apiserver requires it.
import { readFileSync } from 'node:fs';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import {
  allowed,
  auditAnnotationKey,
  badRequest,
  denied,
  forbidden,
  patched,
  withAuditAnnotations,
  withWarnings,
} from '../../lib/admission/decision.js';
import {
  FieldPath,
  notSupported,
  forbiddenField,
  invalid,
  required,
  aggregateMessage,
} from '../../lib/admission/field.js';
import { decodeAdmissionReview, MalformedReviewError } from '../../lib/admission/request.js';
import { encodeAdmissionResponse, ProtocolViolation } from '../../lib/admission/response.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { requestOf } from '../support/review.js';

const captured = JSON.parse(
  readFileSync(
    new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
    'utf8',
  ),
);
const capturedDryRun = JSON.parse(
  readFileSync(
    new URL('../fixtures/apiserver/admissionreview-v1-pod-create-dryrun-k8s-v1.20.2.json', import.meta.url),
    'utf8',
  ),
);
const asBeta = (review: typeof captured) => ({ ...review, apiVersion: 'admission.k8s.io/v1beta1' });

describe('decodeAdmissionReview', () => {
  it.each([
    ['v1', captured],
    ['v1beta1', asBeta(captured)],
  ])('reads a captured %s pod create into one view', (_v, review) => {
    const request = decodeAdmissionReview(review);
    expect(request).toMatchObject({
      reviewVersion: review.apiVersion,
      uid: '10b16e8b-b703-4f16-a1fb-ce722724fad9',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      subResource: '',
      name: 'p1',
      namespace: 't1',
      operation: 'CREATE',
      userInfo: { username: 'e2e-admin' },
      oldObject: null,
      dryRun: false,
    });
    expect(request.object).toBe(review.request.object); // parsed once, never copied
  });

  it('reads dryRun from the captured server-side dry run', () => {
    expect(decodeAdmissionReview(capturedDryRun).dryRun).toBe(true);
  });

  it('treats a generateName create (no request.name key) as an empty name', () => {
    const { name: _n, ...request } = captured.request;
    expect(decodeAdmissionReview({ ...captured, request }).name).toBe('');
  });

  it.each([
    ['an array', [], /not a JSON object/],
    ['another kind', { ...captured, kind: 'Pod' }, /kind must be AdmissionReview/],
    ['another version', { ...captured, apiVersion: 'admission.k8s.io/v2' }, /unsupported AdmissionReview apiVersion/],
    ['no request', { ...captured, request: undefined }, /request must be an object/],
    [
      'an empty uid',
      { ...captured, request: { ...captured.request, uid: '' } },
      /request\.uid must be a non-empty string/,
    ],
    [
      'an unknown operation',
      { ...captured, request: { ...captured.request, operation: 'PATCH' } },
      /request\.operation/,
    ],
    [
      'no resource',
      { ...captured, request: { ...captured.request, resource: null } },
      /request\.resource must be an object/,
    ],
    [
      'a string object',
      { ...captured, request: { ...captured.request, object: 'x' } },
      /request\.object must be an object/,
    ],
    [
      'a non-object metadata',
      { ...captured, request: { ...captured.request, object: { metadata: 3 } } },
      /request\.object\.metadata/,
    ],
    ['a string dryRun', { ...captured, request: { ...captured.request, dryRun: 'true' } }, /request\.dryRun/],
    [
      'non-string groups',
      { ...captured, request: { ...captured.request, userInfo: { groups: [1] } } },
      /userInfo\.groups/,
    ],
    [
      'an object username (found by the fuzz suite)',
      { ...captured, request: { ...captured.request, userInfo: { username: {} } } },
      /userInfo\.username must be a string/,
    ],
    [
      'a malformed extra',
      { ...captured, request: { ...captured.request, userInfo: { extra: { scopes: 'x' } } } },
      /userInfo\.extra/,
    ],
  ])('refuses %s', (_name, body, reason) => {
    expect(() => decodeAdmissionReview(body)).toThrow(MalformedReviewError);
    expect(() => decodeAdmissionReview(body)).toThrow(reason);
  });
});

describe('encodeAdmissionResponse', () => {
  const request = decodeAdmissionReview(captured);
  const beta = decodeAdmissionReview(asBeta(captured));

  it('answers an allow with only uid and allowed, in the request version', () => {
    expect(encodeAdmissionResponse(request, allowed(), 'validate')).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: '10b16e8b-b703-4f16-a1fb-ce722724fad9', allowed: true },
    });
    expect(encodeAdmissionResponse(beta, allowed(), 'validate').apiVersion).toBe('admission.k8s.io/v1beta1');
  });

  it('answers a denial with an explicit code, reason and message', () => {
    expect(encodeAdmissionResponse(request, denied('too many', 429, 'TooManyRequests'), 'validate').response).toEqual({
      uid: request.uid,
      allowed: false,
      status: { metadata: {}, status: 'Failure', code: 429, reason: 'TooManyRequests', message: 'too many' },
    });
  });

  it('encodes a mutation as a base64 JSONPatch against the object as received, touching only what changed', () => {
    const mutated = structuredClone(request.object!) as KubeObject & {
      spec: { containers: { imagePullPolicy: string }[] };
    };
    mutated.spec.containers[0].imagePullPolicy = 'Always';
    mutated.metadata!.labels = { 'a/b': 'c' };
    const response = encodeAdmissionResponse(request, patched(mutated), 'mutate').response!;
    expect(response.patchType).toBe('JSONPatch');
    const operations = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8'));
    // A missing labels map is added whole: `add /metadata/labels/a~1b` would fail on the apiserver.
    expect(operations).toEqual(
      expect.arrayContaining([
        { op: 'replace', path: '/spec/containers/0/imagePullPolicy', value: 'Always' },
        { op: 'add', path: '/metadata/labels', value: { 'a/b': 'c' } },
      ]),
    );
    expect(operations).toHaveLength(2);
    expect(jsonpatch.applyPatch(structuredClone(request.object), operations, true, false).newDocument).toEqual(mutated);
  });

  it('omits an empty patch', () => {
    const response = encodeAdmissionResponse(request, patched(structuredClone(request.object!)), 'mutate').response!;
    expect(response).toEqual({ uid: request.uid, allowed: true });
  });

  it('refuses to patch from a validating webhook or without an object', () => {
    expect(() => encodeAdmissionResponse(request, patched({}), 'validate')).toThrow(ProtocolViolation);
    const deletion = requestOf({ operation: 'DELETE', object: null, oldObject: { metadata: { name: 'x' } } });
    expect(() => encodeAdmissionResponse(deletion, patched({}), 'mutate')).toThrow(/DELETE without an object/);
  });

  it('refuses a denial without an error code', () => {
    expect(() => encodeAdmissionResponse(request, denied('no', 200), 'validate')).toThrow(ProtocolViolation);
  });

  it('carries warnings on one line each and audit annotations', () => {
    const decision = withAuditAnnotations(withWarnings(allowed(), 'first\nsecond', 'third'), { key: 'value' });
    expect(encodeAdmissionResponse(request, decision, 'validate').response).toEqual({
      uid: request.uid,
      allowed: true,
      warnings: ['first second', 'third'],
      auditAnnotations: { key: 'value' },
    });
  });
});

describe('field errors and Forbidden, printed as upstream prints them', () => {
  const path = FieldPath.of('spec').child('containers').index(0).child('imagePullPolicy');

  it('formats each error type', () => {
    const request = requestOf({ object: { kind: 'Pod', metadata: { name: 'p' } } });
    const message = forbidden(request, [
      notSupported(path, 'Never', ['Always']),
      invalid(FieldPath.of('metadata', 'labels').key('a'), 'b', 'must be c'),
      forbiddenField(FieldPath.of('spec', 'nodeName'), 'may not be set'),
      required(FieldPath.of('spec', 'x'), ''),
    ]).status.message;
    expect(message).toBe(
      '[pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", ' +
        'pods "p" is forbidden: metadata.labels[a]: Invalid value: "b": must be c, ' +
        'pods "p" is forbidden: spec.nodeName: Forbidden: may not be set, ' +
        'pods "p" is forbidden: spec.x: Required value]',
    );
  });

  it('de-duplicates aggregated messages and names group-qualified resources', () => {
    expect(aggregateMessage(['a', 'a'])).toBe('a');
    const request = requestOf({
      kind: { group: 'apps', kind: 'Deployment' },
      resource: { group: 'apps', resource: 'deployments' },
      object: { metadata: {} },
    });
    expect(forbidden(request, ['x']).status).toMatchObject({
      code: 403,
      message: 'deployments.apps "Unknown" is forbidden: x',
      details: { group: 'apps', kind: 'deployments' },
    });
  });

  it('gives BadRequest as upstream apierrors.NewBadRequest', () => {
    expect(badRequest('nope').status).toEqual({ code: 400, reason: 'BadRequest', message: 'nope' });
  });
});

describe('audit annotation keys', () => {
  const request = decodeAdmissionReview(captured);

  it('refuses a key the apiserver would drop (a second "/" once it prefixes the webhook name)', () => {
    expect(() =>
      encodeAdmissionResponse(request, withAuditAnnotations(allowed(), { 'policy/key': 'v' }), 'validate'),
    ).toThrow(ProtocolViolation);
    expect(() =>
      encodeAdmissionResponse(request, withAuditAnnotations(allowed(), { ['k'.repeat(64)]: 'v' }), 'validate'),
    ).toThrow(ProtocolViolation);
  });

  it('makes one-segment keys of at most 63 characters that stay distinct', () => {
    expect(auditAnnotationKey('demo-policy.example.com', 'high-replica-count')).toBe(
      'demo-policy.example.com_high-replica-count',
    );
    const long = auditAnnotationKey('p'.repeat(70), 'a');
    expect(long).toHaveLength(63);
    expect(long).not.toBe(auditAnnotationKey('p'.repeat(70), 'b'));
    expect(() =>
      encodeAdmissionResponse(request, withAuditAnnotations(allowed(), { [long]: 'v' }), 'validate'),
    ).not.toThrow();
  });
});

describe('the request view keeps what the user sent', () => {
  it('reads requestKind and requestResource, defaulting to kind and resource', () => {
    const converted = {
      ...captured,
      request: {
        ...captured.request,
        requestKind: { group: 'apps', version: 'v1beta1', kind: 'Deployment' },
        requestResource: { group: 'apps', version: 'v1beta1', resource: 'deployments' },
      },
    };
    expect(decodeAdmissionReview(converted)).toMatchObject({
      requestKind: { version: 'v1beta1' },
      requestResource: { version: 'v1beta1' },
      requestSubResource: '',
    });
    const { requestKind: _k, requestResource: _r, ...bare } = captured.request;
    expect(decodeAdmissionReview({ ...captured, request: bare }).requestResource).toEqual(
      decodeAdmissionReview(captured).resource,
    );
  });
});
