// Per-plugin enforcement modes and exemptions, through the real Lambda handlers: AlwaysPullImages
// (stateless, mutating with a validating twin), PodNodeSelector (learns namespaces) and
// ResourceQuota (side effects inside the plugin) over DynamoDB Local, real JSON patches applied.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsonpatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import alwaysPullImages from '../../functions/always-pull-images/plugin.js';
import podNodeSelector from '../../functions/pod-node-selector/plugin.js';
import type { PodNodeSelectorConfig } from '../../functions/pod-node-selector/plugin.js';
import eventRateLimit from '../../functions/event-rate-limit/plugin.js';
import type { EventRateLimitConfig } from '../../functions/event-rate-limit/plugin.js';
import resourceQuota from '../../functions/resource-quota/plugin.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { AdmissionResponseWire, AdmissionReviewWire, KubeObject } from '../../lib/admission/types.js';
import type { Enforcement, Exemptions } from '../../lib/config/enforcement.js';
import { NO_EXEMPTIONS } from '../../lib/config/enforcement.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { AUDIT_REFUSAL_KEY } from '../../lib/http/enforcement.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import type { TestStore } from '../support/dynamodb.js';
import { namespaceReview, testStore } from '../support/dynamodb.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import type { ReviewInput } from '../support/review.js';
import { review } from '../support/review.js';

const callerAuth = { mode: 'mtls', allowedSubjects: [] } as const;
let store: TestStore;
beforeAll(async () => {
  store = await testStore('enforcement');
});
afterAll(() => store.close());

interface Mode {
  readonly enforcement?: Enforcement;
  readonly exemptions?: Partial<Exemptions>;
}

/** The plugin's deployed handler with an entry's enforcement and exemptions; its answers. */
function lambda(plugin: AnyAdmissionPlugin, mode: Mode, config?: unknown, now?: () => number) {
  const options = {
    config,
    callerAuth,
    enforcement: mode.enforcement ?? 'Deny',
    exemptions: { ...NO_EXEMPTIONS, ...mode.exemptions },
  };
  const handler =
    plugin.metadata.needs.length > 0 || plugin.metadata.writes
      ? createStatefulAdmissionHandler(plugin, { ...options, state: (request) => store.state(request, now) })
      : createAdmissionHandler(plugin, options);
  return async (phase: Endpoint, input: ReviewInput): Promise<AdmissionResponseWire> => {
    const wire = review(input);
    const result = await handler(
      gatewayEvent(`/${plugin.metadata.name}/${phase}`, JSON.stringify(wire)),
      lambdaContext,
    );
    expect(result.statusCode, result.body).toBe(200);
    const answer = JSON.parse(result.body) as AdmissionReviewWire;
    expect(answer.response!.uid).toBe(wire.request.uid);
    return answer.response!;
  };
}

const pod = (
  namespace: string,
  policy = 'IfNotPresent',
  labels?: Record<string, string>,
  name = 'web',
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, ...(labels && { labels }) },
  spec: { containers: [{ name: 'app', image: 'nginx', imagePullPolicy: policy }] },
});

const olderImage = (object: KubeObject): KubeObject => ({
  ...object,
  spec: { containers: [{ name: 'app', image: 'nginx:old', imagePullPolicy: 'Always' }] },
});

const PULL_REFUSAL =
  'pods "web" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"';

const patchedObject = (input: KubeObject, response: AdmissionResponseWire): KubeObject => {
  const operations = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8'));
  return jsonpatch.applyPatch(structuredClone(input), operations, true, false).newDocument;
};

