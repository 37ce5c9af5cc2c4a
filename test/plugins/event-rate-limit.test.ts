import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/event-rate-limit/plugin.js';
import type { EventRateLimitConfig, Limit, LimitType } from '../../functions/event-rate-limit/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, ownStore, RESTART_TIMEOUT, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';

let store: TestStore;
beforeAll(async () => {
  store = await testStore('event-rate-limit');
});
afterAll(() => store.close());

const QPS = 1;
/** Far from the real clock, so DynamoDB Local's own TTL sweep never touches a test's buckets. */
const FUTURE = Date.now() + 400 * 24 * 3600 * 1000;

interface Request {
  kind: 'Event' | 'NonEvent';
  namespace?: string;
  username?: string;
  event?: KubeObject;
  delaySeconds?: number;
  accepted: boolean;
  dryRun?: boolean;
}

const event = (over: Partial<Request> = {}): Request => ({ kind: 'Event', accepted: true, ...over });
const nonEvent = (): Request => ({ kind: 'NonEvent', accepted: true });
const blocked = (r: Request): Request => ({ ...r, accepted: false });
const withComponent = (component: string) => ({ event: { kind: 'Event', source: { component } } as KubeObject });
const inclusion = (factory: (label: string) => Record<string, unknown>): Request[] => [
  event({ event: { kind: 'Event', ...factory('A') } }),
  blocked(event({ event: { kind: 'Event', ...factory('A') } })),
  event({ event: { kind: 'Event', ...factory('B') } }),
];

interface Case {
  name: string;
  serverBurst?: number;
  namespaceBurst?: number;
  namespaceCacheSize?: number;
  sourceAndObjectBurst?: number;
  sourceAndObjectCacheSize?: number;
  userBurst?: number;
  userCacheSize?: number;
  requests: Request[];
}

const lruNamespace = ['A', 'A', 'B', 'B', 'B', 'A'].map((ns) => event({ namespace: ns }));
const lruComponent = ['A', 'A', 'B', 'B', 'B', 'A'].map((c) => event(withComponent(c)));

