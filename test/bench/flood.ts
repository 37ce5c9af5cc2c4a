// The abuse probe on the path a request takes: npm start as a child process, flooded for 10 s by
// infra/load/flood.ts (url-secret: capabilities no key made, each on a new TLS connection; mTLS:
// handshakes without a certificate) while an apiserver-like client sends 20 real reviews a
// second. The figure that matters is the real reviews' p99 beside the webhook's timeout (3 s), and
// that none failed; the same client without a flood is the floor.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TIMEOUT_SECONDS } from '../../lib/admission/plugin.js';
import { capabilityFor, deploymentOfBaseUrl } from '../../lib/http/capability.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import type { FloodKind, FloodReport } from '../../infra/load/flood.js';
import { runFlood } from '../../infra/load/flood.js';
import { startLocalServerProcess } from './local-server-process.js';

export interface FloodRow {
  readonly mode: string;
  readonly flood: string;
  readonly 'flood attempted/s': number;
  readonly 'flood refused': number;
  readonly 'flood accepted': number;
  readonly 'real sent': number;
  readonly 'real failed': number;
  readonly 'real p50 ms': number;
  readonly 'real p99 ms': number;
  readonly 'real max ms': number;
  readonly 'timeout ms': number;
}

const PLUGIN = 'always-pull-images';

export async function benchFlood(options: { seconds?: number; floodRate?: number } = {}): Promise<FloodRow[]> {
  const seconds = options.seconds ?? 10;
  const floodRate = options.floodRate ?? 300;
  const review = readFileSync('test/fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', 'utf8');
  const db = await startEmbeddedDynamoDb({});
  const dir = mkdtempSync(join(tmpdir(), 'bench-flood-'));
  const keyFile = join(dir, 'url-secret');
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  const rows: FloodRow[] = [];
  try {
    for (const mode of ['url-secret', 'mtls'] as const) {
      const server = await startLocalServerProcess({
        endpoint: db.endpoint,
        logDir: `.local/bench/flood-${mode}`,
        env: { CALLER_AUTH: mode, URL_SECRET_FILE: keyFile },
      });
      try {
        const { caPem, certPem, keyPem } = server.identity;
        const capability =
          mode === 'url-secret'
            ? capabilityFor(privateKey, {
                deployment: deploymentOfBaseUrl(server.url),
                grant: { plugin: PLUGIN, endpoint: 'validate' },
              })
            : undefined;
        const kind: FloodKind = mode === 'url-secret' ? 'wrong-capability' : 'no-certificate';
        const run = (rate: number): Promise<FloodReport> =>
          runFlood({
            baseUrl: server.url,
            caPem,
            realPath: formatWebhookPath({ plugin: PLUGIN, endpoint: 'validate', ...(capability && { capability }) }),
            realBody: review,
            ...(mode === 'mtls' && { client: { certPem, keyPem } }),
            flood: kind,
            floodPlugin: PLUGIN,
            floodRate: rate,
            realRate: 20,
            seconds,
          });
        await run(0); // warm-up, and the floor: the same client, no flood
        for (const rate of [0, floodRate]) {
          const report = await run(rate);
          rows.push({
            mode,
            flood: rate === 0 ? 'none (floor)' : kind,
            'flood attempted/s': Math.round(report.flood.attempted / report.seconds),
            'flood refused': report.flood.refused,
            'flood accepted': report.flood.accepted,
            'real sent': report.real.sent,
            'real failed': report.real.failed,
            'real p50 ms': report.real.p50Ms,
            'real p99 ms': report.real.p99Ms,
            'real max ms': report.real.maxMs,
            'timeout ms': DEFAULT_TIMEOUT_SECONDS * 1000,
          });
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.stop();
  }
  return rows;
}
