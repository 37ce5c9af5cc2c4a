// What a URL grants over learned state (issue: a webhook URL a tenant can see grants nothing a
// tenant could abuse). Only a plugin's learning endpoint (`/<plugin>/learn`, fail-open, so its URL
// never reaches a user's error message) changes learned state or records observed side effects;
// a judging endpoint (`mutate`, `validate`) only judges. Through the real handlers over DynamoDB
// Local, with real plugins:
// - a forged write sent to a judging endpoint changes no later decision (and the same write on the
//   learning endpoint would have: each case proves its forgery matters);
// - the learning endpoint learns only the kinds its own rules subscribe to;
// - it learns only what the plugin itself would admit, and always answers a bare `allowed`;
// - in url-secret mode a judging capability cannot reach it;
// - a dry run sent to it writes nothing, for every plugin that learns.
import { afterAll, describe, expect, it } from 'vitest';
import { plugins as registry } from '../../functions/index.js';
import { NS_WHITELIST_TOLERATIONS } from '../../functions/pod-toleration-restriction/plugin.js';
import { learningEndpointRules, LEARNED_OBJECT_KINDS } from '../../lib/admission/learning.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { LearnedObjectKind } from '../../lib/admission/ports.js';
import type { AdmissionResponseWire, KubeObject } from '../../lib/admission/types.js';
import { NO_EXEMPTIONS } from '../../lib/config/enforcement.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import type { Endpoint, Phase } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { capability, urlSecretAuth } from '../support/capability.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import { classWrite } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';
import { review } from '../support/review.js';

const pluginNamed = (name: string): AnyAdmissionPlugin => registry.find((p) => p.metadata.name === name)!;
const configure = (plugin: AnyAdmissionPlugin, raw?: unknown) =>
  plugin.configure?.(raw, { file: 'test AdmissionConfiguration', baseDir: '.' });

const stores: TestStore[] = [];
afterAll(() => {
  for (const store of stores) store.close();
});
/** A table of its own for each case: learned state shared by every plugin, as in a deployment. */
async function freshStore(name: string): Promise<TestStore> {
  const store = await testStore(name);
  stores.push(store);
  return store;
}

type Invoke = ReturnType<typeof lambdaFor>;

async function answer(invoke: Invoke, endpoint: Endpoint, input: ReviewInput): Promise<AdmissionResponseWire> {
  const result = await invoke(endpoint, input);
  expect(result.statusCode, result.body).toBe(200);
  return result.review!.response!;
}

/** The learning endpoint's one answer: admitted, with nothing else said (no patch, warning or status). */
async function learn(invoke: Invoke, input: ReviewInput): Promise<void> {
  expect(await answer(invoke, 'learn', input)).toEqual({ uid: expect.any(String), allowed: true });
}

const judgingEndpoints = (plugin: AnyAdmissionPlugin): Phase[] => [
  ...(plugin.metadata.mutating ? (['mutate'] as const) : []),
  ...(plugin.metadata.validating ? (['validate'] as const) : []),
];

const pod = (namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
  spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }], ...spec },
});
const podCreate = (object: KubeObject): ReviewInput => ({ object });
const podDelete = (object: KubeObject): ReviewInput => ({
  operation: 'DELETE',
  object: null,
  oldObject: object,
  name: object.metadata!.name,
  namespace: object.metadata!.namespace,
});
const namespaceUpdate = (
  name: string,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> },
) => namespaceReview('UPDATE', name, meta);
const quota = (namespace: string, hard: Record<string, string>, operation: 'CREATE' | 'UPDATE' = 'CREATE') => ({
  operation,
  kind: { kind: 'ResourceQuota' },
  resource: { resource: 'resourcequotas' },
  object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace }, spec: { hard } },
});

/** What a probe's answer says, reduced to what a forgery would move. */
const verdict = (response: AdmissionResponseWire) =>
  response.allowed ? 'allowed' : `refused ${response.status?.code}: ${response.status?.message}`;

interface Forgery {
  readonly name: string;
  readonly plugin: string;
  readonly config?: unknown;
  /** What the cluster taught, through the learning endpoint. */
  readonly taught: readonly ReviewInput[];
  /** A later request and what its answer says. */
  readonly probe: (invoke: Invoke) => Promise<unknown>;
  /** Writes a tenant forges: sent to every judging endpoint of the plugin. */
  readonly forged: readonly ReviewInput[];
}

