// `npm run sync`, run in-process against the test store with real kubectl listings
// (test/fixtures/kubectl/): what it loads is what the plugins then act on, proven through the
// plugins' own Lambda handlers. Plus usage and failure exit codes, and one run as a process.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncCommand } from '../../infra/sync/cli.js';
import clusterResourceQuota from '../../functions/cluster-resource-quota/plugin.js';
import resourceQuota from '../../functions/resource-quota/plugin.js';
import podTolerationRestriction from '../../functions/pod-toleration-restriction/plugin.js';
import nodeRestriction from '../../functions/node-restriction/plugin.js';
import originPodNodeEnvironment from '../../functions/origin-pod-node-environment/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, testStore } from '../support/dynamodb.js';

const FIXTURES = 'test/fixtures/kubectl';
let store: TestStore;
beforeAll(async () => {
  store = await testStore('sync');
});
afterAll(() => store.close());

async function sync(
  argv: string[],
  env: NodeJS.ProcessEnv = { DYNAMODB_ENDPOINT: store.endpoint, STATE_TABLE: store.tableName },
  cwd?: string,
) {
  let stdout = '';
  let stderr = '';
  const code = await syncCommand(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    ...(cwd && { cwd }),
  });
  return { code, stdout, stderr };
}

const fixture = (name: string) => ['--from', join(FIXTURES, name)];
const pod = (name: string, cpu: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
  spec: {
    containers: [
      { name: 'c', image: 'i', resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } } },
    ],
  },
});

