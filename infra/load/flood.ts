// `npm run flood`: an abuse probe against the local server. While an apiserver-like client sends
// real reviews at a steady rate over kept-alive connections, a flood sends what an attacker can:
// in url-secret mode, requests of the right shape with capabilities that are not valid (each on a
// new TLS connection, the server's dearest work); in mTLS mode, TLS handshakes without a client
// certificate. It reports whether every real review was answered, their latency, and what became of
// the flood. Loopback only, bounded in time and in requests; it stops by itself.
//
// A fleet: `--cluster B` sends the real reviews to cluster B's URLs (and the flood of forged
// capabilities at them); `--flood-cluster A --cluster B` makes the flood cluster A's own valid
// reviews, as a runaway apiserver of A would send them, and reports B's p99 against B's webhook
// timeout and what became of A's flood (admitted within its fair share, or 429).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { capabilityFor, deploymentOfBaseUrl } from '../../lib/http/capability.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { DEFAULT_PKI_DIR, pkiFiles } from '../pki/pki.js';
import { clusterKeyFile, readDeploymentKey, urlSecretFile } from '../emit/url-secret.js';

export type FloodKind = 'wrong-capability' | 'no-certificate' | 'cluster';

export interface FloodOptions {
  /** https://127.0.0.1:PORT of the server; nothing but loopback is accepted. */
  readonly baseUrl: string;
  readonly caPem: string;
  /** The real reviews' path (with its capability in url-secret mode) and body. */
  readonly realPath: string;
  readonly realBody: string;
  /** mTLS: the apiserver's client certificate, for the real reviews only. */
  readonly client?: { readonly certPem: string; readonly keyPem: string };
  readonly flood: FloodKind;
  /** The flood's path shape in url-secret mode (its capability segment is replaced per request). */
  readonly floodPlugin?: string;
  /** A fleet: the cluster the real reviews are for (the forged flood is aimed at its URLs too). */
  readonly cluster?: string;
  /** `cluster` flood: another cluster's valid path (capability included), sent over kept-alive connections. */
  readonly floodPath?: string;
  /** The real webhook's timeoutSeconds: the report says whether their p99 stayed within it. */
  readonly timeoutSeconds?: number;
  /** Requests (or handshakes) per second the flood attempts, and real reviews per second. */
  readonly floodRate: number;
  readonly realRate: number;
  readonly seconds: number;
  /** The most flood requests in flight at once (a bound, not a target). */
  readonly floodConcurrency?: number;
}

export interface FloodReport {
  readonly seconds: number;
  readonly real: {
    readonly sent: number;
    readonly answered: number;
    readonly failed: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly maxMs: number;
    /** The webhook's timeoutSeconds in ms, and whether p99 stayed within it (when it was given). */
    readonly timeoutMs?: number;
    readonly withinTimeout?: boolean;
  };
  readonly flood: {
    readonly attempted: number;
    /** 403 (capability refused), or a handshake the server refused (no certificate). */
    readonly refused: number;
    /** Anything the server accepted: must be 0, except a `cluster` flood's requests within its share. */
    readonly accepted: number;
    /** A `cluster` flood: requests refused 429 because their cluster was over its fair share. */
    readonly throttled: number;
    /** Skipped because the bound on requests in flight was reached (the client's limit). */
    readonly skipped: number;
    readonly otherErrors: number;
  };
}

const LOOPBACK = /^https:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A capability-shaped path segment that no key made. */
const forgedCapability = () => randomBytes(64).toString('base64url');

