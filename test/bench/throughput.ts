// Throughput through the path a request takes: `npm start` in its own process (the request log
// on, into a file, as a user runs it; and once more with LOG_LEVEL=silent), AlwaysPullImages'
// mutate webhook, 16 keep-alive mTLS connections from autocannon, against the floor: a bare Node
// https server with the same mTLS settings that parses the review and answers a fixed body
// (floor-server.ts). Rounds alternate so drift on a shared machine hits every target alike.
// Each round also reads the server's CPU time (/proc) per request, and the load generator's: the
// generator is not the bottleneck when it spends less per request than the floor server does.
// Between rounds the same handler is timed in this process, without the server around it, beside
// the floor's own work (parse the review, write the fixed answer): with the log's share (on minus
// off), that splits the gap to the floor into the request log, the handler and the rest of the path.
// With `cpuProf`, one more `npm start` (the log on) runs under --cpu-prof after the rounds and the
// summary of its profile (cpu-profile.ts) says where its time went.
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import alwaysPullImages from '../../functions/always-pull-images/plugin.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { pluginMetrics } from '../../lib/metrics/index.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import type { ProfileSummary } from './cpu-profile.js';
import { readProfile, summarizeProfile } from './cpu-profile.js';
import type { LocalServerProcess } from './local-server-process.js';
import { processCpuSeconds, startLocalServerProcess } from './local-server-process.js';
import { capturedPodReview } from './samples.js';
import { median, round, spread, timeEach } from './stats.js';

export interface ThroughputRound {
  readonly target: string;
  readonly requests: number;
  readonly 'req/s': number;
  readonly 'p50 ms': number;
  readonly 'p99 ms': number;
  readonly errors: number;
  /** The server process's user + system CPU per request. */
  readonly 'server cpu µs/req': number;
  /** Its CPU seconds per second of the round: 1 is one core, all a Node server can use. */
  readonly 'server cpu use': number;
  /** The load generator's (this process's) CPU per request. */
  readonly 'client cpu µs/req': number;
}

interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
}

async function startFloor(): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/floor-server.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return {
    url: (JSON.parse(line) as { url: string }).url,
    pid: child.pid ?? 0,
    stop: () => {
      child.stdin!.end();
      child.kill();
    },
  };
}

async function drive(
  target: Target,
  tlsOptions: Record<string, string>,
  connections: number,
  seconds: number,
): Promise<ThroughputRound> {
  const serverCpu = processCpuSeconds(target.pid);
  const clientCpu = process.cpuUsage();
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    body: capturedPodReview,
    headers: { 'content-type': 'application/json' },
    connections,
    duration: seconds,
    tlsOptions,
  });
  const server = processCpuSeconds(target.pid) - serverCpu;
  const client = process.cpuUsage(clientCpu);
  const requests = Math.max(1, result.requests.total);
  return {
    target: target.name,
    requests: result.requests.total,
    'req/s': round(result.requests.total / seconds, 0),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    'server cpu µs/req': round((server * 1e6) / requests, 1),
    'server cpu use': round(server / seconds, 2),
    'client cpu µs/req': round((client.user + client.system) / requests, 1),
  };
}

const PATH = '/always-pull-images/mutate?timeout=10s';

/**
 * The handler `npm start` serves here, timed in this process as the server calls it (Prometheus
 * counters, the log off: run.ts silences it), and the floor server's own work on the same review.
 */
function inProcess(iterations = 2000) {
  const handler = createAdmissionHandler(alwaysPullImages, {
    config: undefined,
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    metrics: pluginMetrics(alwaysPullImages.metadata.name, 'prometheus'),
  });
  const event = gatewayEvent(PATH.split('?')[0], capturedPodReview);
  return {
    handler: async () => {
      const { statusCode } = await handler(event, lambdaContext);
      if (statusCode !== 200) throw new Error(`the handler answered ${statusCode} on the bench's review`);
      return (await timeEach(() => handler(event, lambdaContext), iterations)).p50;
    },
    floor: async () =>
      (
        await timeEach(() => {
          const review = JSON.parse(capturedPodReview);
          return JSON.stringify({
            apiVersion: review.apiVersion,
            kind: 'AdmissionReview',
            response: { uid: review.request.uid, allowed: true },
          });
        }, iterations)
      ).p50,
  };
}

export interface ThroughputProfile extends ProfileSummary {
  /** The .cpuprofile written, for Chrome's DevTools or `npx tsx test/bench/cpu-profile.ts FILE`. */
  readonly file: string;
  readonly 'requests profiled': number;
  /** The profiled server's CPU per request (the profiler's own cost included). */
  readonly 'server cpu µs/req': number;
}

/**
 * `npm start` (the log on) under --cpu-prof for `seconds`, after a second's warm-up; the profile
 * counts from the first request (not the server's start-up), per request served.
 */
async function profileNpmStart(
  endpoint: string,
  tls: Record<string, string>,
  connections: number,
  seconds: number,
): Promise<ThroughputProfile> {
  const dir = '.local/bench/throughput-profile';
  rmSync(dir, { recursive: true, force: true });
  const server = await startLocalServerProcess({
    endpoint,
    logDir: join(dir, 'log'),
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir],
  });
  const target = { name: 'npm start, profiled', url: `${server.url}${PATH}`, pid: server.pid };
  let requests = 0;
  let cpu: number;
  try {
    requests += (await drive(target, tls, connections, 1)).requests;
    const round = await drive(target, tls, connections, seconds);
    requests += round.requests;
    cpu = round['server cpu µs/req'];
  } finally {
    await server.stop(); // SIGTERM: the server exits, and Node writes the profile as it does
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`npm start wrote no CPU profile into ${dir}`);
  const path = join(dir, file);
  // From the first request the server answered: its start-up is not what it spends under load.
  const summary = summarizeProfile(readProfile(path), { top: 12, from: ' sendReadyAnswers', requests });
  return { file: path, 'requests profiled': requests, 'server cpu µs/req': cpu, ...summary };
}