const PNS = 'scheduler.alpha.kubernetes.io/node-selector';
const toleration = (value: string) => ({ key: 'dedicated', operator: 'Equal', value, effect: 'NoSchedule' });
const restricted = { 'pod-security.kubernetes.io/enforce': 'restricted' };
const priorityClass = (name: string, value: number, globalDefault = false): KubeObject => ({
  metadata: { name },
  value,
  ...(globalDefault && { globalDefault }),
});
const mynode = { username: 'system:node:mynode', groups: ['system:nodes'] };
const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const boundPod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', uid: 'web-uid' },
  spec: { nodeName: 'mynode', containers: [{ name: 'c', image: 'i' }] },
};
const eviction: ReviewInput = {
  operation: 'CREATE',
  kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  subResource: 'eviction',
  namespace: 'ns',
  name: 'web',
  object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web', namespace: 'ns' } },
  userInfo: mynode,
};

const FORGERIES: readonly Forgery[] = [
  {
    name: "PodNodeSelector: a Namespace UPDATE naming another node selector for the tenant's namespace",
    plugin: 'pod-node-selector',
    config: { clusterNodeSelectors: { clusterDefaultNodeSelector: '' }, unknownNamespace: 'default' },
    taught: [namespaceReview('CREATE', 'team-b', { annotations: { [PNS]: 'pool=tenants' } })],
    probe: async (invoke) =>
      verdict(await answer(invoke, 'mutate', podCreate(pod('team-b', 'p', { nodeSelector: { pool: 'infra' } })))),
    forged: [namespaceUpdate('team-b', { annotations: { [PNS]: 'pool=infra' } })],
  },
  {
    name: 'PodSecurity: a Namespace UPDATE labelling the namespace enforce=privileged',
    plugin: 'pod-security',
    config: configure(pluginNamed('pod-security'), {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline' },
    }),
    taught: [namespaceReview('CREATE', 'team-b', { labels: restricted })],
    probe: async (invoke) => verdict(await answer(invoke, 'validate', podCreate(pod('team-b', 'p')))),
    forged: [namespaceUpdate('team-b', { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } })],
  },
  {
    name: 'PodTolerationRestriction: a Namespace UPDATE widening the whitelist',
    plugin: 'pod-toleration-restriction',
    config: { default: [], whitelist: [], unknownNamespace: 'default' },
    taught: [
      namespaceReview('CREATE', 'team-b', {
        annotations: { [NS_WHITELIST_TOLERATIONS]: JSON.stringify([toleration('tenants')]) },
      }),
    ],
    probe: async (invoke) =>
      verdict(await answer(invoke, 'validate', podCreate(pod('team-b', 'p', { tolerations: [toleration('infra')] })))),
    forged: [
      namespaceUpdate('team-b', {
        annotations: { [NS_WHITELIST_TOLERATIONS]: JSON.stringify([toleration('tenants'), toleration('infra')]) },
      }),
    ],
  },
  {
    name: "ResourceQuota: a pod DELETE releasing another pod's charge, and a quota UPDATE raising the limit",
    plugin: 'resource-quota',
    config: { limitedResources: [] },
    taught: [quota('team-b', { pods: '1' })],
    probe: async (invoke) => {
      // The charge is made by the judge (a side effect of admitting the pod); the same pod again
      // counts once, so the probe may run any number of times.
      expect((await answer(invoke, 'validate', podCreate(pod('team-b', 'first')))).allowed).toBe(true);
      return verdict(await answer(invoke, 'validate', podCreate(pod('team-b', 'second'))));
    },
    forged: [podDelete(pod('team-b', 'first')), quota('team-b', { pods: '100' }, 'UPDATE')],
  },
  {
    name: 'Priority: a PriorityClass write making a new global default',
    plugin: 'priority',
    taught: [classWrite('priorityclasses', priorityClass('tenant-low', 100))],
    probe: async (invoke) => {
      const result = await answer(invoke, 'mutate', podCreate(pod('team-b', 'p')));
      expect(result.allowed).toBe(true);
      return JSON.parse(Buffer.from(result.patch ?? '', 'base64').toString('utf8') || '[]');
    },
    forged: [classWrite('priorityclasses', priorityClass('forged-default', 1_000_000, true))],
  },
  {
    name: 'NamespaceLifecycle: a Namespace DELETE making the namespace terminating',
    plugin: 'namespace-lifecycle',
    config: { unknownNamespace: 'allow' },
    taught: [namespaceReview('CREATE', 'team-b')],
    probe: async (invoke) => verdict(await answer(invoke, 'validate', podCreate(pod('team-b', 'p')))),
    forged: [namespaceReview('DELETE', 'team-b')],
  },
  {
    name: "NodeRestriction: a pod DELETE making a node's pod unknown",
    plugin: 'node-restriction',
    config: configure(pluginNamed('node-restriction')),
    taught: [
      {
        operation: 'UPDATE',
        subResource: 'status',
        object: boundPod,
        oldObject: boundPod,
        userInfo: mynode,
      },
    ],
    probe: async (invoke) => verdict(await answer(invoke, 'validate', eviction)),
    forged: [{ ...podDelete(boundPod), userInfo: admin }],
  },
];

