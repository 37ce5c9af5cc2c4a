// Ports handed to child processes: below the kernel's ephemeral range (where every outgoing
// connection takes its local port), a slice per test worker, never twice; and the bind failure a
// child reports when it loses the race anyway is recognised, so its starter tries another port.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { addressInUse, FETCH_BAD_PORTS, freePort, portRange } from '../../infra/local/ports.js';

describe('portRange', () => {
  it('gives each of eight test workers its own slice below the ephemeral range', () => {
    const slices = [1, 2, 3, 4, 5, 6, 7, 8].map((id) => portRange({ VITEST_POOL_ID: String(id) }, 32_768));
    for (const slice of slices) {
      expect(slice.low).toBeGreaterThanOrEqual(10_000);
      expect(slice.high).toBeLessThanOrEqual(32_768);
    }
    for (let i = 1; i < slices.length; i++) expect(slices[i]?.low).toBeGreaterThanOrEqual(slices[i - 1]?.high ?? 0);
    expect(portRange({ VITEST_POOL_ID: '9' }, 32_768)).toEqual(slices[0]);
  });

  it('uses the whole range outside a test worker', () => {
    expect(portRange({}, 32_768)).toEqual({ low: 10_000, high: 32_768 });
  });
});

describe('freePort', () => {
  it('hands out distinct ports inside its range that nothing listens on', async () => {
    const { low, high } = portRange();
    const ports: number[] = [];
    for (let i = 0; i < 20; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(low);
      expect(port).toBeLessThan(high);
    }
  });
});

describe('the ports fetch refuses', () => {
  it('are never handed out: a readiness probe by fetch could not reach them', async () => {
    // Node's fetch refuses the Fetch standard's bad ports before it connects (a closed port would
    // be ECONNREFUSED instead).
    for (const port of FETCH_BAD_PORTS)
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toMatchObject({ cause: { message: 'bad port' } });
    // A range holding 10080 and one other port: only the other comes out.
    const port = await freePort({ low: 10_080, high: 10_082 });
    expect(port).toBe(10_081);
  });
});

describe('a child that loses the race for its port', () => {
  const held: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    // The store's readiness probe may have connected to the held port: close that too.
    for (const socket of sockets) socket.destroy();
    await Promise.all(held.map((server) => new Promise((done) => server.close(done))));
  });

  it("is recognised by its own words (DynamoDB Local's, etcd's, the apiserver's)", async () => {
    const port = await freePort();
    const server = createServer((socket) => sockets.push(socket));
    held.push(server);
    await new Promise<void>((listening) => server.listen(port, '0.0.0.0', () => listening()));
    const failure = await startEmbeddedDynamoDb({ port, readyWithinMs: 60_000 }).then(
      async (store) => {
        await store.stop();
        return 'started';
      },
      (error: unknown) => String(error),
    );
    expect(failure).not.toBe('started');
    expect(addressInUse(failure)).toBe(true);
    expect(
      addressInUse(
        'err="failed to create listener: failed to listen on 127.0.0.1:38117: listen tcp 127.0.0.1:38117: bind: address already in use"',
      ),
    ).toBe(true);
    expect(addressInUse('DynamoDB Local exited with 1: Unable to access jarfile')).toBe(false);
  });
});
