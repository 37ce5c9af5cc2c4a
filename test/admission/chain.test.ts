// lib/admission/chain: the apiserver's webhook dispatch. The webhooks here are small servers of
// our own (what a webhook answers is not under test); matching, order, reinvocation, failurePolicy
// and patching are, with real CEL matchConditions and real RFC 6902 patches. Cases follow
// upstream's test/integration/apiserver/admissionwebhook/reinvocation_test.go
// (TestWebhookReinvocationPolicy) and webhook/generic, mutating and validating dispatchers.
import { randomUUID } from 'node:crypto';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { ChainPorts, WebhookAnswer } from '../../lib/admission/chain.js';
import { runChain } from '../../lib/admission/chain.js';
import { diffJson } from '../../lib/admission/diff.js';
import type { AdmissionRequestWire, KubeObject } from '../../lib/admission/types.js';
import { celConditions, storedOnCreate } from '../../infra/check/runner.js';
import type { CheckWebhook } from '../../infra/check/runner.js';

type Server = (request: AdmissionRequestWire) => WebhookAnswer;

const POD_RULE = {
  operations: ['CREATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['pods'],
  scope: '*',
} as const;

function hook(name: string, phase: 'mutate' | 'validate', extra: Partial<CheckWebhook> = {}): CheckWebhook {
  return {
    name,
    plugin: name,
    role: 'judge',
    url: `https://x/${name}`,
    phase,
    rules: [POD_RULE],
    failurePolicy: 'Fail',
    reinvocationPolicy: 'Never',
    ...extra,
  };
}

const allow: Server = (request) => ({ response: { uid: request.uid, allowed: true } });

/** A mutating webhook that sets a label (a patch computed as our codec computes it). */
const label =
  (key: string, value: string): Server =>
  (request) => {
    const before = request.object as KubeObject;
    const after = structuredClone(before);
    after.metadata = { ...after.metadata, labels: { ...(after.metadata?.labels as object), [key]: value } };
    const patch = diffJson(before, after);
    return {
      response: {
        uid: request.uid,
        allowed: true,
        ...(patch.length > 0 && {
          patchType: 'JSONPatch',
          patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
        }),
      },
    };
  };

function ports(
  webhooks: readonly CheckWebhook[],
  servers: Record<string, Server>,
  seen: { name: string; labels: unknown }[] = [],
  namespaces: Record<string, Record<string, string>> = {},
): ChainPorts<CheckWebhook> {
  return {
    call: async (webhook, request) => {
      seen.push({ name: webhook.name, labels: { ...(request.object?.metadata?.labels as object) } });
      return servers[webhook.name](request);
    },
    conditionsMatch: celConditions(webhooks),
    namespaceLabels: (name) => namespaces[name],
    applyPatch: (object, patch) =>
      jsonpatch.applyPatch(structuredClone(object), patch as jsonpatch.Operation[], true, false).newDocument,
    uid: () => randomUUID(),
  };
}

function podCreate(labels: Record<string, string> = {}, namespace = 'default'): AdmissionRequestWire {
  const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace, labels }, spec: {} };
  return {
    uid: 'original',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    requestKind: { group: '', version: 'v1', kind: 'Pod' },
    requestResource: { group: '', version: 'v1', resource: 'pods' },
    name: 'p',
    namespace,
    operation: 'CREATE',
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    object,
    oldObject: null,
    dryRun: false,
  };
}

const names = (seen: { name: string }[]) => seen.map((s) => s.name);
const NS = { default: { 'kubernetes.io/metadata.name': 'default' } };

