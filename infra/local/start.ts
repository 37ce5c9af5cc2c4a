// `npm start`: every plugin on https://127.0.0.1:8443 through the deployed Lambda handlers, with
// the local PKI and an embedded DynamoDB-compatible store whose data survives restarts.
import { parseArgs } from 'node:util';
import { plugins } from '../../functions/index.js';
import type { AdmissionPlugin } from '../../lib/admission/plugin.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../lib/config/admission-configuration.js';
import { activePlugins, ignoredLine, inactiveSummary, loadPluginSet, selectionLine } from '../../lib/config/plugins.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';
import { ConfigError } from '../../lib/config/errors.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import { callerAuthFromEnv } from '../../lib/http/caller-identity.js';
import { capabilityFor, deploymentOfBaseUrl, publicKeyText } from '../../lib/http/capability.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { learningEndpointRules } from '../../lib/admission/learning.js';
import { DEFAULT_URL_SECRET_FILE, ensureDeploymentKey, urlSecretFile } from '../emit/url-secret.js';
import { prometheusRegistry } from '../../lib/metrics/index.js';
import { DEFAULT_PKI_DIR, ensureLocalPki, truststoreCertificates } from '../pki/pki.js';
import { ensureStateTable, startEmbeddedDynamoDb } from './dynamodb.js';
import { startLocalServer } from './server.js';
import { clusterReader } from '../../lib/cluster/index.js';
import { setReadThrough } from '../../lib/state/index.js';
import { readsCluster } from '../../lib/config/cluster-reader.js';
import { kubeconfigCredentials } from '../../lib/kube/cluster-credentials.js';
import { sharedDynamoDb, stateTableName } from '../../lib/state/client.js';
import type { FleetCluster } from '../../lib/config/fleet.js';
import { CLUSTERS_DIR, clusterThrottle, loadFleet } from '../../lib/config/fleet.js';
import { clusterHandlers, prepareCluster, startClusterReader } from './fleet.js';

const USAGE = `Usage: npm start [-- --port N] [-- --help]

Serves every admission plugin on https://127.0.0.1:8443 (PORT overrides) through the same
Lambda handlers that are deployed. Client certificates signed by ${DEFAULT_PKI_DIR}/ca.crt are
required (created on first run, with the apiserver's ${DEFAULT_PKI_DIR}/client.crt and .key).

Environment:
  PORT                     listening port (default 8443)
  ADMISSION_CONFIG         AdmissionConfiguration file (default ${DEFAULT_ADMISSION_CONFIG})
  DYNAMODB_ENDPOINT        use this DynamoDB endpoint instead of the embedded store (.local/dynamodb)
  CALLER_AUTH              mtls (default) or url-secret (a capability per webhook in the path,
                           signed with the deployment key in URL_SECRET_FILE)
  URL_SECRET_FILE          url-secret: the deployment key (default ${DEFAULT_URL_SECRET_FILE}, created when
                           missing); emit reads the same file
  ALLOWED_CLIENT_SUBJECTS  mtls: only these certificate subjects (CN or DN, ';'-separated)
  LOG_SAMPLE_ALLOWED       fraction of allowed requests logged, 0..1 (default 1; refusals and failures always)
  CLUSTER_KUBECONFIG       read the cluster this kubeconfig names (token, client certificate or exec
                           credentials, as kubectl): the plugins judge its committed state, listed
                           and watched into the store, and no request teaches anything
                           (npm run -s emit -- --reader-rbac prints the RBAC the reader needs)

A fleet: when ${CLUSTERS_DIR}/ holds <cluster>.yaml files (each a cluster's AdmissionConfiguration,
with optional <cluster>.settings.yaml beside it), every such cluster is served at /<cluster>/...,
each with its own plugins, key (url-secret: .local/clusters/<cluster>/url-secret) or certificate
subjects (mTLS: allowedSubjects in its settings), state, and fair share (throttle in its settings:
requests per second and burst, default 200 and 400; beyond it a request is answered 429 with
Retry-After) (docs/fleet.md).

GET /metrics serves every plugin's metrics in Prometheus text, behind the same client certificate
(url-secret mode: GET /<capability>/metrics, with the URL printed at start).
`;

