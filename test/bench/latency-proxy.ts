// A loopback TCP proxy in front of DynamoDB Local that holds every byte the client sends for `ms`
// before passing it on: each store call then takes `ms` longer, whichever process sends it (the
// local server's own client included, which the in-process bench's withLatency wrapper cannot
// reach). Answers pass at once. Bytes keep their order: every chunk waits the same time, and
// Node fires timers of one duration in the order they were set.
import type { AddressInfo, Socket } from 'node:net';
import { connect, createServer } from 'node:net';

/** One store call as the proxy saw it: its operation, when it left the client, when its answer began. */
export interface TracedCall {
  readonly operation: string;
  readonly sentMs: number;
  readonly answeredMs: number;
}

export interface LatencyProxy {
  /** http://127.0.0.1:PORT, to use as DYNAMODB_ENDPOINT. */
  readonly endpoint: string;
  /** Calls traced since the last `take` (performance.now() times), when asked to trace. */
  take(): TracedCall[];
  close(): Promise<void>;
}

const TARGET = /x-amz-target: *DynamoDB_\d+\.(\w+)/i;

export async function latencyProxy(upstream: string, ms: number, trace = false): Promise<LatencyProxy> {
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  let traced: TracedCall[] = [];
  const server = createServer((client) => {
    const store = connect({ host: target.hostname, port: Number(target.port) });
    // One call at a time per connection (HTTP/1.1 without pipelining): a request's first bytes
    // name its operation, and the next bytes back begin its answer.
    let pending: { operation: string; sentMs: number } | undefined;
    if (trace) {
      client.on('data', (chunk: Buffer) => {
        const operation = TARGET.exec(chunk.toString('latin1', 0, Math.min(chunk.length, 2048)))?.[1];
        if (operation) pending = { operation, sentMs: performance.now() };
      });
      store.on('data', () => {
        if (pending) traced.push({ ...pending, answeredMs: performance.now() });
        pending = undefined;
      });
    }
    for (const socket of [client, store]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        store.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (ms <= 0) store.write(chunk);
      else setTimeout(() => store.writable && store.write(chunk), ms);
    });
    client.on('end', () => setTimeout(() => store.end(), ms));
    store.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    take: () => {
      const calls = traced;
      traced = [];
      return calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