describe('TestWebhookReinvocationPolicy (reinvocation_test.go)', () => {
  it('no reinvocation for a webhook with policy Never, even when a later webhook mutates', async () => {
    const webhooks = [hook('a', 'mutate'), hook('b', 'mutate')];
    const seen: { name: string; labels: unknown }[] = [];
    const result = await runChain(webhooks, podCreate(), ports(webhooks, { a: allow, b: label('b', 'x') }, seen, NS));
    expect(names(seen)).toEqual(['a', 'b']);
    expect(result.object?.metadata?.labels).toEqual({ b: 'x' });
  });

  it('reinvokes an IfNeeded webhook once when a later webhook mutates, with the mutated object', async () => {
    const webhooks = [hook('a', 'mutate', { reinvocationPolicy: 'IfNeeded' }), hook('b', 'mutate')];
    const seen: { name: string; labels: unknown }[] = [];
    const result = await runChain(webhooks, podCreate(), ports(webhooks, { a: allow, b: label('b', 'x') }, seen, NS));
    expect(seen).toEqual([
      { name: 'a', labels: {} },
      { name: 'b', labels: {} },
      { name: 'a', labels: { b: 'x' } },
    ]);
    expect(result.calls.map((c) => [c.webhook.name, c.round])).toEqual([
      ['a', 1],
      ['b', 1],
      ['a', 2],
    ]);
  });

  it('no reinvocation for an IfNeeded webhook whose own mutation is the only one', async () => {
    const webhooks = [hook('a', 'mutate'), hook('b', 'mutate', { reinvocationPolicy: 'IfNeeded' })];
    const seen: { name: string; labels: unknown }[] = [];
    await runChain(webhooks, podCreate(), ports(webhooks, { a: allow, b: label('b', 'x') }, seen, NS));
    expect(names(seen)).toEqual(['a', 'b']);
  });

  it('reinvokes only once, however the reinvoked webhooks mutate', async () => {
    const webhooks = [
      hook('a', 'mutate', { reinvocationPolicy: 'IfNeeded' }),
      hook('b', 'mutate', { reinvocationPolicy: 'IfNeeded' }),
    ];
    let n = 0;
    const counting: Server = (request) => label('a', String(++n))(request);
    const seen: { name: string; labels: unknown }[] = [];
    await runChain(webhooks, podCreate(), ports(webhooks, { a: counting, b: label('b', 'x') }, seen, NS));
    // b changed the object after a: a again; a's second change reinvokes nobody.
    expect(names(seen)).toEqual(['a', 'b', 'a']);
  });

  it('a webhook that did not match the first time is not called on reinvocation', async () => {
    const late = hook('late', 'mutate', {
      reinvocationPolicy: 'IfNeeded',
      objectSelector: { matchLabels: { b: 'x' } },
    });
    const webhooks = [late, hook('b', 'mutate')];
    const seen: { name: string; labels: unknown }[] = [];
    await runChain(webhooks, podCreate(), ports(webhooks, { late: allow, b: label('b', 'x') }, seen, NS));
    expect(names(seen)).toEqual(['b']);
  });
});

describe('dispatch (mutating and validating dispatchers)', () => {
  it('validating webhooks see the object every mutation made, and all of them are called', async () => {
    const webhooks = [hook('m', 'mutate'), hook('v1', 'validate'), hook('v2', 'validate')];
    const seen: { name: string; labels: unknown }[] = [];
    const deny: Server = (request) => ({
      response: { uid: request.uid, allowed: false, status: { code: 403, message: 'no' } },
    });
    const result = await runChain(
      webhooks,
      podCreate(),
      ports(webhooks, { m: label('m', 'y'), v1: deny, v2: allow }, seen, NS),
    );
    expect(seen).toEqual([
      { name: 'm', labels: {} },
      { name: 'v1', labels: { m: 'y' } },
      { name: 'v2', labels: { m: 'y' } },
    ]);
    expect(result).toMatchObject({
      allowed: false,
      status: { code: 403, message: 'admission webhook "v1" denied the request: no' },
    });
  });

  it('a mutating denial ends the chain; a denial without message or code reads as upstream', async () => {
    const webhooks = [hook('m', 'mutate'), hook('later', 'mutate'), hook('v', 'validate')];
    const seen: { name: string; labels: unknown }[] = [];
    const bare: Server = (request) => ({ response: { uid: request.uid, allowed: false } });
    const result = await runChain(
      webhooks,
      podCreate(),
      ports(webhooks, { m: bare, later: allow, v: allow }, seen, NS),
    );
    expect(names(seen)).toEqual(['m']);
    expect(result.status).toEqual({
      code: 400,
      message: 'admission webhook "m" denied the request without explanation',
    });
  });

  it('a failed call is skipped under failurePolicy Ignore and refuses the request under Fail', async () => {
    const down: Server = () => ({ failure: 'connection refused' });
    const open = [hook('m', 'mutate', { failurePolicy: 'Ignore' }), hook('v', 'validate')];
    const skipped = await runChain(open, podCreate(), ports(open, { m: down, v: allow }, [], NS));
    expect(skipped.allowed).toBe(true);
    expect(skipped.calls[0]).toMatchObject({ outcome: 'failed-open' });
    const closed = [hook('v', 'validate', { failurePolicy: 'Fail' })];
    const refused = await runChain(closed, podCreate(), ports(closed, { v: down }, [], NS));
    expect(refused.status).toEqual({
      code: 500,
      message: 'Internal error occurred: failed calling webhook "v": connection refused',
      reason: 'InternalError',
    });
  });

  it('a patch that does not apply fails the request whatever the failurePolicy', async () => {
    const broken: Server = (request) => ({
      response: {
        uid: request.uid,
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify([{ op: 'remove', path: '/spec/nothing' }])).toString('base64'),
      },
    });
    const webhooks = [hook('m', 'mutate', { failurePolicy: 'Ignore' })];
    const result = await runChain(webhooks, podCreate(), ports(webhooks, { m: broken }, [], NS));
    expect(result.allowed).toBe(false);
    expect(result.status?.code).toBe(500);
    expect(result.status?.message).toMatch(/failed to apply the patch of webhook "m"/);
  });

  it('each call carries a fresh uid (CreateAdmissionObjects), never the request it came from', async () => {
    const webhooks = [hook('m', 'mutate'), hook('v', 'validate')];
    const uids: string[] = [];
    const record: Server = (request) => {
      uids.push(request.uid);
      return allow(request);
    };
    await runChain(webhooks, podCreate(), ports(webhooks, { m: record, v: record }, [], NS));
    expect(new Set(uids).size).toBe(2);
    expect(uids).not.toContain('original');
  });
});