describe('loading real kubectl listings', () => {
  let run: Awaited<ReturnType<typeof sync>>;
  beforeAll(async () => {
    // A charge for a pod that no longer exists: a recount must remove it.
    await store
      .state({ uid: 'ghost', dryRun: false })
      .quotaLedger.confirm(
        { namespace: 'team-a', resource: 'pods', name: 'ghost', uid: 'uid-ghost' },
        { usage: { pods: '1', 'requests.cpu': '900m' }, facts: { pod: true } },
      );
    // The same for a ClusterResourceQuota's ledger, and one in a namespace the listings do not
    // cover, which the recount must leave alone.
    const crqLedger = store.state({ uid: 'ghost', dryRun: false }).clusterQuotaLedger;
    const onePod = { usage: { pods: '1' }, facts: { pod: true } };
    await crqLedger.confirm('tenant-a', { namespace: 'team-a', resource: 'pods', name: 'ghost' }, onePod);
    await crqLedger.confirm('tenant-a', { namespace: 'unlisted', resource: 'pods', name: 'kept' }, onePod);
    run = await sync([
      ...fixture('namespaces.json'),
      ...fixture('clusterresourcequotas.json'),
      ...fixture('resourcequotas.json'),
      ...fixture('pods.json'),
      ...fixture('deployments-services.json'),
      ...fixture('nodes.json'),
    ]);
  });

  it('exits 0 with one progress line per kind on stderr', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`table ${store.tableName}`);
    expect(run.stderr).toContain('namespaces: 4 recorded (complete listing)\n');
    expect(run.stderr).toContain('resourcequotas: 2 recorded\n');
    expect(run.stderr).toContain('nodes: 2 recorded (complete listing)\n');
    expect(run.stderr).toContain('pods: 3 placements recorded\n');
    expect(run.stderr).toContain('pods: 3 counted in 4 namespaces, 1 stale charge removed\n');
    expect(run.stderr).toContain('deployments.apps: 1 counted in 4 namespaces\n');
    expect(run.stderr).toContain('services: 1 counted in 4 namespaces\n');
    expect(run.stderr).toContain('networking.k8s.io/Ingress: 1 skipped (not a kind this project learns or counts)\n');
  });

  it('namespaces are learned with their annotations and phase, and the listing is complete', async () => {
    const namespaces = store.state({ uid: 'read', dryRun: false }).learnedNamespaces;
    expect((await namespaces.get('team-a'))?.annotations['scheduler.alpha.kubernetes.io/node-selector']).toBe('team=a');
    expect((await namespaces.get('old-project'))?.phase).toBe('Terminating');
    expect(await namespaces.knownAbsent('never-existed')).toBe(true);
    expect(await namespaces.knownAbsent('team-a')).toBe(false);
  });

  it('ResourceQuota enforces the loaded quota against the recounted usage (2 pods, 600m of 1 CPU)', async () => {
    const invoke = lambdaFor(resourceQuota, store, { limitedResources: [] });
    const third = await invoke('validate', { object: pod('third', '300m') });
    expect(third.review!.response!.allowed).toBe(true);
    const fourth = await invoke('validate', { object: pod('fourth', '10m') });
    expect(fourth.review!.response!.status?.message).toBe(
      'pods "fourth" is forbidden: exceeded quota: compute-quota, requested: pods=1, used: pods=3, limited: pods=3',
    );
  });

  it('ClusterResourceQuotas are loaded, and each recounted from the namespaces it selects (team-a: 2 pods)', async () => {
    expect(run.stderr).toContain('clusterresourcequotas: 1 recorded (complete listing)\n');
    expect(run.stderr).toContain('pods: 2 counted for clusterresourcequota tenant-a, 1 stale charge removed\n');
    const invoke = lambdaFor(clusterResourceQuota, store, { unknownNamespace: 'skip' });
    // 2 listed pods + the charge in a namespace no listing covered; the ghost is gone.
    const third = await invoke('validate', { object: pod('crq-third', '10m') });
    expect(third.review!.response!.status?.message).toBe(
      'pods "crq-third" is forbidden: exceeded quota: tenant-a, requested: pods=1, used: pods=3, limited: pods=3',
    );
  });

  it("PodTolerationRestriction merges the loaded namespace's default tolerations", async () => {
    const invoke = lambdaFor(podTolerationRestriction, store, {
      default: [],
      whitelist: [],
      unknownNamespace: 'default',
    });
    const result = await invoke('mutate', {
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'team-a' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      },
    });
    const patch = JSON.parse(Buffer.from(result.review!.response!.patch!, 'base64').toString());
    expect(patch).toEqual([
      {
        op: 'add',
        path: '/spec/tolerations',
        value: [{ key: 'dedicated', operator: 'Equal', value: 'team-a', effect: 'NoSchedule' }],
      },
    ]);
  });

  it("NodeRestriction knows the loaded pods' nodes and the Nodes' UIDs", async () => {
    const invoke = lambdaFor(nodeRestriction, store, undefined);
    const kubelet = (node: string) => ({
      username: `system:node:${node}`,
      groups: ['system:nodes', 'system:authenticated'],
    });
    const evict = (node: string) =>
      invoke('validate', {
        operation: 'CREATE',
        kind: { group: 'policy', kind: 'Eviction' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        subResource: 'eviction',
        namespace: 'team-a',
        name: 'web-7d9c6b5f4-2xkqp',
        object: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'web-7d9c6b5f4-2xkqp', namespace: 'team-a' },
        },
        userInfo: kubelet(node),
      });
    expect((await evict('worker-1')).review!.response!.allowed).toBe(true);
    expect((await evict('worker-2')).review!.response!.status?.message).toBe(
      'pods "web-7d9c6b5f4-2xkqp" is forbidden: node worker-2 can only evict pods with spec.nodeName set to itself',
    );
    const mirror = (uid: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'etcd-worker-1',
        namespace: 'kube-system',
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'worker-1', uid, controller: true }],
      },
      spec: { nodeName: 'worker-1', containers: [{ name: 'etcd', image: 'etcd' }] },
    });
    const create = (uid: string) => invoke('validate', { object: mirror(uid), userInfo: kubelet('worker-1') });
    expect((await create('6c1d2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d')).review!.response!.allowed).toBe(true);
    expect((await create('0a9b8c7d-6e5f-4d3c-9b2a-1f0e9d8c7b6a')).review!.response!.status?.message).toContain(
      'UID mismatch',
    );
  });

  it("OriginPodNodeEnvironment judges a pod's named node by the loaded Nodes' labels", async () => {
    // old-project has no node-selector annotation: the default selector is its project selector.
    const config = originPodNodeEnvironment.configure!(
      { defaultNodeSelector: 'topology.kubernetes.io/zone=eu-west-1a' },
      { file: 'test', baseDir: '.' },
    );
    const invoke = lambdaFor(originPodNodeEnvironment, store, config);
    // The pod as the mutation leaves it (the project selector merged), so both phases judge the node.
    const onNode = (nodeName: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `on-${nodeName}`, namespace: 'old-project' },
      spec: {
        nodeName,
        nodeSelector: { 'topology.kubernetes.io/zone': 'eu-west-1a' },
        containers: [{ name: 'c', image: 'i' }],
      },
    });
    for (const phase of ['mutate', 'validate'] as const) {
      const inZone = (await invoke(phase, { object: onNode('worker-1') })).review!.response!;
      expect(inZone.allowed).toBe(true);
      expect(inZone.warnings).toBeUndefined();
      expect((await invoke(phase, { object: onNode('worker-2') })).review!.response!.status).toMatchObject({
        code: 403,
        message: 'pods "on-worker-2" is forbidden: pod node name conflicts with project node label selector',
      });
    }
  });

  it('a second run changes nothing it should not (idempotent)', async () => {
    const again = await sync([...fixture('namespaces.json'), ...fixture('pods.json')]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('pods: 3 counted in 4 namespaces\n');
  });

  it('an empty list is reported and loads nothing', async () => {
    const empty = await sync(fixture('empty.json'));
    expect(empty.code).toBe(0);
    expect(empty.stderr).toContain('empty.json: an empty list, nothing to load');
  });
});

