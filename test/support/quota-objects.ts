// Objects the quota tests (ResourceQuota, ClusterResourceQuota) charge.
import type { KubeObject } from '../../lib/admission/types.js';

export type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

/** A one-container pod with a uid of its own, so charges key by identity as the apiserver's would. */
export const quotaPod = (
  namespace: string,
  name: string,
  resources: Resources = {},
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, uid: `uid-of-${namespace}-${name}` },
  spec: { containers: [{ name: 'ctr', image: 'image', resources }], ...extra },
});
