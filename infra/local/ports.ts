// Ports for child processes that must be told theirs before they bind it (DynamoDB Local, etcd,
// kube-apiserver). The kernel's own choice (listen on port 0) is released before the child binds
// it, and it comes from the ephemeral range, which the kernel also hands to every outgoing
// connection: any connect() on the machine in between can take it. These ports come from below
// that range instead, never twice from one process, from a slice of their own per test worker,
// and each is checked free by binding it. A child that still loses the race says "address already
// in use"; `addressInUse` recognises that, so its starter can try again on another port.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;
const SLICES = 8;
/**
 * The ports at or above LOWEST on the Fetch standard's "bad ports" list: Node's fetch (undici)
 * refuses to connect to them, so a child told one would never answer a readiness probe.
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([10_080]);
const handedOut = new Set<number>();

/** The lowest port of the kernel's ephemeral range (Linux), or the IANA dynamic range's start. */
function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(low);
    return Number.isInteger(port) && port > LOWEST + SLICES * 100 ? port : 49_152;
  } catch {
    return 49_152;
  }
}

/** The candidate range of this process: its test worker's slice, or the whole range outside tests. */
export function portRange(
  env: NodeJS.ProcessEnv = process.env,
  top = ephemeralStart(),
): { readonly low: number; readonly high: number } {
  const worker = Number(env.VITEST_POOL_ID ?? env.VITEST_WORKER_ID);
  if (!Number.isInteger(worker) || worker < 1) return { low: LOWEST, high: top };
  const size = Math.floor((top - LOWEST) / SLICES);
  const low = LOWEST + ((worker - 1) % SLICES) * size;
  return { low, high: low + size };
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that nothing listens on now and that this process has not handed out. */
export async function freePort(range: { readonly low: number; readonly high: number } = portRange()): Promise<number> {
  const { low, high } = range;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || FETCH_BAD_PORTS.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${low} and ${high} after 200 tries`);
}

/** Whether a child's output says it could not bind its port. */
export function addressInUse(output: string): boolean {
  return /address already in use|BindException|Failed to bind/i.test(output);
}