describe('a forged write sent to a judging endpoint changes no later decision', () => {
  it.each(FORGERIES)('$name', async ({ plugin: name, config, taught, probe, forged }) => {
    const plugin = pluginNamed(name);
    const store = await freshStore(`forged-${name}`);
    const invoke = lambdaFor(plugin, store, config);
    for (const write of taught) await learn(invoke, write);
    const before = await probe(invoke);
    for (const write of forged)
      for (const endpoint of judgingEndpoints(plugin)) {
        const result = await invoke(endpoint, write);
        expect(result.statusCode, `${endpoint}: ${result.body}`).toBe(200);
      }
    expect(await probe(invoke)).toEqual(before);
    // The same writes, sent where the apiserver sends them, do change the answer: the forgery
    // above would have mattered.
    for (const write of forged) await learn(invoke, write);
    expect(await probe(invoke)).not.toEqual(before);
  });
});

describe('the learning endpoint learns only the kinds its rules subscribe to', () => {
  const namespaceWrite = namespaceReview('CREATE', 'taught', {
    labels: { 'pod-security.kubernetes.io/enforce': 'privileged' },
  });
  const cases: readonly { what: string; plugin: string; write: ReviewInput; learnedBy: string }[] = [
    { what: 'a Namespace write', plugin: 'resource-quota', write: namespaceWrite, learnedBy: 'pod-security' },
    { what: 'a Namespace write', plugin: 'priority', write: namespaceWrite, learnedBy: 'namespace-lifecycle' },
    {
      what: 'a ResourceQuota write',
      plugin: 'pod-security',
      write: quota('taught', { pods: '0' }),
      learnedBy: 'resource-quota',
    },
    {
      what: 'a PriorityClass write',
      plugin: 'default-storage-class',
      write: classWrite('priorityclasses', priorityClass('taught', 1_000_000, true)),
      learnedBy: 'priority',
    },
    {
      what: 'a pod DELETE (a release)',
      plugin: 'pod-security',
      write: podDelete(pod('taught', 'p')),
      learnedBy: 'node-restriction',
    },
  ];
  it.each(cases)('$what sent to $plugin: nothing written; $learnedBy, which learns it, writes', async (c) => {
    const store = await freshStore('learned-kinds');
    const other = pluginNamed(c.plugin);
    store.reset();
    await learn(lambdaFor(other, store, configure(other)), c.write);
    expect(store.writes()).toBe(0);
    expect(await store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get('taught')).toBeUndefined();
    const learner = pluginNamed(c.learnedBy);
    await learn(lambdaFor(learner, store, configure(learner)), c.write);
    expect(store.writes()).toBeGreaterThan(0);
  });
});

