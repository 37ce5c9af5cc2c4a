// The RBAC the cluster reader needs, and nothing more: get, list and watch on exactly the kinds
// the active plugins read (lib/cluster/kinds), granted to a ServiceAccount (any cluster: its token
// goes to Secrets Manager or SSM) and, for EKS, to a Kubernetes group an access entry maps the
// reading function's IAM role to.
import type { ReadKind } from '../../lib/cluster/kinds.js';

export const READER_CLUSTER_ROLE = 'serverless-admission-reader';
/** The Kubernetes group an EKS access entry gives the reading function's role. */
export const READER_GROUP = 'serverless-admission:readers';

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** One rule per API group, resources sorted: get, list, watch. */
export function readerRules(kinds: readonly Pick<ReadKind, 'group' | 'resource'>[]): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  for (const { group, resource } of kinds) byGroup.set(group, (byGroup.get(group) ?? new Set()).add(resource));
  return [...byGroup.keys()].sort().map((group) => ({
    apiGroups: [group],
    resources: [...(byGroup.get(group) ?? [])].sort(),
    verbs: ['get', 'list', 'watch'],
  }));
}

export interface ReaderRbacOptions {
  /** The ServiceAccount whose token the reader uses (any cluster). */
  readonly serviceAccount?: { readonly namespace: string; readonly name: string };
  /** EKS: bind the same ClusterRole to READER_GROUP too. */
  readonly eks?: boolean;
}

const labels = { 'app.kubernetes.io/managed-by': 'serverless-admission' };

export function readerRbac(
  kinds: readonly Pick<ReadKind, 'group' | 'resource'>[],
  options: ReaderRbacOptions,
): object[] {
  const docs: object[] = [];
  const { serviceAccount } = options;
  if (serviceAccount) {
    docs.push({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: serviceAccount.name, namespace: serviceAccount.namespace, labels },
    });
  }
  docs.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: READER_CLUSTER_ROLE, labels },
    rules: readerRules(kinds),
  });
  const subjects = [
    ...(serviceAccount
      ? [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: serviceAccount.namespace }]
      : []),
    ...(options.eks ? [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: READER_GROUP }] : []),
  ];
  docs.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: READER_CLUSTER_ROLE, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READER_CLUSTER_ROLE },
    subjects,
  });
  return docs;
}

/** The EKS access entry that maps the reading function's IAM role to READER_GROUP. */
export function eksAccessEntryCommand(clusterName: string, roleArn: string): string {
  return `aws eks create-access-entry --cluster-name ${clusterName} --principal-arn ${roleArn} --kubernetes-groups ${READER_GROUP} --type STANDARD`;
}