describe("between the phases (the registry's BeforeCreate)", () => {
  it("validating webhooks see a uid, a creation time and a Namespace's name label; mutating ones do not", async () => {
    const rule = { ...POD_RULE, resources: ['namespaces'] };
    const webhooks = [hook('m', 'mutate', { rules: [rule] }), hook('v', 'validate', { rules: [rule] })];
    const objects: Record<string, KubeObject> = {};
    const keep: Server = (request) => {
      objects[request.uid.startsWith('v') ? 'v' : 'm'] = request.object as KubeObject;
      return allow(request);
    };
    const request: AdmissionRequestWire = {
      ...podCreate(),
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      name: 'new',
      namespace: '',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new' } },
    };
    let n = 0;
    const base = ports(webhooks, { m: keep, v: keep }, [], {});
    await runChain(webhooks, request, {
      ...base,
      uid: () => `${['m', 'v'][n++]}-call`,
      beforeValidation: storedOnCreate,
    });
    expect(objects.m.metadata).toEqual({ name: 'new' });
    expect(objects.v.metadata).toMatchObject({
      name: 'new',
      uid: expect.any(String),
      creationTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      labels: { 'kubernetes.io/metadata.name': 'new' },
    });
  });
});

describe('ShouldCallHook: selectors, rules and matchConditions', () => {
  it('namespaceSelector matches the namespace labels; a missing namespace fails the request', async () => {
    const webhooks = [hook('v', 'validate', { namespaceSelector: { matchLabels: { env: 'prod' } } })];
    const namespaces = { prod: { env: 'prod' }, dev: { env: 'dev' } };
    const seen: { name: string; labels: unknown }[] = [];
    await runChain(webhooks, podCreate({}, 'dev'), ports(webhooks, { v: allow }, seen, namespaces));
    expect(seen).toEqual([]);
    await runChain(webhooks, podCreate({}, 'prod'), ports(webhooks, { v: allow }, seen, namespaces));
    expect(names(seen)).toEqual(['v']);
    const missing = await runChain(webhooks, podCreate({}, 'gone'), ports(webhooks, { v: allow }, [], namespaces));
    expect(missing.status).toEqual({ code: 404, message: 'namespaces "gone" not found', reason: 'NotFound' });
  });

  it('a Namespace being created is matched by its own labels', async () => {
    const rule = { ...POD_RULE, resources: ['namespaces'] };
    const webhooks = [hook('v', 'validate', { rules: [rule], namespaceSelector: { matchLabels: { env: 'prod' } } })];
    const request: AdmissionRequestWire = {
      ...podCreate(),
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      name: 'new',
      namespace: '',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new', labels: { env: 'prod' } } },
    };
    const seen: { name: string; labels: unknown }[] = [];
    await runChain(webhooks, request, ports(webhooks, { v: allow }, seen, {}));
    expect(names(seen)).toEqual(['v']);
  });

  it('objectSelector and rules: a webhook sees only what both select', async () => {
    const webhooks = [
      hook('labelled', 'validate', { objectSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }),
      hook('services', 'validate', { rules: [{ ...POD_RULE, resources: ['services'] }] }),
    ];
    const seen: { name: string; labels: unknown }[] = [];
    const servers = { labelled: allow, services: allow };
    await runChain(webhooks, podCreate({ tier: 'web' }), ports(webhooks, servers, seen, NS));
    expect(seen).toEqual([]);
    await runChain(webhooks, podCreate({ app: 'web' }), ports(webhooks, servers, seen, NS));
    expect(names(seen)).toEqual(['labelled']);
  });

  it('matchConditions in CEL: false skips; an error goes to failurePolicy', async () => {
    const notAlice = { name: 'not-alice', expression: "request.userInfo.username != 'alice'" };
    const broken = { name: 'broken', expression: "object.metadata.labels['missing'] == 'x'" };
    const skip = [hook('v', 'validate', { matchConditions: [notAlice] })];
    const seen: { name: string; labels: unknown }[] = [];
    expect((await runChain(skip, podCreate(), ports(skip, { v: allow }, seen, NS))).allowed).toBe(true);
    expect(seen).toEqual([]);
    const open = [hook('v', 'validate', { matchConditions: [broken], failurePolicy: 'Ignore' })];
    const opened = await runChain(open, podCreate(), ports(open, { v: allow }, seen, NS));
    expect(opened).toMatchObject({ allowed: true, calls: [{ outcome: 'failed-open' }] });
    const closed = [hook('v', 'validate', { matchConditions: [broken] })];
    const refused = await runChain(closed, podCreate(), ports(closed, { v: allow }, seen, NS));
    expect(refused.status?.message).toMatch(
      /^Internal error occurred: failed calling webhook "v": failed to evaluate match conditions: broken: /,
    );
    expect(seen).toEqual([]);
  });
});
