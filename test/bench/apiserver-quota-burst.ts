// The quota burst through a real kube-apiserver: 64 concurrent pod creates (real ones: a quota
// counts what is stored) into a namespace whose ResourceQuota says `pods: 32`, once with the
// resource-quota webhooks served by `npm start` (the apiserver's own ResourceQuota switched off,
// so the webhook alone counts) and once with the built-in ResourceQuota (and the controller-manager
// that fills a quota's status, which the built-in needs before it admits anything). Each round
// has a fresh namespace; exactly 32 admitted is checked every round, and the bench fails otherwise.
// The floor, in the same rounds on the webhooks' apiserver: the same 64 creates at once, each into
// a namespace of its own with the same quota, so every create is admitted and nothing coordinates
// them, while everything else a create pays is there (the apiserver's calls to the webhooks, their
// connections, the server's work, the store calls, the writes to etcd): the burst's p99 against
// the floor's is what counting the namespace's creates together costs.
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import type { ControlPlane } from '../e2e/support/control-plane.js';
import { startControlPlane } from '../e2e/support/control-plane.js';
import { eventually, get, pod } from '../e2e/support/kube.js';
import { namespaceWithAccount } from '../e2e/support/same-answer.js';
import { startWebhookCluster } from '../e2e/support/webhook-cluster.js';
import { histogramOf, minus, quantile, roundRatios } from './prometheus.js';
import { distribution, median, round } from './stats.js';

const CONFIG =
  'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  - name: ResourceQuota\n';
const BURST = 64;
const LIMIT = 32;

type Figures = Record<string, number>;

/** A namespace with its `default` ServiceAccount and a `pods: 32` quota (with its status, where asked). */
async function quotaNamespace(cluster: ControlPlane, namespace: string, waitForStatus: boolean): Promise<void> {
  await namespaceWithAccount(cluster, namespace);
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'pods', namespace },
    spec: { hard: { pods: String(LIMIT) } },
  };
  const made = await cluster.request('POST', `/api/v1/namespaces/${namespace}/resourcequotas`, quota);
  if (made.status !== 201) throw new Error(`quota in ${namespace}: ${made.status} ${made.body}`);
  if (waitForStatus)
    await eventually(`quota in ${namespace} has its status`, async () => {
      const stored = await get(cluster, quota);
      return (stored?.status as { hard?: { pods?: string } } | undefined)?.hard?.pods === String(LIMIT)
        ? true
        : undefined;
    });
}