export async function runFlood(options: FloodOptions): Promise<FloodReport> {
  if (!LOOPBACK.test(options.baseUrl)) throw new Error(`flood: ${options.baseUrl} is not a loopback address`);
  const url = new URL(options.baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const identity = options.client && { cert: options.client.certPem, key: options.client.keyPem };
  const realAgent = new Agent({ keepAlive: true, maxSockets: 4, ca: options.caPem, ...identity });
  const latencies: number[] = [];
  let realSent = 0;
  let realAnswered = 0;
  let realFailed = 0;
  let attempted = 0;
  let refused = 0;
  let accepted = 0;
  let throttled = 0;
  let skipped = 0;
  let otherErrors = 0;
  let inFlight = 0;
  const floodConcurrency = options.floodConcurrency ?? 64;
  // A runaway apiserver keeps its connections alive, as the real one does.
  const floodAgent =
    options.flood === 'cluster'
      ? new Agent({ keepAlive: true, maxSockets: floodConcurrency, ca: options.caPem })
      : undefined;
  if (options.flood === 'cluster' && options.floodPath === undefined)
    throw new Error('flood: a cluster flood needs the flooding cluster path (floodPath)');
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  function send(path: string, agent: Agent | false, withClient: boolean): Promise<{ status: number } | Error> {
    return new Promise((resolve) => {
      let req: ClientRequest;
      try {
        req = request(
          {
            host,
            port,
            path,
            method: 'POST',
            agent,
            ca: options.caPem,
            ...(withClient && identity),
            headers: { 'content-type': 'application/json' },
            timeout: 10_000,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
            res.on('error', (error) => resolve(error));
          },
        );
      } catch (error) {
        resolve(error as Error);
        return;
      }
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (error) => resolve(error));
      req.end(options.realBody);
    });
  }

  function real(): void {
    realSent++;
    const started = performance.now();
    track(
      send(options.realPath, realAgent, true).then((answer) => {
        if (answer instanceof Error || answer.status !== 200) realFailed++;
        else {
          realAnswered++;
          latencies.push(performance.now() - started);
        }
      }),
    );
  }

  function flood(): void {
    attempted++;
    if (inFlight >= floodConcurrency) {
      skipped++;
      return;
    }
    inFlight++;
    const clusterPrefix = options.cluster === undefined ? '' : `/${options.cluster}`;
    const path =
      options.flood === 'wrong-capability'
        ? `${clusterPrefix}/${forgedCapability()}/${options.floodPlugin ?? 'always-pull-images'}/validate`
        : options.flood === 'cluster'
          ? (options.floodPath as string)
          : options.realPath;
    // A new connection per request (every one costs the server a handshake), but a cluster's flood.
    track(
      send(path, floodAgent ?? false, false).then((answer) => {
        inFlight--;
        if (answer instanceof Error) {
          // mTLS: the server refuses the handshake of a client without a certificate.
          if (options.flood === 'no-certificate') refused++;
          else otherErrors++;
        } else if (answer.status === 403 || answer.status === 404) refused++;
        else if (answer.status === 429) throttled++;
        else if (answer.status === 200) accepted++;
        else otherErrors++;
      }),
    );
  }

  // Both streams on one 10 ms tick, each carrying its share of the rate (fractions accumulate).
  const tickMs = 10;
  const ticks = Math.round((options.seconds * 1000) / tickMs);
  let realDue = 0;
  let floodDue = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    let tick = 0;
    const timer = setInterval(() => {
      realDue += (options.realRate * tickMs) / 1000;
      floodDue += (options.floodRate * tickMs) / 1000;
      for (; realDue >= 1; realDue--) real();
      for (; floodDue >= 1; floodDue--) flood();
      if (++tick >= ticks) {
        clearInterval(timer);
        resolve();
      }
    }, tickMs);
  });
  await Promise.all([...pending]);
  realAgent.destroy();
  floodAgent?.destroy();
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  const p99Ms = round(percentile(sorted, 99));
  const timeoutMs = options.timeoutSeconds === undefined ? undefined : options.timeoutSeconds * 1000;
  return {
    seconds: round((performance.now() - started) / 1000),
    real: {
      sent: realSent,
      answered: realAnswered,
      failed: realFailed,
      p50Ms: round(percentile(sorted, 50)),
      p99Ms,
      maxMs: round(sorted[sorted.length - 1] ?? 0),
      ...(timeoutMs !== undefined && { timeoutMs, withinTimeout: sorted.length > 0 && p99Ms <= timeoutMs }),
    },
    flood: { attempted, refused, accepted, throttled, skipped, otherErrors },
  };
}

const USAGE = `Usage: npm run -s flood -- --url https://127.0.0.1:8443 [--auth mtls|url-secret]
                            [--seconds 10] [--rate 300] [--real-rate 20]
                            [--cluster NAME [--flood-cluster OTHER]]

Floods a running local server (npm start, or CALLER_AUTH=url-secret npm start) while an
apiserver-like client sends real AlwaysPullImages reviews, and prints a JSON report on stdout:
the real reviews' count, failures and latency (p50, p99, max), and what became of the flood.
  url-secret  the flood is requests with capabilities no key made, each on a new TLS connection;
              the real reviews use the capability emit would write (the key in URL_SECRET_FILE,
              default .local/url-secret)
  mtls        the flood is TLS handshakes without a client certificate; the real reviews present
              ${DEFAULT_PKI_DIR}/client.crt
A fleet (config/clusters/, url-secret):
  --cluster NAME         the real reviews (and the forged flood) go to cluster NAME's URLs, with the
                         capability emit --cluster NAME would write (.local/clusters/NAME/url-secret),
                         to AlwaysPullImages if NAME serves it, else its first validating plugin
  --flood-cluster OTHER  the flood is cluster OTHER's own valid reviews, as a runaway apiserver of
                         OTHER sends them over kept-alive connections; the report gives NAME's p99
                         against its webhook's timeoutSeconds (exit 1 above it) and OTHER's
                         requests admitted within its fair share and refused 429
Options:
  --seconds N     how long the flood and the probe run (default 10)
  --rate N        flood requests per second attempted (default 300; at most 64 in flight)
  --real-rate N   real reviews per second of the probe (default 20)
Loopback addresses only; it stops after --seconds.
`;