describe('enforcement modes, AlwaysPullImages', () => {
  it('Deny refuses, as upstream', async () => {
    const answer = await lambda(alwaysPullImages, {})('validate', { object: pod('apps') });
    expect(answer.allowed).toBe(false);
    expect(answer.status).toMatchObject({ code: 403, message: PULL_REFUSAL });
  });

  it('Warn admits, with the refusal as a warning carrying the same message', async () => {
    const answer = await lambda(alwaysPullImages, { enforcement: 'Warn' })('validate', { object: pod('apps') });
    expect(answer).toMatchObject({ allowed: true, warnings: [PULL_REFUSAL] });
    expect(answer.status).toBeUndefined();
    expect(answer.auditAnnotations).toBeUndefined();
  });

  it('Audit admits, with the refusal in the audit annotation audit-mode-refusal', async () => {
    const answer = await lambda(alwaysPullImages, { enforcement: 'Audit' })('validate', { object: pod('apps') });
    expect(AUDIT_REFUSAL_KEY).toBe('audit-mode-refusal');
    expect(answer).toMatchObject({ allowed: true, auditAnnotations: { 'audit-mode-refusal': PULL_REFUSAL } });
    expect(answer.warnings).toBeUndefined();
    expect(answer.status).toBeUndefined();
  });

  it.each(['Warn', 'Audit'] as const)('%s still mutates: only refusals are softened', async (enforcement) => {
    const input = pod('apps');
    const answer = await lambda(alwaysPullImages, { enforcement })('mutate', { object: input });
    expect(answer.allowed).toBe(true);
    expect(answer.warnings).toBeUndefined();
    expect((patchedObject(input, answer).spec as any).containers[0].imagePullPolicy).toBe('Always');
  });

  it.each(['Deny', 'Warn', 'Audit'] as const)('%s admits a pod that complies, with nothing added', async (mode) => {
    const answer = await lambda(alwaysPullImages, { enforcement: mode })('validate', { object: pod('apps', 'Always') });
    expect(answer).toEqual({ uid: answer.uid, allowed: true });
  });
});

describe('exemptions, AlwaysPullImages in Deny', () => {
  const cases: { name: string; exemptions: Partial<Exemptions>; exempt: ReviewInput; judged: ReviewInput }[] = [
    {
      name: 'namespaces: a request in a listed namespace',
      exemptions: { namespaces: ['legacy-apps'] },
      exempt: { object: pod('legacy-apps') },
      judged: { object: pod('apps') },
    },
    {
      name: 'usernames: a request by a listed user',
      exemptions: { usernames: ['system:serviceaccount:ci:deployer'] },
      exempt: { object: pod('apps'), userInfo: { username: 'system:serviceaccount:ci:deployer', groups: [] } },
      judged: { object: pod('apps'), userInfo: { username: 'system:serviceaccount:ci:other', groups: [] } },
    },
    {
      name: 'groups: a request by a member of a listed group',
      exemptions: { groups: ['platform-admins'] },
      exempt: { object: pod('apps'), userInfo: { username: 'alice', groups: ['dev', 'platform-admins'] } },
      judged: { object: pod('apps'), userInfo: { username: 'bob', groups: ['dev'] } },
    },
    {
      name: 'objectSelector: an object whose labels match',
      exemptions: { objectSelector: { matchExpressions: [{ key: 'skip-admission', operator: 'Exists' }] } },
      exempt: { object: pod('apps', 'IfNotPresent', { 'skip-admission': '' }) },
      judged: { object: pod('apps', 'IfNotPresent', { other: 'x' }) },
    },
    {
      // AlwaysPullImages judges an UPDATE that brings a new image.
      name: 'objectSelector: an UPDATE is exempt only when both objects match',
      exemptions: { objectSelector: { matchLabels: { tier: 'legacy' } } },
      exempt: {
        operation: 'UPDATE',
        object: pod('apps', 'IfNotPresent', { tier: 'legacy' }),
        oldObject: olderImage(pod('apps', 'Always', { tier: 'legacy' })),
      },
      judged: {
        operation: 'UPDATE',
        object: pod('apps', 'IfNotPresent', { tier: 'web' }),
        oldObject: olderImage(pod('apps', 'Always', { tier: 'legacy' })),
      },
    },
  ];

  it.each(cases)('$name is admitted unchanged; another is judged', async ({ exemptions, exempt, judged }) => {
    const invoke = lambda(alwaysPullImages, { exemptions });
    for (const phase of ['mutate', 'validate'] as const) {
      const answer = await invoke(phase, exempt);
      expect(answer, phase).toEqual({ uid: answer.uid, allowed: true });
    }
    expect((await invoke('validate', judged)).status?.message).toBe(PULL_REFUSAL);
    expect((await invoke('mutate', judged)).patch).toBeDefined();
  });
});