/** How long the start waits for the reader's first list before it serves anyway. */
const READER_SYNC_WAIT_MS = 60_000;

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The server's certificate, and the CAs its clients' certificates must chain to. */
function serverTls(pki: ReturnType<typeof ensureLocalPki>) {
  // During a rotation (npm run pki -- --rotate) both CAs are trusted, as API Gateway's truststore.
  return {
    caPem: `${truststoreCertificates(pki.dir).join('\n')}\n`,
    certPem: pki.server.certPem,
    keyPem: pki.server.keyPem,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const port = Number(values.port ?? process.env.PORT ?? 8443);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid port ${values.port ?? process.env.PORT}`);

  // A fleet when config/clusters/ holds a cluster's file: every such cluster, at /<cluster>/...
  const fleet = loadFleet();
  if (fleet.length > 0) return startFleet(port, fleet);

  // Configuration first: a bad file fails the start before anything listens.
  const pluginSet = loadPluginSet(plugins);
  progress(selectionLine(pluginSet));
  for (const name of pluginSet.ignored) progress(ignoredLine(name));
  for (const line of inactiveSummary(pluginSet)) progress(line);
  const served = activePlugins(pluginSet);
  if (served.length === 0)
    throw new ConfigError(
      'AdmissionConfiguration',
      'plugins',
      `${pluginSet.configuration.source.file} leaves no plugin to serve: name at least one served plugin (npm run check-config lists them)`,
    );

  const pki = ensureLocalPki(DEFAULT_PKI_DIR);
  progress(pki.created ? `created a local PKI in ${pki.dir}` : `PKI: ${pki.dir}`);

  // url-secret mode: the local trial holds the deployment key (the file emit reads), and serves
  // with its public half, as a deployment does.
  const urlSecretMode = process.env.CALLER_AUTH === 'url-secret';
  const keyFile = urlSecretFile();
  const deploymentKey = urlSecretMode ? ensureDeploymentKey(keyFile) : undefined;
  if (deploymentKey?.created) progress(`created a deployment key in ${keyFile} (0600)`);
  if (deploymentKey && !process.env.URL_CAPABILITY_KEYS)
    process.env.URL_CAPABILITY_KEYS = publicKeyText(deploymentKey.key);
  const callerAuth = callerAuthFromEnv();

  const stopStore = await startStore();

  // The cluster reader: in step with the cluster before the first request is answered.
  let stopReader = async () => {};
  const kubeconfig = process.env.CLUSTER_KUBECONFIG;
  if (kubeconfig) {
    const reader = clusterReader({
      credentials: kubeconfigCredentials(kubeconfig),
      plugins: served.map(({ plugin }) => plugin.metadata),
      dynamoDb: sharedDynamoDb(),
      tableName: stateTableName(),
      metrics: prometheusRegistry.reader,
      log: progress,
      maxBackoffMs: 2_000,
    });
    if (reader) {
      progress(`reader: ${reader.client.server}: ${reader.kinds.join(', ')}`);
      void reader.watcher.start();
      // A namespace or class the store does not hold yet (created a moment ago) is read from the apiserver.
      setReadThrough(reader.readThrough);
      const synced = await Promise.race([
        reader.watcher.synchronized().then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), READER_SYNC_WAIT_MS).unref()),
      ]);
      progress(synced ? 'reader: in step with the cluster' : 'reader: not yet in step with the cluster (still trying)');
      stopReader = async () => {
        await reader.watcher.stop();
        reader.client.close();
      };
    } else progress('reader: none of the served plugins reads the cluster');
  }

  const handlers = new Map<string, AdmissionHandler>();
  for (const { plugin, config, enforcement, exemptions } of served) {
    handlers.set(
      plugin.metadata.name,
      createPluginHandler(plugin as AdmissionPlugin<unknown>, { config, enforcement, exemptions, callerAuth }),
    );
  }
  const server = await startLocalServer({
    handlers,
    tls: serverTls(pki),
    requireClientCertificate: !urlSecretMode,
    host: '127.0.0.1',
    port,
    ...(callerAuth.mode === 'url-secret' && { capabilities: callerAuth.capabilities }),
    metrics: { text: () => prometheusRegistry.render() },
  });

  const prefix = urlSecretMode ? `${server.url}/<capability>` : server.url;
  for (const { plugin } of served) {
    const { name, mutating, validating } = plugin.metadata;
    const endpoints: Endpoint[] = [
      ...(mutating ? (['mutate'] as const) : []),
      ...(validating ? (['validate'] as const) : []),
      ...(learningEndpointRules(plugin.metadata, readsCluster()).length > 0 ? (['learn'] as const) : []),
    ];
    for (const endpoint of endpoints)
      process.stdout.write(`${prefix}${formatWebhookPath({ plugin: name, endpoint })}\n`);
  }
  if (deploymentKey) {
    progress(`url-secret: npm run -s emit -- --auth url-secret --base-url ${server.url} prints every webhook's URL`);
    // Bound to this server's own URL, as the capabilities emit makes for --base-url ${server.url}.
    const metrics = capabilityFor(deploymentKey.key, { deployment: deploymentOfBaseUrl(server.url), grant: 'metrics' });
    progress(`metrics: GET ${server.url}/${metrics}/metrics (Prometheus text)`);
  } else progress(`metrics: GET ${server.url}/metrics (Prometheus text)`);
  process.stdout.write(`ready: ${served.length} plugins on ${server.url} (${urlSecretMode ? 'url-secret' : 'mTLS'})\n`);

  stopOnSignals(async () => {
    await server.close();
    await stopReader();
    await stopStore();
  });
}