describe('a write the plugin refuses teaches nothing, and the learning endpoint still answers allowed', () => {
  const namespaceOf = async (store: TestStore, name: string) =>
    store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get(name);

  it('PodSecurity: an invalid label value', async () => {
    const plugin = pluginNamed('pod-security');
    const store = await freshStore('refused-pod-security');
    const invoke = lambdaFor(plugin, store, configure(plugin));
    const invalid = namespaceReview('CREATE', 'bad', { labels: { 'pod-security.kubernetes.io/enforce': 'strict' } });
    expect((await answer(invoke, 'validate', invalid)).status?.code).toBe(422);
    await learn(invoke, invalid);
    expect(await namespaceOf(store, 'bad')).toBeUndefined();
    await learn(invoke, namespaceReview('CREATE', 'good', { labels: restricted }));
    expect((await namespaceOf(store, 'good'))?.labels).toEqual(restricted);
  });

  it('PodSecurity: a policy on an exempt namespace is warned by the judge, learned silently', async () => {
    const plugin = pluginNamed('pod-security');
    const store = await freshStore('warned-pod-security');
    const config = configure(plugin, {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      exemptions: { namespaces: ['exempt'] },
    });
    const invoke = lambdaFor(plugin, store, config);
    const write = namespaceReview('CREATE', 'exempt', { labels: restricted });
    expect((await answer(invoke, 'validate', write)).warnings).toHaveLength(1);
    await learn(invoke, write);
    expect((await namespaceOf(store, 'exempt'))?.labels).toEqual(restricted);
  });

  it('Priority: a second global default', async () => {
    const plugin = pluginNamed('priority');
    const store = await freshStore('refused-priority');
    const invoke = lambdaFor(plugin, store);
    await learn(invoke, classWrite('priorityclasses', priorityClass('first', 10, true)));
    const second = classWrite('priorityclasses', priorityClass('second', 5, true));
    expect((await answer(invoke, 'validate', second)).allowed).toBe(false);
    await learn(invoke, second);
    const learned = store.state({ uid: 'read', dryRun: false }).learnedObjects;
    expect(await learned.get('priorityclasses', 'second')).toBeUndefined();
    expect(await learned.get('priorityclasses', 'first')).toBeDefined();
  });

  it('NamespaceLifecycle: deleting the default namespace', async () => {
    const plugin = pluginNamed('namespace-lifecycle');
    const store = await freshStore('refused-namespace-lifecycle');
    const invoke = lambdaFor(plugin, store, { unknownNamespace: 'allow' });
    await learn(invoke, namespaceReview('CREATE', 'default'));
    const deletion = namespaceReview('DELETE', 'default');
    expect((await answer(invoke, 'validate', deletion)).allowed).toBe(false);
    await learn(invoke, deletion);
    expect((await namespaceOf(store, 'default'))?.phase).toBe('Active');
  });

  it('an exempt request reaches no judge, so it teaches whatever the plugin would say', async () => {
    const plugin = pluginNamed('pod-security');
    const store = await freshStore('exempt-pod-security');
    const handler = createStatefulAdmissionHandler(plugin, {
      config: configure(plugin),
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      exemptions: { ...NO_EXEMPTIONS, usernames: ['cluster-admin'] },
      state: (request) => store.state(request),
    });
    const invalid = namespaceReview(
      'CREATE',
      'by-admin',
      { labels: { 'pod-security.kubernetes.io/enforce': 'strict' } },
      { userInfo: { username: 'cluster-admin', groups: [] } },
    );
    for (const endpoint of ['validate', 'learn'] as const) {
      const result = await handler(
        gatewayEvent(`/pod-security/${endpoint}`, JSON.stringify(review(invalid))),
        lambdaContext,
      );
      expect(JSON.parse(result.body).response).toEqual({ uid: expect.any(String), allowed: true });
    }
    expect((await namespaceOf(store, 'by-admin'))?.labels).toEqual({ 'pod-security.kubernetes.io/enforce': 'strict' });
  });
});

describe('url-secret mode: a judging capability cannot reach the learning endpoint', () => {
  it('PodSecurity and PodNodeSelector: each capability opens its own endpoint, and nothing is learned through another', async () => {
    for (const name of ['pod-security', 'pod-node-selector']) {
      const plugin = pluginNamed(name);
      const store = await freshStore(`capability-${name}`);
      const handler = createStatefulAdmissionHandler(plugin, {
        config: configure(plugin),
        callerAuth: urlSecretAuth(),
        state: (request) => store.state(request),
      });
      const write = JSON.stringify(review(namespaceReview('CREATE', 'team-b', { labels: { team: 'b' } })));
      const send = async (granted: Endpoint, at: Endpoint) =>
        (
          await handler(
            gatewayEvent(
              formatWebhookPath({
                plugin: name,
                endpoint: at,
                capability: capability({ plugin: name, endpoint: granted }),
              }),
              write,
            ),
            lambdaContext,
          )
        ).statusCode;
      store.reset();
      for (const judging of judgingEndpoints(plugin)) {
        expect(await send(judging, 'learn'), `${name}: the ${judging} capability on learn`).toBe(403);
        expect(await send('learn', judging), `${name}: the learn capability on ${judging}`).toBe(403);
      }
      expect(store.sent).toEqual([]);
      expect(await store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get('team-b')).toBeUndefined();
      expect(await send('learn', 'learn')).toBe(200);
      expect((await store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get('team-b'))?.labels).toEqual({
        team: 'b',
      });
    }
  });
});

