// Whether this deployment reads the cluster (docs/seed-state.md). With a reader, the cluster's
// committed state is the only source of what the plugins know: no admission request teaches
// anything, and emit writes no learning webhooks. Without one (an apiserver AWS cannot reach),
// fail-open learning webhooks and `npm run sync` remain.
//
//   CLUSTER_KUBECONFIG=FILE  locally: `npm start` reads the cluster that kubeconfig names
//   CLUSTER_READER=MODE      deployed: eks (IAM authenticator token) or token (a ServiceAccount
//                            token and CA from Secrets Manager or SSM); none (the default) learns
import { ConfigError } from './errors.js';

export type ClusterReaderMode = 'none' | 'kubeconfig' | 'eks' | 'token';

const MODES: readonly ClusterReaderMode[] = ['none', 'eks', 'token'];

export function clusterReaderMode(env: NodeJS.ProcessEnv = process.env): ClusterReaderMode {
  if (env.CLUSTER_KUBECONFIG) return 'kubeconfig';
  const mode = env.CLUSTER_READER || 'none';
  if (!(MODES as readonly string[]).includes(mode))
    throw new ConfigError(
      'cluster reader',
      'CLUSTER_READER',
      `must be one of ${MODES.join(', ')}, got ${JSON.stringify(mode)} (set CLUSTER_KUBECONFIG=FILE to read a cluster locally)`,
    );
  return mode as ClusterReaderMode;
}

/** True when the cluster is read: requests then teach nothing. */
export function readsCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return clusterReaderMode(env) !== 'none';
}
