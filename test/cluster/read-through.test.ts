// Store misses read from the apiserver, as upstream's plugins GET on an informer miss: one object
// by name, of a kind the reader reads (its RBAC grants nothing else), trimmed as the watcher would
// record it; a 404 is absent; an apiserver that cannot answer leaves the never-seen answer; a
// burst of misses for one name is one GET. Lists never read through.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterReadThrough, readKinds } from '../../lib/cluster/index.js';
import { ApiClient } from '../../lib/kube/api-client.js';
import { LearnedObjectStore } from '../../lib/state/learned-objects.js';
import { LearnedNamespaceStore } from '../../lib/state/namespaces.js';
import { StateStore } from '../../lib/state/store.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import type { FakeApiserver } from '../support/fake-apiserver.js';
import { answer, namespaceObject, startFakeApiserver, status } from '../support/fake-apiserver.js';

let apiserver: FakeApiserver;
let client: ApiClient;
let table: TestStore;

beforeAll(async () => {
  apiserver = await startFakeApiserver();
  client = new ApiClient({
    server: apiserver.url,
    ca: apiserver.ca,
    present: async () => ({ token: 'reader-token' }),
    invalidate: () => undefined,
  });
  table = await testStore('read-through');
});
afterAll(async () => {
  table.close();
  client.close();
  await apiserver.close();
});
afterEach(() => {
  apiserver.queue.splice(0);
  apiserver.received.splice(0);
});

const KINDS = readKinds([{ needs: ['priorityclasses', 'limitranges', 'namespaces'] }]);

function stores() {
  const readThrough = clusterReadThrough(client, KINDS);
  const store = new StateStore(table.client, table.tableName, false);
  return {
    objects: new LearnedObjectStore(store, readThrough.object),
    namespaces: new LearnedNamespaceStore(store, readThrough.namespace),
  };
}

const priorityClass = {
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name: 'high', uid: 'u1', resourceVersion: '9', managedFields: [{ manager: 'kubectl' }] },
  value: 1000,
  globalDefault: false,
};

describe('read-through', () => {
  it('GETs a class the store does not hold, once for a burst, trimmed as it would be recorded', async () => {
    apiserver.queue.push(answer(200, priorityClass));
    const { objects } = stores();
    const [first, second] = await Promise.all([
      objects.get('priorityclasses', 'high'),
      objects.get('priorityclasses', 'high'),
    ]);
    expect(apiserver.received.map((r) => r.path)).toEqual(['/apis/scheduling.k8s.io/v1/priorityclasses/high']);
    expect(first?.object).toMatchObject({ kind: 'PriorityClass', value: 1000, metadata: { name: 'high' } });
    expect(first?.object.metadata).not.toHaveProperty('managedFields');
    expect(second).toEqual(first);
  });

  it('GETs a namespaced object in its namespace', async () => {
    apiserver.queue.push(
      answer(200, {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'defaults', namespace: 'team-a' },
        spec: { limits: [] },
      }),
    );
    const read = await stores().objects.get('limitranges', 'defaults', 'team-a');
    expect(apiserver.received.map((r) => r.path)).toEqual(['/api/v1/namespaces/team-a/limitranges/defaults']);
    expect(read).toMatchObject({ name: 'defaults', namespace: 'team-a' });
  });

  it('a 404 is absent, and an apiserver that cannot answer leaves the never-seen answer', async () => {
    apiserver.queue.push(status(404, 'NotFound', 'not found'), status(503, 'ServiceUnavailable', 'down'));
    const { objects } = stores();
    expect(await objects.get('priorityclasses', 'missing')).toBeUndefined();
    expect(await objects.get('priorityclasses', 'unreachable')).toBeUndefined();
    expect(apiserver.received).toHaveLength(2);
  });

  it('reads no kind the reader does not read, and never a list', async () => {
    const { objects } = stores();
    expect(await objects.get('runtimeclasses', 'gvisor')).toBeUndefined();
    expect(await objects.list('priorityclasses')).toEqual([]);
    expect(apiserver.received).toEqual([]);
  });

  it('reads a namespace through the same path', async () => {
    apiserver.queue.push(answer(200, namespaceObject('fresh', '3', { team: 'a' })));
    const read = await stores().namespaces.get('fresh');
    expect(apiserver.received.map((r) => r.path)).toEqual(['/api/v1/namespaces/fresh']);
    expect(read).toMatchObject({ name: 'fresh', annotations: { team: 'a' }, phase: 'Active' });
  });
});
