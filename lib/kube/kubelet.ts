// What a kubelet is to the apiserver: the user it authenticates as (pkg/auth/nodeidentifier), and
// the labels it may set on its own Node (k8s.io/kubelet/pkg/apis).
import type { UserInfo } from '../admission/types.js';

export const NODE_USER_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';

/** nodeidentifier.NewDefaultNodeIdentifier: the node's name ('' when unnamed), undefined for anyone but a node. */
export function nodeIdentity(userInfo: Readonly<UserInfo>): string | undefined {
  const username = userInfo.username ?? '';
  if (!username.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!(userInfo.groups ?? []).includes(NODES_GROUP)) return undefined;
  return username.slice(NODE_USER_PREFIX.length);
}

/** The prefix of a label key (`kubernetes.io` of `kubernetes.io/os`), '' for none. */
export const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');

/** True when a label prefix is `domain` or one of its subdomains. */
export const inLabelDomain = (namespace: string, domain: string): boolean =>
  namespace === domain || namespace.endsWith(`.${domain}`);

const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** kubeletapis.IsKubeletLabel: a label the kubelet may set on its own Node. */
export function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const namespace = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((domain) => inLabelDomain(namespace, domain));
}