/** The plugin a cluster's probe reviews: AlwaysPullImages if served, else its first validating one. */
async function probedPlugin(cluster: string): Promise<{ name: string; timeoutSeconds: number }> {
  const { plugins } = await import('../../functions/index.js');
  const { activePlugins, loadPluginSet } = await import('../../lib/config/plugins.js');
  const { clusterEnv, fleetCluster } = await import('../../lib/config/fleet.js');
  const served = activePlugins(loadPluginSet(plugins, clusterEnv(fleetCluster(cluster)))).map((p) => p.plugin.metadata);
  const chosen =
    served.find((m) => m.name === 'always-pull-images' && m.validating) ?? served.find((m) => m.validating);
  if (chosen?.validating === undefined) throw new Error(`cluster ${cluster} serves no validating webhook to probe`);
  return { name: chosen.name, timeoutSeconds: chosen.validating.timeoutSeconds };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      auth: { type: 'string', default: 'mtls' },
      seconds: { type: 'string', default: '10' },
      rate: { type: 'string', default: '300' },
      'real-rate': { type: 'string', default: '20' },
      cluster: { type: 'string' },
      'flood-cluster': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(USAGE);
  if (values.url === undefined) throw new Error(`--url is required\n${USAGE}`);
  const cluster = values.cluster;
  const floodCluster = values['flood-cluster'];
  if (floodCluster !== undefined && cluster === undefined)
    throw new Error('--flood-cluster needs --cluster NAME: the cluster measured');
  if (cluster !== undefined && values.auth !== 'url-secret')
    throw new Error(
      "--cluster needs --auth url-secret: with mTLS each cluster's apiservers present their own certificate",
    );
  if (floodCluster !== undefined && floodCluster === cluster)
    throw new Error('--flood-cluster must name another cluster than --cluster');
  const files = pkiFiles(DEFAULT_PKI_DIR);
  const review = readFileSync(
    new URL('../../test/fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
    'utf8',
  );
  const baseUrl = values.url.replace(/\/+$/, '');
  const urlSecret = values.auth === 'url-secret';
  const probed =
    cluster === undefined ? { name: 'always-pull-images', timeoutSeconds: undefined } : await probedPlugin(cluster);
  const plugin = probed.name;
  /** The path emit would write for `name`'s `plugin` validate webhook (the single cluster's without a name). */
  const pathOf = (name: string | undefined, plugin: string) => {
    const key = readDeploymentKey(name === undefined ? urlSecretFile() : clusterKeyFile(name));
    const capability = capabilityFor(key, {
      deployment: deploymentOfBaseUrl(baseUrl),
      ...(name !== undefined && { cluster: name }),
      grant: { plugin, endpoint: 'validate' },
    });
    return formatWebhookPath({
      plugin,
      endpoint: 'validate',
      capability,
      ...(name !== undefined && { cluster: name }),
    });
  };
  const floodPath =
    floodCluster === undefined ? undefined : pathOf(floodCluster, (await probedPlugin(floodCluster)).name);
  const report = await runFlood({
    baseUrl,
    caPem: readFileSync(files.ca, 'utf8'),
    realPath: urlSecret ? pathOf(cluster, plugin) : formatWebhookPath({ plugin, endpoint: 'validate' }),
    realBody: review,
    ...(!urlSecret && {
      client: { certPem: readFileSync(files.clientCert, 'utf8'), keyPem: readFileSync(files.clientKey, 'utf8') },
    }),
    flood: floodPath !== undefined ? 'cluster' : urlSecret ? 'wrong-capability' : 'no-certificate',
    floodPlugin: plugin,
    ...(cluster !== undefined && { cluster }),
    ...(floodPath !== undefined && { floodPath }),
    ...(probed.timeoutSeconds !== undefined && { timeoutSeconds: probed.timeoutSeconds }),
    floodRate: Number(values.rate),
    realRate: Number(values['real-rate']),
    seconds: Number(values.seconds),
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const { real, flood } = report;
  const measured = cluster === undefined ? 'real reviews' : `cluster ${cluster}`;
  const within =
    real.timeoutMs === undefined
      ? ''
      : ` (webhook timeout ${real.timeoutMs} ms: ${real.withinTimeout ? 'within' : 'OVER'})`;
  process.stderr.write(
    floodCluster === undefined
      ? `${measured}: ${real.answered}/${real.sent} answered, p99 ${real.p99Ms} ms${within}; flood: ${flood.refused} refused, ${flood.accepted} accepted of ${flood.attempted}\n`
      : `${measured}: ${real.answered}/${real.sent} answered, p99 ${real.p99Ms} ms${within}; cluster ${floodCluster}'s flood: ${flood.accepted} admitted, ${flood.throttled} refused 429 (fair share), ${flood.skipped} not sent (client bound) of ${flood.attempted}\n`,
  );
  const floodFailed = floodCluster === undefined ? flood.accepted > 0 : flood.otherErrors > 0;
  if (real.failed > 0 || floodFailed || real.withinTimeout === false) process.exitCode = 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`flood: ${(error as Error).message}\n`);
    process.exitCode = 2;
  });
}