describe('the dryRun gate on the learning endpoint, for every plugin that learns', () => {
  const everything = everyPluginActiveConfiguration();
  afterAll(() => everything.remove());
  const learning = activePlugins(loadPluginSet(registry, { ADMISSION_CONFIG: everything.file })).filter(
    ({ plugin }) => learningEndpointRules(plugin.metadata).length > 0,
  );

  const OBJECTS: Record<LearnedObjectKind, KubeObject> = {
    storageclasses: { metadata: { name: 'taught' }, provisioner: 'example.com/disk' },
    ingressclasses: { metadata: { name: 'taught' }, spec: { controller: 'example.com/ingress' } },
    priorityclasses: priorityClass('taught', 10),
    runtimeclasses: { metadata: { name: 'taught' }, handler: 'runc' },
    clusterresourcequotas: {
      metadata: { name: 'taught' },
      spec: { selector: { labels: { matchLabels: { team: 'a' } } }, quota: { hard: { pods: '10' } } },
    },
    limitranges: { metadata: { name: 'taught', namespace: 'taught' }, spec: { limits: [] } },
    nodes: { metadata: { name: 'taught', labels: { pool: 'a' } } },
  };
  /** A write of each kind the plugin learns, as an administrator makes it. */
  function teachingWrites(plugin: AnyAdmissionPlugin): [string, ReviewInput][] {
    const { needs } = plugin.metadata;
    const writes: [string, ReviewInput][] = [];
    if (needs.includes('namespaces'))
      writes.push(['a Namespace', namespaceReview('CREATE', 'taught', { labels: { team: 'a' } })]);
    if (needs.includes('resourcequotas')) writes.push(['a ResourceQuota', quota('taught', { pods: '10' })]);
    if (needs.includes('placements')) {
      writes.push(['a pod', { object: pod('taught', 'p', { nodeName: 'node-1' }), userInfo: admin }]);
      writes.push(['a Node', classWrite('nodes', { metadata: { name: 'node-1', uid: 'node-1-uid' } })]);
    }
    for (const need of needs)
      if (Object.hasOwn(LEARNED_OBJECT_KINDS, need))
        writes.push([
          `a ${LEARNED_OBJECT_KINDS[need as LearnedObjectKind].kind}`,
          classWrite(need as LearnedObjectKind, OBJECTS[need as LearnedObjectKind]),
        ]);
    return writes;
  }

  it('covers every plugin with a learning endpoint', () => {
    expect(learning.map(({ plugin }) => plugin.metadata.name)).toEqual(
      registry.filter((p) => learningEndpointRules(p.metadata).length > 0).map((p) => p.metadata.name),
    );
    for (const { plugin } of learning) expect(teachingWrites(plugin).length, plugin.metadata.name).toBeGreaterThan(0);
  });

  it.each(learning.map(({ plugin, config }) => ({ name: plugin.metadata.name, plugin, config })))(
    '$name: a dry run of each kind it learns writes nothing; the same write without dryRun does',
    async ({ name, plugin, config }) => {
      const store = await freshStore(`dry-${name}`);
      const invoke = lambdaFor(plugin, store, config);
      for (const [what, write] of teachingWrites(plugin)) {
        store.reset();
        await learn(invoke, { ...write, dryRun: true });
        expect(store.writes(), `${name}: dry-run ${what}`).toBe(0);
        await learn(invoke, write);
        expect(store.writes(), `${name}: ${what}`).toBeGreaterThan(0);
      }
    },
  );

  it.each([
    // The example configuration limits requests.cpu to namespaces with a quota covering it.
    { name: 'resource-quota', setup: [quota('dry-release', { pods: '1', 'requests.cpu': '1' })] as ReviewInput[] },
    {
      name: 'cluster-resource-quota',
      setup: [
        namespaceReview('CREATE', 'dry-release', { labels: { team: 'a' } }),
        classWrite('clusterresourcequotas', OBJECTS.clusterresourcequotas),
      ],
    },
  ])('$name: a dry-run release writes nothing; the release itself writes', async ({ name, setup }) => {
    const plugin = pluginNamed(name);
    const config = learning.find((l) => l.plugin === plugin)?.config;
    const store = await freshStore(`dry-release-${name}`);
    const invoke = lambdaFor(plugin, store, config);
    for (const write of setup) await learn(invoke, write);
    const charged = pod('dry-release', 'charged');
    expect((await answer(invoke, 'validate', podCreate(charged))).allowed).toBe(true);
    store.reset();
    await learn(invoke, { ...podDelete(charged), dryRun: true });
    expect(store.writes()).toBe(0);
    await learn(invoke, podDelete(charged));
    expect(store.writes()).toBeGreaterThan(0);
  });
});