const cases: Case[] = [
  { name: 'event not blocked when tokens available', serverBurst: 3, requests: [event()] },
  { name: 'non-event not blocked', serverBurst: 3, requests: [nonEvent()] },
  {
    name: 'event blocked after tokens exhausted',
    serverBurst: 3,
    requests: [event(), event(), event(), blocked(event())],
  },
  {
    name: 'event not blocked by dry-run requests',
    serverBurst: 3,
    requests: [
      event(),
      event(),
      event({ dryRun: true }),
      event({ dryRun: true }),
      event({ dryRun: true }),
      event({ dryRun: true }),
      event(),
      blocked(event()),
      event({ dryRun: true }),
    ],
  },
  {
    name: 'non-event not blocked after tokens exhausted',
    serverBurst: 3,
    requests: [event(), event(), event(), nonEvent()],
  },
  {
    name: 'non-events should not count against limit',
    serverBurst: 3,
    requests: [event(), event(), nonEvent(), event()],
  },
  {
    name: 'event accepted after token refill',
    serverBurst: 3,
    requests: [event(), event(), event(), blocked(event()), event({ delaySeconds: 1 })],
  },
  {
    name: 'event blocked by namespace limits',
    serverBurst: 100,
    namespaceBurst: 3,
    namespaceCacheSize: 10,
    requests: [...['A', 'A', 'A'].map((n) => event({ namespace: n })), blocked(event({ namespace: 'A' }))],
  },
  {
    name: 'event from other namespace not blocked',
    serverBurst: 100,
    namespaceBurst: 3,
    namespaceCacheSize: 10,
    requests: ['A', 'A', 'A', 'B'].map((n) => event({ namespace: n })),
  },
  {
    name: 'events from other namespaces should not count against limit',
    serverBurst: 100,
    namespaceBurst: 3,
    namespaceCacheSize: 10,
    requests: ['A', 'A', 'B', 'A'].map((n) => event({ namespace: n })),
  },
  {
    name: 'event accepted after namespace token refill',
    serverBurst: 100,
    namespaceBurst: 3,
    namespaceCacheSize: 10,
    requests: [
      ...['A', 'A', 'A'].map((n) => event({ namespace: n })),
      blocked(event({ namespace: 'A' })),
      event({ namespace: 'A', delaySeconds: 1 }),
    ],
  },
  {
    name: 'event from other namespaces should not clear namespace limits',
    serverBurst: 100,
    namespaceBurst: 3,
    namespaceCacheSize: 10,
    requests: [...['A', 'A', 'A', 'B'].map((n) => event({ namespace: n })), blocked(event({ namespace: 'A' }))],
  },
  {
    name: 'namespace limits from lru namespace should clear when cache size exceeded',
    serverBurst: 100,
    namespaceBurst: 3,
    namespaceCacheSize: 2,
    // Upstream: C evicts B from the LRU, so the last B is accepted. Here B's bucket is not full
    // again, so it is still there and the last B stays blocked (stricter; see the plugin header).
    requests: [
      ...lruNamespace,
      blocked(event({ namespace: 'B' })),
      blocked(event({ namespace: 'A' })),
      event({ namespace: 'C' }),
      blocked(event({ namespace: 'A' })),
      blocked(event({ namespace: 'B' })),
    ],
  },
  {
    name: 'event blocked by source+object limits',
    serverBurst: 100,
    sourceAndObjectBurst: 3,
    sourceAndObjectCacheSize: 10,
    requests: [...['A', 'A', 'A'].map((c) => event(withComponent(c))), blocked(event(withComponent('A')))],
  },
  {
    name: 'event from other source+object not blocked',
    serverBurst: 100,
    sourceAndObjectBurst: 3,
    sourceAndObjectCacheSize: 10,
    requests: ['A', 'A', 'A', 'B'].map((c) => event(withComponent(c))),
  },
  {
    name: 'events from other source+object should not count against limit',
    serverBurst: 100,
    sourceAndObjectBurst: 3,
    sourceAndObjectCacheSize: 10,
    requests: ['A', 'A', 'B', 'A'].map((c) => event(withComponent(c))),
  },
  {
    name: 'event accepted after source+object token refill',
    serverBurst: 100,
    sourceAndObjectBurst: 3,
    sourceAndObjectCacheSize: 10,
    requests: [
      ...['A', 'A', 'A'].map((c) => event(withComponent(c))),
      blocked(event(withComponent('A'))),
      event({ ...withComponent('A'), delaySeconds: 1 }),
    ],
  },
  {
    name: 'event from other source+object should not clear source+object limits',
    serverBurst: 100,
    sourceAndObjectBurst: 3,
    sourceAndObjectCacheSize: 10,
    requests: [...['A', 'A', 'A', 'B'].map((c) => event(withComponent(c))), blocked(event(withComponent('A')))],
  },
  {
    name: 'source+object limits from lru source+object should clear when cache size exceeded',
    serverBurst: 100,
    sourceAndObjectBurst: 3,
    sourceAndObjectCacheSize: 2,
    // The same difference as the namespace LRU case: the last B stays blocked here.
    requests: [
      ...lruComponent,
      blocked(event(withComponent('B'))),
      blocked(event(withComponent('A'))),
      event(withComponent('C')),
      blocked(event(withComponent('A'))),
      blocked(event(withComponent('B'))),
    ],
  },
  {
    name: 'source host should be included in source+object key',
    serverBurst: 100,
    sourceAndObjectBurst: 1,
    sourceAndObjectCacheSize: 10,
    requests: inclusion((l) => ({ source: { host: l } })),
  },
  {
    name: 'involved object kind should be included in source+object key',
    serverBurst: 100,
    sourceAndObjectBurst: 1,
    sourceAndObjectCacheSize: 10,
    requests: inclusion((l) => ({ involvedObject: { kind: l } })),
  },
  {
    name: 'involved object namespace should be included in source+object key',
    serverBurst: 100,
    sourceAndObjectBurst: 1,
    sourceAndObjectCacheSize: 10,
    requests: inclusion((l) => ({ involvedObject: { namespace: l } })),
  },
  {
    name: 'involved object name should be included in source+object key',
    serverBurst: 100,
    sourceAndObjectBurst: 1,
    sourceAndObjectCacheSize: 10,
    requests: inclusion((l) => ({ involvedObject: { name: l } })),
  },
  {
    name: 'involved object UID should be included in source+object key',
    serverBurst: 100,
    sourceAndObjectBurst: 1,
    sourceAndObjectCacheSize: 10,
    requests: inclusion((l) => ({ involvedObject: { uid: l } })),
  },
  {
    name: 'involved object APIVersion should be included in source+object key',
    serverBurst: 100,
    sourceAndObjectBurst: 1,
    sourceAndObjectCacheSize: 10,
    requests: inclusion((l) => ({ involvedObject: { apiVersion: l } })),
  },
  {
    name: 'event blocked by user limits',
    userBurst: 3,
    userCacheSize: 10,
    requests: [...['A', 'A', 'A'].map((u) => event({ username: u })), blocked(event({ username: 'A' }))],
  },
  { name: 'event from other user not blocked', requests: ['A', 'A', 'A', 'B'].map((u) => event({ username: u })) },
  {
    name: 'events from other user should not count against limit',
    requests: ['A', 'A', 'B', 'A'].map((u) => event({ username: u })),
  },
];

