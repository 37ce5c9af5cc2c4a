// One scheduled run of the deployed reader, between a loopback apiserver and DynamoDB Local: it
// lists, watches until its time is up, checkpoints, releases the lease and reports one EMF line;
// a run that finds the lease held reads nothing; the next run resumes from the checkpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReaderLease } from '../../lib/cluster/lease.js';
import { READER_METRIC, scheduledRun } from '../../lib/cluster/scheduled.js';
import { StateStore } from '../../lib/state/store.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import type { FakeApiserver } from '../support/fake-apiserver.js';
import { listPage, namespaceObject, startFakeApiserver, watchStream } from '../support/fake-apiserver.js';

let apiserver: FakeApiserver;
let table: TestStore;

beforeAll(async () => {
  apiserver = await startFakeApiserver();
  table = await testStore('scheduled-reader');
});
afterAll(async () => {
  table.close();
  await apiserver.close();
});

const run = (runId: string, lines: string[]) =>
  scheduledRun({
    credentials: {
      server: apiserver.url,
      ca: apiserver.ca,
      present: async () => ({ token: 'reader-token' }),
      invalidate: () => undefined,
    },
    plugins: [{ needs: ['namespaces'] }],
    dynamoDb: table.client,
    tableName: table.tableName,
    runId,
    watchMs: 1_500,
    emit: (line) => lines.push(line),
  });

describe('a scheduled run', () => {
  it('reads under the lease, reports, and the next run resumes from its checkpoint', async () => {
    apiserver.queue.push(
      listPage([namespaceObject('a', '5')], '10'),
      watchStream([{ type: 'MODIFIED', object: namespaceObject('a', '12') }]),
    );
    const lines: string[] = [];
    expect(await run('run-1', lines)).toEqual({ ran: true, kinds: ['namespaces'], lagSeconds: 0 });
    const report = JSON.parse(lines[0]);
    expect(report._aws.CloudWatchMetrics[0].Namespace).toBe('ServerlessAdmission');
    expect(report).toMatchObject({
      Service: 'cluster-reader',
      [READER_METRIC.lag]: 0,
      [READER_METRIC.relists]: 1,
      [READER_METRIC.errors]: 0,
      [READER_METRIC.events]: 1,
    });
    const lease = new ReaderLease(new StateStore(table.client, table.tableName, false), 'probe', 1);
    expect(await lease.heldBy()).toBeUndefined();

    apiserver.received.splice(0);
    expect((await run('run-2', [])).ran).toBe(true);
    expect(apiserver.received.map((r) => [r.watch, r.query.get('resourceVersion')])).toEqual([[true, '12']]);
  });

  it('reads nothing while another run holds the lease', async () => {
    const other = new ReaderLease(new StateStore(table.client, table.tableName, false), 'other-run', 60_000);
    expect(await other.acquire()).toBe(true);
    apiserver.received.splice(0);
    const lines: string[] = [];
    expect(await run('run-3', lines)).toEqual({ ran: false, reason: 'lease held' });
    expect(apiserver.received).toEqual([]);
    expect(lines).toEqual([]);
    await other.release();
  });
});