describe('a CREATE of an object already known to exist teaches nothing (the apiserver answers AlreadyExists)', () => {
  it('PodNodeSelector: a Namespace CREATE naming an existing namespace leaves its node selector', async () => {
    const plugin = pluginNamed('pod-node-selector');
    const store = await freshStore('already-exists-namespace');
    const invoke = lambdaFor(plugin, store, configure(plugin));
    const namespaces = store.state({ uid: 'read', dryRun: false }).learnedNamespaces;
    await learn(invoke, namespaceReview('CREATE', 'team-a', { annotations: { [PNS]: 'pool=team-a' } }));
    await learn(invoke, namespaceReview('CREATE', 'team-a', { annotations: { [PNS]: 'pool=mallory' } }));
    expect((await namespaces.get('team-a'))?.annotations).toEqual({ [PNS]: 'pool=team-a' });
    // An UPDATE is a change of the stored object: it still teaches.
    await learn(invoke, namespaceUpdate('team-a', { annotations: { [PNS]: 'pool=blue' } }));
    expect((await namespaces.get('team-a'))?.annotations).toEqual({ [PNS]: 'pool=blue' });
  });

  it('Priority: a PriorityClass CREATE naming an existing class leaves it as it was', async () => {
    const plugin = pluginNamed('priority');
    const store = await freshStore('already-exists-class');
    const invoke = lambdaFor(plugin, store, configure(plugin));
    await learn(invoke, classWrite('priorityclasses', priorityClass('low', 100)));
    await learn(invoke, classWrite('priorityclasses', priorityClass('low', 1_000_000, true)));
    const learned = await store.state({ uid: 'read', dryRun: false }).learnedObjects.get('priorityclasses', 'low');
    expect(learned?.object).toMatchObject({ value: 100 });
    expect(learned?.object).not.toHaveProperty('globalDefault');
  });
});

describe('with a cluster reader, no request teaches', () => {
  it('PodNodeSelector serves no learning endpoint, and a Namespace write sent there records nothing', async () => {
    const plugin = pluginNamed('pod-node-selector');
    const store = await freshStore('reader-teaches-nothing');
    process.env.CLUSTER_READER = 'token';
    let invoke: Invoke;
    try {
      invoke = lambdaFor(plugin, store, configure(plugin));
    } finally {
      delete process.env.CLUSTER_READER;
    }
    store.reset();
    const result = await invoke('learn', namespaceReview('CREATE', 'team-a', { annotations: { [PNS]: 'pool=x' } }));
    expect(result.statusCode).toBe(404);
    expect(store.writes()).toBe(0);
    expect(await store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get('team-a')).toBeUndefined();
  });

  it('ResourceQuota serves no learning endpoint: a DELETE the chain may still refuse releases nothing', async () => {
    const plugin = pluginNamed('resource-quota');
    const store = await freshStore('reader-releases-nothing');
    process.env.CLUSTER_READER = 'token';
    let invoke: Invoke;
    try {
      invoke = lambdaFor(plugin, store, configure(plugin));
    } finally {
      delete process.env.CLUSTER_READER;
    }
    store.reset();
    const result = await invoke('learn', podDelete(pod('team-a', 'p')));
    expect(result.statusCode).toBe(404);
    expect(store.writes()).toBe(0);
  });
});