function configOf(c: Case): EventRateLimitConfig {
  const limits: Limit[] = [];
  const add = (type: LimitType, burst: number | undefined, cacheSize = 0) =>
    burst && limits.push({ type, qps: QPS, burst, cacheSize });
  add('Server', c.serverBurst);
  add('Namespace', c.namespaceBurst, c.namespaceCacheSize);
  add('User', c.userBurst, c.userCacheSize);
  add('SourceAndObject', c.sourceAndObjectBurst, c.sourceAndObjectCacheSize);
  return { limits };
}

let uids = 0;
/** upstream's attributesForRequest: kind from the request, resource "resource", name "name", CREATE. */
function inputOf(rq: Request): ReviewInput {
  return {
    uid: `erl-${++uids}`,
    kind: { kind: rq.kind },
    resource: { resource: 'resource' },
    name: 'name',
    namespace: rq.namespace ?? '',
    object: rq.event ?? null,
    dryRun: rq.dryRun ?? false,
    userInfo: { username: rq.username ?? '' },
  };
}

describe('TestEventRateLimiting', () => {
  it.each(cases.map((c, i) => ({ ...c, i })))('$name', async (tc) => {
    let clock = FUTURE + tc.i * 1e9; // a fresh start: every earlier case's buckets are full again
    const config = configOf(tc);
    for (const [index, rq] of tc.requests.entries()) {
      clock += (rq.delaySeconds ?? 0) * 1000;
      const input = inputOf(rq);
      const result = await runPhase(
        plugin,
        'validate',
        input,
        config,
        store.state({ uid: input.uid!, dryRun: input.dryRun! }, () => clock),
      );
      const response = result.wire.response!;
      expect(
        response.allowed,
        `request ${index} should have been ${rq.accepted ? 'admitted' : 'blocked'}: ${response.status?.message}`,
      ).toBe(rq.accepted);
      if (!response.allowed) expect(response.status).toMatchObject({ code: 429, reason: 'TooManyRequests' });
    }
  });
});