describe('namespaceSelector exemptions, against learned namespace labels (PodNodeSelector)', () => {
  const ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';
  const config: PodNodeSelectorConfig = {
    clusterNodeSelectors: { clusterDefaultNodeSelector: '' },
    unknownNamespace: 'default',
  };
  const exemptions = { namespaceSelector: { matchLabels: { 'admission.example.com/exempt': 'true' } } };
  const conflicting = (namespace: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace },
    spec: { containers: [{ name: 'c', image: 'i' }], nodeSelector: { env: 'dev' } },
  });

  it('a pod in a namespace learned with the exempting label is admitted unchanged; elsewhere refused', async () => {
    const invoke = lambda(podNodeSelector, { exemptions }, config);
    const annotations = { [ANNOTATION]: 'env=prod' };
    const labels = { 'admission.example.com/exempt': 'true' };
    // The Namespace writes themselves, sent to the learning webhook: an exempt one is still learned
    // (learning is not judging).
    expect((await invoke('learn', namespaceReview('CREATE', 'exempt-ns', { labels, annotations }))).allowed).toBe(true);
    expect((await invoke('learn', namespaceReview('CREATE', 'judged-ns', { annotations }))).allowed).toBe(true);

    for (const phase of ['mutate', 'validate'] as const) {
      const answer = await invoke(phase, { object: conflicting('exempt-ns') });
      expect(answer, phase).toEqual({ uid: answer.uid, allowed: true });
    }
    expect((await invoke('mutate', { object: conflicting('judged-ns') })).status?.message).toBe(
      'pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
  });
});

describe('side effects follow the real decision: ResourceQuota', () => {
  const config = { limitedResources: [] };
  const quota = (namespace: string, pods: string): ReviewInput => ({
    kind: { kind: 'ResourceQuota' },
    resource: { resource: 'resourcequotas' },
    object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace }, spec: { hard: { pods } } },
  });
  const qpod = (namespace: string, name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  const remove = (object: KubeObject): ReviewInput => ({
    operation: 'DELETE',
    object: null,
    oldObject: object,
    name: object.metadata!.name,
    namespace: object.metadata!.namespace,
  });

  it('Warn: a pod over quota is admitted with the refusal as a warning, and is not charged', async () => {
    const ns = 'warn-quota';
    const warn = lambda(resourceQuota, { enforcement: 'Warn' }, config);
    const deny = lambda(resourceQuota, {}, config);
    expect((await warn('learn', quota(ns, '1'))).allowed).toBe(true);
    expect(await warn('validate', { object: qpod(ns, 'a') })).toMatchObject({ allowed: true });

    const over = await warn('validate', { object: qpod(ns, 'b') });
    expect(over.allowed).toBe(true);
    expect(over.warnings).toEqual([
      'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1',
    ]);
    // b was not charged: once a is deleted, c fits under Deny.
    expect((await deny('learn', remove(qpod(ns, 'a')))).allowed).toBe(true);
    expect((await deny('validate', { object: qpod(ns, 'c') })).allowed).toBe(true);
    expect((await deny('validate', { object: qpod(ns, 'd') })).allowed).toBe(false);
  });

  it('Warn: a pod that fits is charged where an admitted one would be', async () => {
    const ns = 'warn-charged';
    const warn = lambda(resourceQuota, { enforcement: 'Warn' }, config);
    const deny = lambda(resourceQuota, {}, config);
    await deny('learn', quota(ns, '1'));
    expect(await warn('validate', { object: qpod(ns, 'a') })).toEqual(expect.objectContaining({ allowed: true }));
    expect((await deny('validate', { object: qpod(ns, 'b') })).allowed).toBe(false);
  });

  it('Audit: a dry run over quota is admitted, audited, and writes nothing', async () => {
    const ns = 'audit-dry';
    const audit = lambda(resourceQuota, { enforcement: 'Audit' }, config);
    await audit('learn', quota(ns, '0'));
    store.reset();
    const answer = await audit('validate', { object: qpod(ns, 'a'), dryRun: true });
    expect(answer.allowed).toBe(true);
    expect(answer.auditAnnotations?.[AUDIT_REFUSAL_KEY]).toMatch(/^pods "a" is forbidden: exceeded quota: q/);
    expect(store.writes()).toBe(0);
  });

  it('an exempt user still teaches quotas and releases charges: only what the plugin judges is exempt', async () => {
    const ns = 'exempt-records';
    const exempting = lambda(resourceQuota, { exemptions: { usernames: ['ci'] } }, config);
    const ci = { username: 'ci', groups: [] };
    expect((await exempting('learn', { ...quota(ns, '1'), userInfo: ci })).allowed).toBe(true);
    expect((await exempting('validate', { object: qpod(ns, 'a') })).allowed).toBe(true);
    expect((await exempting('validate', { object: qpod(ns, 'b') })).allowed).toBe(false); // the quota was learned
    expect((await exempting('learn', { ...remove(qpod(ns, 'a')), userInfo: ci })).allowed).toBe(true);
    expect((await exempting('validate', { object: qpod(ns, 'b') })).allowed).toBe(true); // a was released
  });

  it('an exempt request is admitted without reaching the plugin: no store call at all, nothing charged', async () => {
    const ns = 'exempt-quota';
    const deny = lambda(resourceQuota, {}, config);
    const exempting = lambda(resourceQuota, { exemptions: { usernames: ['ci'] } }, config);
    await deny('learn', quota(ns, '1'));
    store.reset();
    const answer = await exempting('validate', { object: qpod(ns, 'a'), userInfo: { username: 'ci', groups: [] } });
    expect(answer).toEqual({ uid: answer.uid, allowed: true });
    expect(store.sent).toEqual([]);
    expect((await deny('validate', { object: qpod(ns, 'b') })).allowed).toBe(true);
  });
});

