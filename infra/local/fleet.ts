// `npm start` for a fleet: every cluster of config/clusters/ served by one process, each with its
// own plugins and configuration (its AdmissionConfiguration), its own callers (its key, or its
// certificate subjects), its own partitions of the store and, when its settings name a kubeconfig,
// its own cluster reader.
import type { KeyObject } from 'node:crypto';
import { plugins } from '../../functions/index.js';
import type { AdmissionPlugin } from '../../lib/admission/plugin.js';
import { clusterReader } from '../../lib/cluster/index.js';
import { ConfigError } from '../../lib/config/errors.js';
import type { FleetCluster } from '../../lib/config/fleet.js';
import { clusterEnv, clusterThrottle } from '../../lib/config/fleet.js';
import type { ConfiguredPlugin } from '../../lib/config/plugins.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import type { CallerAuth } from '../../lib/http/caller-identity.js';
import { publicKeyText } from '../../lib/http/capability.js';
import { clusterCallerAuth } from '../../lib/http/fleet.js';
import { kubeconfigCredentials } from '../../lib/kube/cluster-credentials.js';
import { prometheusRegistry } from '../../lib/metrics/index.js';
import { clusterPartitioned, setReadThrough, sharedDynamoDb, stateTableName } from '../../lib/state/index.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import { clusterKeyFile, ensureDeploymentKey } from '../emit/url-secret.js';
import { ClusterShare } from './fair-share.js';
import type { ClusterRoutes } from './server.js';

export interface ServedCluster {
  readonly cluster: FleetCluster;
  readonly served: readonly ConfiguredPlugin[];
  readonly callerAuth: CallerAuth;
  readonly routes: ClusterRoutes;
  /** url-secret: the cluster's key, which the local trial holds (emit reads the same file). */
  readonly key?: KeyObject;
}

/** A cluster's configuration and callers, checked: a bad one fails the start naming its file. */
export function prepareCluster(
  cluster: FleetCluster,
  urlSecretMode: boolean,
  progress: (line: string) => void,
): Omit<ServedCluster, 'routes'> {
  const pluginSet = loadPluginSet(plugins, clusterEnv(cluster));
  const served = activePlugins(pluginSet);
  if (served.length === 0)
    throw new ConfigError(
      'AdmissionConfiguration',
      'plugins',
      `${cluster.configFile} leaves no plugin to serve for cluster ${cluster.name}: name at least one served plugin`,
    );
  const settingsFile = cluster.settingsFile ?? cluster.configFile.replace(/\.yaml$/, '.settings.yaml');
  const callers = { name: cluster.name, ...cluster.settings };
  if (!urlSecretMode) return { cluster, served, callerAuth: clusterCallerAuth(callers, 'mtls', settingsFile) };
  const keyFile = clusterKeyFile(cluster.name);
  const { key, created } = ensureDeploymentKey(keyFile);
  if (created) progress(`created the key of cluster ${cluster.name} in ${keyFile} (0600)`);
  const capabilityKeys =
    cluster.settings.capabilityKeys.length > 0 ? cluster.settings.capabilityKeys : [publicKeyText(key)];
  const callerAuth = clusterCallerAuth({ ...callers, capabilityKeys }, 'url-secret', settingsFile);
  return { cluster, served, key, callerAuth };
}

/** The cluster's handlers, one per plugin it enables, over its own partitions of the store. */
export function clusterHandlers(prepared: Omit<ServedCluster, 'routes'>): ServedCluster {
  const { callerAuth, served, cluster } = prepared;
  const readsCluster = cluster.settings.readerKubeconfig !== undefined;
  const handlers = new Map<string, AdmissionHandler>();
  for (const { plugin, config, enforcement, exemptions } of served) {
    handlers.set(
      plugin.metadata.name,
      createPluginHandler(plugin as AdmissionPlugin<unknown>, {
        config,
        enforcement,
        exemptions,
        callerAuth,
        readsCluster,
      }),
    );
  }
  // Its fair share of the process: its settings' throttle, else the default (lib/config/fleet.ts).
  const share = new ClusterShare(clusterThrottle(cluster.settings));
  const routes: ClusterRoutes =
    callerAuth.mode === 'url-secret'
      ? { handlers, capabilities: callerAuth.capabilities, share }
      : { handlers, allowedSubjects: callerAuth.allowedSubjects, share };
  return { ...prepared, routes };
}

/** The cluster's reader, when its settings name a kubeconfig; resolves to its stop. */
export async function startClusterReader(
  served: ServedCluster,
  progress: (line: string) => void,
  waitMs: number,
): Promise<() => Promise<void>> {
  const { cluster } = served;
  const kubeconfig = cluster.settings.readerKubeconfig;
  if (kubeconfig === undefined) return async () => {};
  const reader = clusterReader({
    credentials: kubeconfigCredentials(kubeconfig),
    plugins: served.served.map(({ plugin }) => plugin.metadata),
    dynamoDb: clusterPartitioned(sharedDynamoDb(), cluster.name),
    tableName: stateTableName(),
    metrics: prometheusRegistry.reader,
    log: (line) => progress(`${cluster.name}: ${line}`),
    maxBackoffMs: 2_000,
  });
  if (!reader) {
    progress(`reader ${cluster.name}: none of the served plugins reads the cluster`);
    return async () => {};
  }
  progress(`reader ${cluster.name}: ${reader.client.server}: ${reader.kinds.join(', ')}`);
  void reader.watcher.start();
  setReadThrough(reader.readThrough, cluster.name);
  const synced = await Promise.race([
    reader.watcher.synchronized().then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), waitMs).unref()),
  ]);
  progress(`reader ${cluster.name}: ${synced ? 'in step with the cluster' : 'not yet in step (still trying)'}`);
  return async () => {
    await reader.watcher.stop();
    reader.client.close();
  };
}
