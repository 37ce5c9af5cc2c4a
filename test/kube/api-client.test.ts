// The cluster reader's API client against a loopback apiserver scripted page by page: a paged LIST
// follows continue tokens and keeps the first page's resourceVersion (the snapshot the pages
// belong to), metadata-only lists and watches ask for PartialObjectMetadata, and a watch's events
// arrive in order with a BOOKMARK's resourceVersion and an ERROR 410 as the Gone a relist needs.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../lib/kube/api-client.js';
import { ApiClient, ApiError } from '../../lib/kube/api-client.js';
import type { FakeApiserver } from '../support/fake-apiserver.js';
import { listPage, namespaceObject, startFakeApiserver, watchStream } from '../support/fake-apiserver.js';

let apiserver: FakeApiserver;
let client: ApiClient;

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
afterEach(() => {
  apiserver.queue.splice(0);
  apiserver.received.splice(0);
});

describe('LIST', () => {
  it('follows continue tokens to the last page and keeps the first page resourceVersion', async () => {
    apiserver.queue.push(
      listPage([namespaceObject('a', '7')], '10', 'token-1'),
      listPage([namespaceObject('b', '8')], '10', 'token-2'),
      listPage([namespaceObject('c', '9')], '10'),
    );
    const listed = await client.list('/api/v1/namespaces', { limit: 1 });
    expect(listed.items.map((o) => o.metadata?.name)).toEqual(['a', 'b', 'c']);
    expect(listed.resourceVersion).toBe('10');
    expect(apiserver.received.map((r) => [r.query.get('limit'), r.query.get('continue')])).toEqual([
      ['1', null],
      ['1', 'token-1'],
      ['1', 'token-2'],
    ]);
    expect(apiserver.received.map((r) => r.authorization)).toEqual(Array(3).fill('Bearer reader-token'));
  });

  it('asks for PartialObjectMetadata when only metadata is read, and for whole objects otherwise', async () => {
    apiserver.queue.push(listPage([], '3'), listPage([], '3'));
    await client.list('/api/v1/secrets', { metadataOnly: true });
    await client.list('/api/v1/namespaces');
    expect(apiserver.received.map((r) => r.accept)).toEqual([
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
      'application/json',
    ]);
  });

  it('an expired continue token is a 410 the caller lists again after', async () => {
    apiserver.queue.push(listPage([namespaceObject('a', '7')], '10', 'token-1'), (_request, response) => {
      response.writeHead(410, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Expired',
          code: 410,
          message: 'The provided continue parameter is too old',
        }),
      );
    });
    const refused = await client.list('/api/v1/namespaces', { limit: 1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).gone).toBe(true);
    expect((refused as ApiError).reason).toBe('Expired');
  });
});

describe('WATCH', () => {
  it('hands over events in order, a bookmark by its resourceVersion, from the resourceVersion asked', async () => {
    apiserver.queue.push(
      watchStream(
        [
          { type: 'ADDED', object: namespaceObject('a', '11') },
          { type: 'BOOKMARK', object: { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: '15' } } },
          { type: 'DELETED', object: namespaceObject('a', '16') },
        ],
        'end',
      ),
    );
    const events: WatchEvent[] = [];
    await client.watch(
      '/api/v1/namespaces',
      { resourceVersion: '10', timeoutSeconds: 30, metadataOnly: true },
      async (event) => {
        events.push(event);
      },
    );
    expect(
      events.map((e) =>
        e.type === 'BOOKMARK' ? `BOOKMARK ${e.resourceVersion}` : `${e.type} ${e.object.metadata?.resourceVersion}`,
      ),
    ).toEqual(['ADDED 11', 'BOOKMARK 15', 'DELETED 16']);
    const [asked] = apiserver.received;
    expect(Object.fromEntries(asked.query)).toEqual({
      watch: '1',
      resourceVersion: '10',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '30',
    });
    expect(asked.accept).toBe('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1');
  });

  it('an ERROR event of 410 ends the watch as Gone', async () => {
    apiserver.queue.push(
      watchStream([
        {
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Expired',
            code: 410,
            message: 'too old resource version: 10 (20)',
          },
        },
      ]),
    );
    const failed = await client
      .watch('/api/v1/namespaces', { resourceVersion: '10', timeoutSeconds: 30 }, async () => undefined)
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ApiError);
    expect((failed as ApiError).gone).toBe(true);
    expect((failed as ApiError).message).toContain('too old resource version');
  });

  it('a connection dropped mid-stream is a failure, after the events that arrived', async () => {
    apiserver.queue.push(watchStream([{ type: 'MODIFIED', object: namespaceObject('a', '12') }], 'drop'));
    const events: WatchEvent[] = [];
    const failed = await client
      .watch('/api/v1/namespaces', { resourceVersion: '10', timeoutSeconds: 30 }, async (event) => {
        events.push(event);
      })
      .catch((error: unknown) => error);
    expect(events.map((e) => e.type)).toEqual(['MODIFIED']);
    expect(failed).toBeInstanceOf(ApiError);
    expect((failed as ApiError).status).toBe(0);
  });
});