describe('side effects follow the real decision: EventRateLimit', () => {
  // A fixed clock far from the real one: no bucket refills between requests, and DynamoDB Local's
  // TTL sweep never touches these buckets.
  const FUTURE = Date.now() + 400 * 24 * 3600 * 1000;
  const config: EventRateLimitConfig = {
    limits: [
      { type: 'Namespace', qps: 1, burst: 1, cacheSize: 4096 },
      { type: 'Server', qps: 1, burst: 3, cacheSize: 4096 },
    ],
  };
  const coreEvent = (namespace: string): ReviewInput => ({
    kind: { kind: 'Event' },
    resource: { resource: 'events' },
    namespace,
    object: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace },
      involvedObject: { kind: 'Pod', name: 'p' },
      source: { component: 'kubelet' },
    },
  });

  it('Warn: a request over a limit is admitted with the warning and takes no token; one within takes its tokens', async () => {
    const warn = lambda(eventRateLimit, { enforcement: 'Warn' }, config, () => FUTURE);
    expect(await warn('validate', coreEvent('ns-a'))).toEqual(expect.objectContaining({ allowed: true }));
    const over = await warn('validate', coreEvent('ns-a'));
    expect(over.allowed).toBe(true);
    expect(over.warnings).toEqual(['Too many requests: limit reached on type Namespace for key ns-a']);
    // The warned request took no Server token: two more namespaces still fit under burst 3.
    for (const ns of ['ns-b', 'ns-c']) expect((await warn('validate', coreEvent(ns))).warnings).toBeUndefined();
    expect((await warn('validate', coreEvent('ns-d'))).warnings).toEqual([
      'Too many requests: limit reached on type Server for key ',
    ]);
  });
});

describe("the Lambda's own start: enforcement and exemptions read from ADMISSION_CONFIG", () => {
  it('a handler built without options warns instead of refusing, and leaves exempt namespaces alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enforcement-lambda-'));
    const previous = process.env.ADMISSION_CONFIG;
    try {
      const file = join(dir, 'admission.yaml');
      writeFileSync(
        file,
        [
          'apiVersion: apiserver.config.k8s.io/v1',
          'kind: AdmissionConfiguration',
          'plugins:',
          '- name: AlwaysPullImages',
          '  enforcement: Warn',
          '  exemptions: {namespaces: [legacy-apps]}',
        ].join('\n'),
      );
      process.env.ADMISSION_CONFIG = file;
      const handler = createAdmissionHandler(alwaysPullImages, { callerAuth });
      const answer = async (object: KubeObject) => {
        const result = await handler(
          gatewayEvent('/always-pull-images/validate', JSON.stringify(review({ object }))),
          lambdaContext,
        );
        return (JSON.parse(result.body) as AdmissionReviewWire).response!;
      };
      expect(await answer(pod('apps'))).toMatchObject({ allowed: true, warnings: [PULL_REFUSAL] });
      expect((await answer(pod('legacy-apps'))).warnings).toBeUndefined();
    } finally {
      if (previous === undefined) delete process.env.ADMISSION_CONFIG;
      else process.env.ADMISSION_CONFIG = previous;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
