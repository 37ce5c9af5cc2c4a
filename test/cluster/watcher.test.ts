// The cluster reader's watcher between a loopback apiserver scripted request by request and the
// run's DynamoDB Local: a 410 Gone relists and removes what the relist no longer holds, a bookmark
// advances the stored resourceVersion (a new watcher resumes from it without listing), a watch
// connection dropped mid-stream resumes from the last resourceVersion seen, and a kind read for
// its metadata only is listed and watched as PartialObjectMetadata.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWatcher, readKinds } from '../../lib/cluster/index.js';
import type { ReadKind } from '../../lib/cluster/index.js';
import { ApiClient } from '../../lib/kube/api-client.js';
import type { ReaderMetrics } from '../../lib/metrics/index.js';
import { LearnedNamespaceStore } from '../../lib/state/namespaces.js';
import { StateStore, str } from '../../lib/state/store.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import type { FakeApiserver } from '../support/fake-apiserver.js';
import {
  listPage,
  namespaceObject,
  startFakeApiserver,
  status,
  until,
  watchStream,
} from '../support/fake-apiserver.js';

const NODE_SELECTOR = 'scheduler.alpha.kubernetes.io/node-selector';
const NAMESPACES = readKinds([{ needs: ['namespaces'] }]);

let apiserver: FakeApiserver;
let client: ApiClient;
let table: TestStore | undefined;
const running: ClusterWatcher[] = [];

beforeAll(async () => {
  apiserver = await startFakeApiserver();
  client = new ApiClient({
    server: apiserver.url,
    ca: apiserver.ca,
    present: async () => ({ token: 'reader-token' }),
    invalidate: () => undefined,
  });
});
afterAll(async () => {
  client.close();
  await apiserver.close();
});
afterEach(async () => {
  for (const watcher of running.splice(0)) await watcher.stop();
  apiserver.queue.splice(0);
  apiserver.received.splice(0);
  table?.close();
  table = undefined;
});

function countingMetrics() {
  const counts: Record<string, number> = {};
  const bump = (key: string) => {
    counts[key] = (counts[key] ?? 0) + 1;
  };
  const metrics: ReaderMetrics = {
    event: (resource, type) => bump(`event ${resource} ${type}`),
    relist: (resource) => bump(`relist ${resource}`),
    error: (resource, reason) => bump(`error ${resource} ${reason}`),
    lag: () => undefined,
  };
  return { counts, metrics };
}

async function watcherOver(name: string, kinds: readonly ReadKind[] = NAMESPACES, metrics?: ReaderMetrics) {
  // Each test its own table (a second watcher in the same test shares it, as a next run would).
  table ??= await testStore(name);
  const store = new StateStore(table.client, table.tableName, false);
  const watcher = new ClusterWatcher({ client, kinds, store, metrics, maxBackoffMs: 50 });
  running.push(watcher);
  void watcher.start();
  return { watcher, store, namespaces: new LearnedNamespaceStore(store) };
}

const watches = () => apiserver.received.filter((r) => r.watch);
const lists = () => apiserver.received.filter((r) => !r.watch);

describe('the watcher', () => {
  it('relists after 410 Gone and removes what the relist no longer holds', async () => {
    apiserver.queue.push(
      listPage([namespaceObject('a', '5'), namespaceObject('b', '6', { [NODE_SELECTOR]: 'pool=b' })], '10'),
      watchStream([
        {
          type: 'ERROR',
          object: {
            kind: 'Status',
            status: 'Failure',
            reason: 'Expired',
            code: 410,
            message: 'too old resource version',
          },
        },
      ]),
      listPage([namespaceObject('a', '5')], '20'),
    );
    const { counts, metrics } = countingMetrics();
    const { watcher, namespaces } = await watcherOver('cluster-watcher', NAMESPACES, metrics);
    await watcher.synchronized();
    await until('a watch from the relist', () => watches().some((r) => r.query.get('resourceVersion') === '20'));
    expect(watches().map((r) => r.query.get('resourceVersion'))).toEqual(['10', '20']);
    expect(lists()).toHaveLength(2);
    expect((await namespaces.get('a'))?.name).toBe('a');
    expect(await namespaces.get('b')).toBeUndefined();
    expect(await namespaces.knownAbsent('b')).toBe(true);
    expect(counts).toMatchObject({ 'relist namespaces': 2, 'error namespaces gone': 1 });
  });

  it('stores the resourceVersion a bookmark carries, and a new watcher resumes from it without listing', async () => {
    apiserver.queue.push(
      listPage([namespaceObject('a', '5')], '10'),
      watchStream(
        [{ type: 'BOOKMARK', object: { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: '15' } } }],
        'end',
      ),
    );
    const first = await watcherOver('cluster-watcher');
    await until('a watch from the bookmark', () => watches().length === 2);
    expect(watches().map((r) => r.query.get('resourceVersion'))).toEqual(['10', '15']);
    expect(str(await first.store.get('reader#namespaces', 'checkpoint'), 'resourceVersion')).toBe('15');
    await first.watcher.stop();

    apiserver.received.splice(0);
    const second = await watcherOver('cluster-watcher');
    await second.watcher.synchronized();
    await until('the second watcher watching', () => watches().length === 1);
    expect(lists()).toEqual([]);
    expect(watches()[0].query.get('resourceVersion')).toBe('15');
  });

  it('resumes a watch whose connection dropped from the last resourceVersion it saw', async () => {
    apiserver.queue.push(
      listPage([namespaceObject('a', '5')], '10'),
      watchStream([{ type: 'MODIFIED', object: namespaceObject('a', '12', { [NODE_SELECTOR]: 'pool=x' }) }], 'drop'),
    );
    const { namespaces } = await watcherOver('cluster-watcher');
    await until('a second watch', () => watches().length === 2);
    expect(watches().map((r) => r.query.get('resourceVersion'))).toEqual(['10', '12']);
    expect(lists()).toHaveLength(1);
    expect((await namespaces.get('a'))?.annotations).toEqual({ [NODE_SELECTOR]: 'pool=x' });
  });

  it('keeps trying while the apiserver answers 503, without listing again', async () => {
    apiserver.queue.push(
      listPage([namespaceObject('a', '5')], '10'),
      status(503, 'ServiceUnavailable', 'apiserver is shutting down'),
      watchStream([{ type: 'ADDED', object: namespaceObject('c', '13') }]),
    );
    const { namespaces } = await watcherOver('cluster-watcher');
    await until('c recorded', async () => (await namespaces.get('c')) !== undefined);
    expect(watches().map((r) => r.query.get('resourceVersion'))).toEqual(['10', '10']);
    expect(lists()).toHaveLength(1);
  });

  it('lists and watches a kind read for its metadata only as PartialObjectMetadata', async () => {
    const secrets = readKinds([{ needs: ['resourcequotas'] }]).filter((kind) => kind.name === 'secrets');
    expect(secrets).toHaveLength(1);
    expect(secrets[0].metadataOnly).toBe(true);
    apiserver.queue.push(listPage([], '10'));
    await watcherOver('cluster-watcher', secrets);
    await until('a watch', () => watches().length === 1);
    expect(apiserver.received.map((r) => [r.path, r.accept])).toEqual([
      ['/api/v1/secrets', 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'],
      ['/api/v1/secrets', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1'],
    ]);
  });
});