function stopOnSignals(close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    progress(`${signal}: stopping`);
    await close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/** The embedded store (or DYNAMODB_ENDPOINT's), its table made; resolves to its stop. */
async function startStore(): Promise<() => Promise<void>> {
  process.env.AWS_REGION ??= 'local';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  let stopStore = async () => {};
  if (!process.env.DYNAMODB_ENDPOINT) {
    const store = await startEmbeddedDynamoDb({ dataDir: '.local/dynamodb' });
    process.env.DYNAMODB_ENDPOINT = store.endpoint;
    stopStore = store.stop;
    progress(`store: DynamoDB Local at ${store.endpoint}, data in .local/dynamodb`);
  } else {
    progress(`store: ${process.env.DYNAMODB_ENDPOINT}`);
  }
  await ensureStateTable(process.env.DYNAMODB_ENDPOINT);
  return stopStore;
}

/**
 * A fleet (config/clusters/<cluster>.yaml): one server, each cluster at `/<cluster>/...` with its
 * own plugins, configuration, callers and state. Every cluster's configuration is checked before
 * anything listens; a cluster whose file is gone is not served (its URLs: 4xx).
 */
async function startFleet(port: number, fleet: readonly FleetCluster[]): Promise<void> {
  const urlSecretMode = process.env.CALLER_AUTH === 'url-secret';
  if (process.env.CALLER_AUTH !== undefined && !urlSecretMode && process.env.CALLER_AUTH !== 'mtls')
    throw new Error(`CALLER_AUTH must be mtls or url-secret, got ${JSON.stringify(process.env.CALLER_AUTH)}`);
  const prepared = fleet.map((cluster) => prepareCluster(cluster, urlSecretMode, progress));
  for (const { cluster, served } of prepared) {
    const { requestsPerSecond, burst } = clusterThrottle(cluster.settings);
    progress(
      `cluster ${cluster.name} (${cluster.configFile}): ${served.map((p) => p.plugin.metadata.upstreamName).join(', ')}; fair share ${requestsPerSecond} requests/s, burst ${burst}`,
    );
  }

  const pki = ensureLocalPki(DEFAULT_PKI_DIR);
  progress(pki.created ? `created a local PKI in ${pki.dir}` : `PKI: ${pki.dir}`);
  const stopStore = await startStore();
  const clusters = prepared.map(clusterHandlers);
  const stopReaders: (() => Promise<void>)[] = [];
  for (const served of clusters) stopReaders.push(await startClusterReader(served, progress, READER_SYNC_WAIT_MS));

  const server = await startLocalServer({
    handlers: new Map(),
    clusters: new Map(clusters.map((c) => [c.cluster.name, c.routes])),
    tls: serverTls(pki),
    requireClientCertificate: !urlSecretMode,
    host: '127.0.0.1',
    port,
    metrics: { text: () => prometheusRegistry.render() },
    onThrottled: (cluster) => prometheusRegistry.recordThrottled(cluster),
  });

  let count = 0;
  for (const { cluster, served } of clusters) {
    const prefix = `${server.url}/${cluster.name}${urlSecretMode ? '/<capability>' : ''}`;
    const reads = cluster.settings.readerKubeconfig !== undefined;
    for (const { plugin } of served) {
      const { name, mutating, validating } = plugin.metadata;
      const endpoints: Endpoint[] = [
        ...(mutating ? (['mutate'] as const) : []),
        ...(validating ? (['validate'] as const) : []),
        ...(learningEndpointRules(plugin.metadata, reads).length > 0 ? (['learn'] as const) : []),
      ];
      for (const endpoint of endpoints)
        process.stdout.write(`${prefix}${formatWebhookPath({ plugin: name, endpoint })}\n`);
      count++;
    }
  }
  if (urlSecretMode)
    progress(
      `url-secret: npm run -s emit -- --cluster NAME --auth url-secret --base-url ${server.url} prints a cluster's URLs`,
    );
  progress(`metrics: GET ${server.url}/${urlSecretMode ? '<cluster>/<capability>/' : ''}metrics (Prometheus text)`);
  process.stdout.write(
    `ready: ${count} plugins for ${clusters.length} clusters (${clusters.map((c) => c.cluster.name).join(', ')}) on ${server.url} (${urlSecretMode ? 'url-secret' : 'mTLS'})\n`,
  );
  stopOnSignals(async () => {
    await server.close();
    for (const stop of stopReaders) await stop();
    await stopStore();
  });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`invalid configuration: ${error.message}\n`);
  else process.stderr.write(`cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
