// The deployed reader's lease on the run's DynamoDB Local: one holder at a time, taken again by the
// same holder, free once released or lapsed, and a release by a run whose lease lapsed and was
// taken leaves the new holder's lease alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReaderLease } from '../../lib/cluster/lease.js';
import { StateStore } from '../../lib/state/store.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';

let table: TestStore;
let clock = 1_000_000;
const lease = (holder: string) =>
  new ReaderLease(new StateStore(table.client, table.tableName, false, () => clock), holder, 90_000);

beforeAll(async () => {
  table = await testStore('reader-lease');
});
afterAll(() => table.close());

describe('the reader lease', () => {
  it('has one holder at a time, until released', async () => {
    const a = lease('run-a');
    const b = lease('run-b');
    expect(await a.acquire()).toBe(true);
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    expect(await a.heldBy()).toBe('run-a');
    await b.release();
    expect(await a.heldBy()).toBe('run-a');
    await a.release();
    expect(await b.acquire()).toBe(true);
    await b.release();
  });

  it('lapses, and a late release of a lapsed lease leaves the next holder alone', async () => {
    const a = lease('run-c');
    const b = lease('run-d');
    expect(await a.acquire()).toBe(true);
    clock += 89_000;
    expect(await b.acquire()).toBe(false);
    clock += 2_000;
    expect(await b.acquire()).toBe(true);
    await a.release();
    expect(await b.heldBy()).toBe('run-d');
    expect(await a.acquire()).toBe(false);
  });
});