async function burstRound(
  cluster: ControlPlane,
  namespace: string,
  waitForStatus: boolean,
  warmUp: boolean,
  own: [string, (l: Record<string, string>) => boolean],
  /** The floor: each create into a namespace of its own (`<namespace>-<i>`), all admitted. */
  uncoordinated = false,
): Promise<Figures> {
  const namespaces = Array.from({ length: BURST }, (_, i) => (uncoordinated ? `${namespace}-${i}` : namespace));
  // Eight at a time: a set-up of 64 namespaces at once would crowd the apiserver before the burst.
  const distinct = [...new Set(namespaces)];
  for (let i = 0; i < distinct.length; i += 8)
    await Promise.all(distinct.slice(i, i + 8).map((n) => quotaNamespace(cluster, n, waitForStatus)));
  const scrape = async () => (await cluster.request('GET', '/metrics')).body;
  const before = await scrape();
  const burstStart = process.hrtime.bigint();
  const answers = await Promise.all(
    namespaces.map(async (namespace, i) => {
      const answer = await cluster.request('POST', `/api/v1/namespaces/${namespace}/pods`, pod(namespace, `p-${i}`));
      return {
        status: answer.status,
        message: answer.status === 201 ? '' : answer.body.slice(0, 300),
        ms: Number(process.hrtime.bigint() - burstStart) / 1e6,
      };
    }),
  );
  const after = await scrape();
  const admitted = answers.filter((a) => a.status === 201).length;
  const refused = answers.filter((a) => a.status === 403).length;
  if (!warmUp && uncoordinated && admitted !== BURST)
    throw new Error(
      `quota burst floor in ${namespace}-*: ${admitted} of ${BURST} admitted, each alone in its namespace: ${[...new Set(answers.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.message}`))].slice(0, 3).join(' | ')}`,
    );
  if (!warmUp && !uncoordinated && (admitted !== LIMIT || refused !== BURST - LIMIT))
    throw new Error(
      `quota burst in ${namespace}: ${admitted} admitted and ${refused} refused of ${BURST}; expected exactly ${LIMIT} admitted; others: ${[...new Set(answers.filter((a) => a.status !== 201 && a.status !== 403).map((a) => `${a.status} ${a.message}`))].slice(0, 3).join(' | ')}`,
    );
  const latency = distribution(answers.map((a) => a.ms));
  const [metric, match] = own;
  const histogram = minus(histogramOf(after, metric, match), histogramOf(before, metric, match));
  return {
    admitted,
    'client p50 ms': latency.p50,
    'client p99 ms': latency.p99,
    'own p99 ms (buckets)': quantile(0.99, histogram) * 1000,
    'own mean ms': (histogram.sum / Math.max(1, histogram.count)) * 1000,
  };
}

export async function benchApiserverQuotaBurst(
  rounds: number,
): Promise<{ rows: Record<string, unknown>[]; summary: Record<string, unknown> }> {
  const store = await startEmbeddedDynamoDb({});
  const started: { stop(): Promise<void> }[] = [];
  try {
    const webhooks = await startWebhookCluster({
      admissionConfiguration: CONFIG,
      dynamodbEndpoint: store.endpoint,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['ResourceQuota'] },
    });
    started.push(webhooks);
    const builtIn = await startControlPlane({ admissionConfiguration: CONFIG });
    started.push(builtIn);
    const paths = [
      {
        path: 'webhook mTLS',
        cluster: webhooks.cluster,
        waitForStatus: false,
        own: [
          'apiserver_admission_webhook_admission_duration_seconds',
          (l: Record<string, string>) => l.name?.startsWith('resource-quota.') && l.operation === 'CREATE',
        ],
      },
      {
        path: 'webhook mTLS, uncoordinated (floor)',
        cluster: webhooks.cluster,
        waitForStatus: false,
        uncoordinated: true,
        own: [
          'apiserver_admission_webhook_admission_duration_seconds',
          (l: Record<string, string>) => l.name?.startsWith('resource-quota.') && l.operation === 'CREATE',
        ],
      },
      {
        path: 'built-in',
        cluster: builtIn,
        waitForStatus: true,
        own: [
          'apiserver_admission_controller_admission_duration_seconds',
          (l: Record<string, string>) => l.name === 'ResourceQuota' && l.operation === 'CREATE',
        ],
      },
    ] as const;
    const perPath = new Map<string, Figures[]>();
    // Round -1 warms connections and the webhook's store table.
    for (let r = -1; r < rounds; r++)
      for (const p of paths) {
        const figures = await burstRound(
          p.cluster,
          `burst-${r + 1}`,
          p.waitForStatus,
          r < 0,
          p.own as never,
          'uncoordinated' in p && p.uncoordinated,
        );
        if (r >= 0) perPath.set(p.path, [...(perPath.get(p.path) ?? []), figures]);
      }
    const rows = [...perPath].map(([path, figures]) => ({
      path,
      rounds: figures.length,
      'admitted every round': figures.every((f) => f.admitted === figures[0].admitted) ? figures[0].admitted : 'no',
      ...Object.fromEntries(
        Object.keys(figures[0])
          .filter((k) => k !== 'admitted')
          .map((k) => [k, round(median(figures.map((f) => f[k])), 3)]),
      ),
    }));
    const p99 = (path: string) => perPath.get(path)!.map((f) => f['client p99 ms']);
    const ratio = roundRatios(p99('webhook mTLS'), p99('built-in'));
    const floor = roundRatios(p99('webhook mTLS'), p99('webhook mTLS, uncoordinated (floor)'));
    const floorToBuiltIn = roundRatios(p99('webhook mTLS, uncoordinated (floor)'), p99('built-in'));
    return {
      rows,
      summary: {
        burst: BURST,
        quota: LIMIT,
        'exactly 32 admitted': true,
        'client p99 / built-in': ratio?.median ?? '—',
        'ratio spread': ratio ? `${ratio.min}–${ratio.max}` : '—',
        'client p99 / floor': floor?.median ?? '—',
        'floor ratio spread': floor ? `${floor.min}–${floor.max}` : '—',
        'floor p99 / built-in': floorToBuiltIn?.median ?? '—',
      },
    };
  } finally {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    await store.stop();
  }
}