export async function benchThroughput(
  options: { connections?: number; seconds?: number; rounds?: number; cpuProf?: boolean } = {},
): Promise<{ rounds: ThroughputRound[]; summary: Record<string, unknown>; profile?: ThroughputProfile }> {
  const connections = options.connections ?? 16;
  const seconds = options.seconds ?? 4;
  const alone = inProcess();
  // npm start needs a store to start; AlwaysPullImages never calls it.
  const db = await startEmbeddedDynamoDb({});
  const servers: LocalServerProcess[] = [];
  let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
  try {
    servers.push(await startLocalServerProcess({ endpoint: db.endpoint, logDir: '.local/bench/throughput' }));
    servers.push(
      await startLocalServerProcess({
        endpoint: db.endpoint,
        logDir: '.local/bench/throughput-silent',
        env: { LOG_LEVEL: 'silent' },
      }),
    );
    floor = await startFloor();
    const targets: Target[] = [
      { name: 'npm start', url: `${servers[0].url}${PATH}`, pid: servers[0].pid },
      { name: 'npm start, log off', url: `${servers[1].url}${PATH}`, pid: servers[1].pid },
      { name: 'floor server', url: floor.url, pid: floor.pid },
    ];
    const { caPem, certPem, keyPem } = servers[0].identity;
    const tls = { ca: caPem, cert: certPem, key: keyPem };
    for (const target of targets) await drive(target, tls, connections, 1); // warm-up
    const rounds: ThroughputRound[] = [];
    const handlerAlone: number[] = [];
    const floorAlone: number[] = [];
    for (let i = 0; i < (options.rounds ?? 4); i++) {
      for (const target of targets) rounds.push(await drive(target, tls, connections, seconds));
      handlerAlone.push(await alone.handler());
      floorAlone.push(await alone.floor());
    }
    const of = (name: string) => rounds.filter((r) => r.target === name);
    const rate = (name: string) => of(name).reduce((s, r) => s + r.requests, 0) / (of(name).length * seconds);
    // Medians of an even number of rounds are means of two: rounded as the rounds are.
    const cpu = (name: string) => round(median(of(name).map((r) => r['server cpu µs/req'])), 1);
    const ratios = (name: string) =>
      spread(of(name).map((r, i) => r['req/s'] / Math.max(1, of('floor server')[i]['req/s'])));
    const shipped = ratios('npm start');
    const silent = ratios('npm start, log off');
    // The gap to the floor, in CPU per request, split by what the same run measured apart: the
    // request log (on minus off), the handler beyond the floor's own work (both timed alone, warm,
    // so under load they cost more, and the rest absorbs that), and the rest of the path (the API
    // Gateway event and Lambda context, the answers' writes, HTTP and TLS beyond the floor's).
    const requestLog = cpu('npm start') - cpu('npm start, log off');
    const handler = median(handlerAlone) - median(floorAlone);
    const rest = cpu('npm start, log off') - cpu('floor server') - handler;
    const summary = {
      connections,
      rounds: of('npm start').length,
      'npm start req/s': round(rate('npm start'), 0),
      'log off req/s': round(rate('npm start, log off'), 0),
      'floor req/s': round(rate('floor server'), 0),
      'throughput ratio': round(rate('npm start') / rate('floor server'), 2),
      'ratio, median of rounds': round(shipped.median, 2),
      'ratio spread': `${round(shipped.min, 2)}–${round(shipped.max, 2)}`,
      'log off ratio, median of rounds': round(silent.median, 2),
      'npm start cpu µs/req': cpu('npm start'),
      'log off cpu µs/req': cpu('npm start, log off'),
      'floor cpu µs/req': cpu('floor server'),
      'cpu ratio (floor / npm start)': round(cpu('floor server') / cpu('npm start'), 2),
      'handler alone µs/req': round(median(handlerAlone), 1),
      'floor work alone µs/req': round(median(floorAlone), 1),
      'gap cpu µs/req': round(cpu('npm start') - cpu('floor server'), 1),
      'gap: request log µs/req': round(requestLog, 1),
      'gap: handler µs/req': round(handler, 1),
      'gap: rest of the path µs/req': round(rest, 1),
      'floor server cpu use': round(median(of('floor server').map((r) => r['server cpu use'])), 2),
      'client cpu µs/req at the floor': round(median(of('floor server').map((r) => r['client cpu µs/req'])), 1),
      'npm start p99 ms': Math.max(...of('npm start').map((r) => r['p99 ms'])),
      'floor p99 ms': Math.max(...of('floor server').map((r) => r['p99 ms'])),
      errors: rounds.reduce((s, r) => s + r.errors, 0),
    };
    const profile = options.cpuProf ? await profileNpmStart(db.endpoint, tls, connections, seconds) : undefined;
    return { rounds, summary, ...(profile && { profile }) };
  } finally {
    floor?.stop();
    for (const server of servers) await server.stop();
    await db.stop();
  }
}