describe("upstream's messages, through the deployed handler", () => {
  const config: EventRateLimitConfig = {
    limits: [
      { type: 'Server', qps: 1, burst: 1000, cacheSize: 1 },
      { type: 'Namespace', qps: 1, burst: 1, cacheSize: 10 },
      { type: 'User', qps: 1, burst: 1, cacheSize: 10 },
    ],
  };
  const coreEvent = (namespace: string, username: string): ReviewInput => ({
    kind: { kind: 'Event' },
    resource: { resource: 'events' },
    namespace,
    userInfo: { username },
    object: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace },
      involvedObject: { kind: 'Pod', name: 'p' },
      source: { component: 'kubelet' },
    },
  });

  it('one limit reached: 429 TooManyRequests, one prefix, as the built-in plugin answers on v1.36', async () => {
    const invoke = lambdaFor(plugin, store, config);
    expect((await invoke('validate', coreEvent('msg-ns', 'alice'))).review!.response!.allowed).toBe(true);
    const refused = (await invoke('validate', coreEvent('msg-ns', 'bob'))).review!.response!;
    expect(refused.allowed).toBe(false);
    expect(refused.status).toMatchObject({
      code: 429,
      reason: 'TooManyRequests',
      message: 'Too many requests: limit reached on type Namespace for key msg-ns',
    });
  });

  // The v1.36.2 apiserver's built-in answers these two limits with
  // `Too many requests: [limit reached on type Namespace for key shop, limit reached on type User for key e2e-admin]`.
  it('several limits reached: every one is named, aggregated inside one prefix', async () => {
    const invoke = lambdaFor(plugin, store, config);
    expect((await invoke('validate', coreEvent('agg-ns', 'carol'))).review!.response!.allowed).toBe(true);
    const refused = (await invoke('validate', coreEvent('agg-ns', 'carol'))).review!.response!;
    expect(refused.status?.message).toBe(
      'Too many requests: [limit reached on type Namespace for key agg-ns, limit reached on type User for key carol]',
    );
  });

  it('a refusal takes no token from the other buckets (all or none)', async () => {
    const clock = FUTURE - 1e9;
    const cfg: EventRateLimitConfig = {
      limits: [
        { type: 'Server', qps: 1, burst: 2, cacheSize: 1 },
        { type: 'Namespace', qps: 1, burst: 1, cacheSize: 10 },
      ],
    };
    const send = async (namespace: string) => {
      const input = { ...coreEvent(namespace, 'u'), uid: `aon-${++uids}` };
      return deniedMessage(
        await runPhase(
          plugin,
          'validate',
          input,
          cfg,
          store.state({ uid: input.uid, dryRun: false }, () => clock),
        ),
      );
    };
    expect(await send('aon-a')).toBeUndefined();
    expect(await send('aon-a')).toBeDefined(); // the namespace bucket is empty; the server's is untouched
    expect(await send('aon-b')).toBeUndefined(); // so the server bucket still has its second token
    expect(await send('aon-c')).toBe('Too many requests: limit reached on type Server for key ');
  });

  it('events.k8s.io Events are limited too, keyed by deprecatedSource and regarding', async () => {
    const clock = FUTURE - 2e9;
    const cfg: EventRateLimitConfig = { limits: [{ type: 'SourceAndObject', qps: 1, burst: 1, cacheSize: 10 }] };
    const send = async (name: string) => {
      const uid = `ev-${++uids}`;
      const input: ReviewInput = {
        uid,
        kind: { group: 'events.k8s.io', version: 'v1', kind: 'Event' },
        resource: { resource: 'events' },
        namespace: 'ev',
        object: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: 'x', namespace: 'ev' },
          regarding: { kind: 'Pod', name },
          deprecatedSource: { component: 'kubelet' },
        },
      };
      return deniedMessage(
        await runPhase(
          plugin,
          'validate',
          input,
          cfg,
          store.state({ uid, dryRun: false }, () => clock),
        ),
      );
    };
    expect(await send('p1')).toBeUndefined();
    expect(await send('p1')).toBe('Too many requests: limit reached on type SourceAndObject for key kubeletPodp1');
    expect(await send('p2')).toBeUndefined();
  });

  it('other resources, subresources and DELETE are not limited', async () => {
    const cfg: EventRateLimitConfig = { limits: [{ type: 'Server', qps: 1, burst: 1, cacheSize: 1 }] };
    const state = store.state({ uid: 'other', dryRun: false }, () => FUTURE - 3e9);
    const pod: ReviewInput = { object: { kind: 'Pod', metadata: { name: 'p', namespace: 'n' } } };
    for (let i = 0; i < 3; i++)
      expect(deniedMessage(await runPhase(plugin, 'validate', pod, cfg, state))).toBeUndefined();
    const del: ReviewInput = {
      operation: 'DELETE',
      kind: { kind: 'Event' },
      resource: { resource: 'events' },
      namespace: 'n',
      name: 'e',
      oldObject: { kind: 'Event', metadata: { name: 'e', namespace: 'n' } },
    };
    for (let i = 0; i < 3; i++)
      expect(deniedMessage(await runPhase(plugin, 'validate', del, cfg, state))).toBeUndefined();
  });
});

