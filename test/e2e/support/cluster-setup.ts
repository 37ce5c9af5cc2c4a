// Set-up the suite's plugin tests share on a control plane without a controller-manager: a
// namespace with the default ServiceAccount pods are given, a group of users who may do anything
// through RBAC (yet are not system:masters, which several plugins let through), and the
// apiserver's error for a webhook it cannot reach.
import type { ControlPlane } from './control-plane.js';
import { create } from './kube.js';

/** A namespace and its default ServiceAccount, which nobody else creates without a controller-manager. */
export async function namespaceWithServiceAccount(
  cluster: ControlPlane,
  name: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<void> {
  if (name !== 'default') {
    const namespace = await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...metadata } });
    if (namespace.status !== 201) throw new Error(`namespace ${name}: ${namespace.status} ${namespace.message}`);
  }
  const account = await create(cluster, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'default', namespace: name },
  });
  if (account.status !== 201) throw new Error(`ServiceAccount ${name}/default: ${account.message}`);
}

/** Binds cluster-admin to `group`: its members pass RBAC, but are no system:masters. */
export async function grantClusterAdmin(cluster: ControlPlane, group: string): Promise<void> {
  const answer = await create(cluster, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${group}-cluster-admin` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
  });
  if (answer.status !== 201) throw new Error(`ClusterRoleBinding for ${group}: ${answer.message}`);
}

/** The whole message a failurePolicy Fail webhook's outage gives (mTLS URLs: no secret in the path). */
export function failedCalling(webhook: string, path: string): RegExp {
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(
    `^Internal error occurred: failed calling webhook "${escaped(webhook)}": failed to call webhook: ` +
      `Post "https://127\\.0\\.0\\.1:\\d+${escaped(path)}\\?timeout=\\d+s": ` +
      'dial tcp 127\\.0\\.0\\.1:\\d+: connect: connection refused$',
  );
}