describe('usage and failures', () => {
  it('--help prints the usage on stdout and exits 0', async () => {
    const help = await sync(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run sync -- --from FILE/);
  });

  it.each([
    [[], 'no --from FILE given'],
    [['--frm', 'x.json'], "Unknown option '--frm'"],
    [['namespaces.json'], 'unexpected argument "namespaces.json": name each file with --from'],
  ])('usage error %j: exit 2', async (argv, message) => {
    const result = await sync(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Usage: npm run sync');
  });

  it('a missing file, non-JSON, or an item without a kind: exit 1, nothing written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sync-'));
    try {
      writeFileSync(join(dir, 'bad.json'), 'NAME   STATUS   AGE\ndefault   Active   3d\n');
      writeFileSync(join(dir, 'nokind.json'), JSON.stringify({ kind: 'List', items: [{ metadata: { name: 'x' } }] }));
      store.reset();
      expect(await sync(['--from', join(dir, 'missing.json')])).toMatchObject({
        code: 1,
        stderr: expect.stringContaining('missing.json: no such file'),
      });
      expect(await sync([...fixture('namespaces.json'), '--from', join(dir, 'bad.json')])).toMatchObject({
        code: 1,
        stderr: expect.stringContaining('bad.json: not JSON'),
      });
      expect(await sync(['--from', join(dir, 'nokind.json')])).toMatchObject({
        code: 1,
        stderr: expect.stringContaining('nokind.json: items[0] has no kind'),
      });
      expect(store.writes()).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without DYNAMODB_ENDPOINT next to the local server's store: tells the user what to do, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sync-local-'));
    try {
      mkdirSync(join(dir, '.local', 'dynamodb'), { recursive: true });
      const result = await sync(fixture('namespaces.json'), {}, dir);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'Run sync while `npm start` runs, with DYNAMODB_ENDPOINT set to the endpoint it prints',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unreachable store: exit 1 with the store error', async () => {
    const result = await sync(fixture('namespaces.json'), {
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      STATE_TABLE: 'x',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^store: http:\/\/127\.0\.0\.1:9, table x\nsync: state store: /m);
  });

  it('as a process (npm run sync runs this file with tsx): a usage error exits 2', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'infra/sync/cli.ts'], {
      encoding: 'utf8',
      env: { ...process.env, DYNAMODB_ENDPOINT: store.endpoint },
    });
    expect(child.status).toBe(2);
    expect(child.stderr).toContain('sync: no --from FILE given');
  });
});