describe('side effects: idempotent per uid, none for a dry run', () => {
  const config: EventRateLimitConfig = { limits: [{ type: 'Namespace', qps: 1, burst: 1, cacheSize: 10 }] };
  const review = (uid: string, dryRun = false): ReviewInput => ({
    uid,
    dryRun,
    kind: { kind: 'Event' },
    resource: { resource: 'events' },
    namespace: 'idem',
    object: { kind: 'Event', metadata: { name: 'e', namespace: 'idem' } },
  });

  it('the apiserver retrying a request (same uid) takes one token', async () => {
    const invoke = lambdaFor(plugin, store, config);
    expect((await invoke('validate', review('same-uid'))).review!.response!.allowed).toBe(true);
    expect((await invoke('validate', review('same-uid'))).review!.response!.allowed).toBe(true);
    expect((await invoke('validate', review('other-uid'))).review!.response!.allowed).toBe(false);
  });

  it('a dry run sends zero writes to the store (and is not limited)', async () => {
    store.reset();
    const invoke = lambdaFor(plugin, store, config);
    for (let i = 0; i < 3; i++)
      expect((await invoke('validate', review(`dry-${i}`, true))).review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
  });
});

describe('buckets live in the store', () => {
  it(
    'an empty bucket is still empty after DynamoDB Local restarts on the same data (-dbPath)',
    async () => {
      const own = await ownStore('erl-restart');
      const persistent = own.store;
      const clock = FUTURE;
      const config: EventRateLimitConfig = { limits: [{ type: 'Server', qps: 1, burst: 2, cacheSize: 1 }] };
      const send = async () => {
        const input: ReviewInput = {
          uid: `rs-${++uids}`,
          kind: { kind: 'Event' },
          resource: { resource: 'events' },
          namespace: 'r',
          object: { kind: 'Event' },
        };
        return runPhase(
          plugin,
          'validate',
          input,
          config,
          persistent.state({ uid: input.uid!, dryRun: false }, () => clock),
        );
      };
      try {
        expect(deniedMessage(await send())).toBeUndefined();
        expect(deniedMessage(await send())).toBeUndefined();
        await own.stop();
        await own.start();
        expect(deniedMessage(await send())).toBe('Too many requests: limit reached on type Server for key ');
      } finally {
        await own.dispose();
      }
    },
    RESTART_TIMEOUT,
  );

  it('an idle bucket is forgotten once it would be full again (how cacheSize is approximated)', async () => {
    let clock = FUTURE - 4e9;
    const config: EventRateLimitConfig = { limits: [{ type: 'Namespace', qps: 1, burst: 2, cacheSize: 1 }] };
    const send = async () => {
      const input: ReviewInput = {
        uid: `idle-${++uids}`,
        kind: { kind: 'Event' },
        resource: { resource: 'events' },
        namespace: 'idle',
        object: { kind: 'Event' },
      };
      return deniedMessage(
        await runPhase(
          plugin,
          'validate',
          input,
          config,
          store.state({ uid: input.uid!, dryRun: false }, () => clock),
        ),
      );
    };
    await send();
    await send();
    expect(await send()).toBeDefined();
    clock += 3000; // two tokens refill in 2 s; the item expires a second later
    const { Item } = await store.client.call('GetItem', {
      TableName: store.tableName,
      Key: { pk: { S: 'erl#Namespace#idle' }, sk: { S: 'bucket' } },
    });
    expect(Number(Item!.expiresAt.N)).toBeLessThanOrEqual(clock / 1000); // expired: reads as a full bucket
    expect(await send()).toBeUndefined();
  });
});

describe('configure: upstream Configuration and ValidateConfiguration', () => {
  const source = { file: 'admission.yaml', baseDir: '.' };
  const limits = (...entries: unknown[]) => ({
    apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1',
    kind: 'Configuration',
    limits: entries,
  });

  it('reads limits, defaulting cacheSize to 4096 as upstream', () => {
    expect(
      plugin.configure!(
        limits({ type: 'Namespace', qps: 50, burst: 100 }, { type: 'Server', qps: 5000, burst: 20000 }),
        source,
      ),
    ).toEqual({
      limits: [
        { type: 'Namespace', qps: 50, burst: 100, cacheSize: 4096 },
        { type: 'Server', qps: 5000, burst: 20000, cacheSize: 1 },
      ],
    });
    expect(plugin.configure!(undefined, source)).toEqual({ limits: [] });
  });

  it('names the field of every violation', () => {
    expect(() => plugin.configure!(limits({ type: 'Server', qps: 0, burst: 1 }), source)).toThrow(
      /^EventRateLimit: limits\[0\]\.qps: Invalid value: 0: must be positive$/,
    );
    expect(() => plugin.configure!(limits({ type: 'Pod', qps: 1, burst: 1 }), source)).toThrow(
      'EventRateLimit: limits[0].type: Unsupported value: "Pod": supported values: "Namespace", "Server", "SourceAndObject", "User"',
    );
    expect(() => plugin.configure!(limits({ type: 'User', qps: 1, burst: 0, cacheSize: -1 }), source)).toThrow(
      'EventRateLimit: limits[0].burst: Invalid value: 0: must be positive; limits[0].cacheSize: Invalid value: -1: must not be negative',
    );
    expect(() => plugin.configure!(limits(), source)).toThrow(
      'EventRateLimit: limits: Invalid value: []: must not be empty',
    );
    expect(() => plugin.configure!(limits({ type: 'Server', qps: 1.5, burst: 1 }), source)).toThrow(
      'EventRateLimit: limits[0].qps: must be an integer from -2147483648 to 2147483647, got 1.5',
    );
    expect(() => plugin.configure!(limits({ type: 'Server', qps: 1, brust: 1 }), source)).toThrow(
      'EventRateLimit: limits[0].brust: unknown field "brust"; did you mean "burst"?',
    );
    expect(() => plugin.configure!({ apiVersion: 'v1', limits: [] }, source)).toThrow(
      /EventRateLimit: apiVersion: must be eventratelimit.admission.k8s.io\/v1alpha1/,
    );
  });

  it('the example AdmissionConfiguration is accepted', () => {
    const example = parseYaml(readFileSync('config/examples/event-rate-limit.yaml', 'utf8')) as {
      plugins: { name: string; configuration: unknown }[];
    };
    const entry = example.plugins.find((p) => p.name === 'EventRateLimit')!;
    expect((plugin.configure!(entry.configuration, source) as EventRateLimitConfig).limits.length).toBeGreaterThan(0);
  });
});
