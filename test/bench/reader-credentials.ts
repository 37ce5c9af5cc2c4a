// The reader bench's one change to the packaged handler: its credentials module, built in place of
// lib/kube/deployed-credentials.ts for infra/cluster-reader/handler.ts only. It is the same
// deployedCredentials (CLUSTER_READER=token, the token read through one signed call at cold
// start), with the token source's endpoint on loopback (BENCH_TOKEN_ENDPOINT: the bench's stand-in
// for Secrets Manager) instead of the service's regional one, which the bench may not reach.
import type { ClusterCredentials } from '../../lib/kube/cluster-credentials.js';
import { deployedCredentials as deployed } from '../../lib/kube/deployed-credentials.js';

export function deployedCredentials(env: NodeJS.ProcessEnv = process.env): ClusterCredentials | undefined {
  return deployed(env, { tokenEndpoint: env.BENCH_TOKEN_ENDPOINT });
}
