// Baseline: only sysctls that are namespaced and isolated from other pods on the node; the safe set
// grew in 1.27, 1.29 and 1.32. Upstream: policy/check_sysctls.go.
import { v1 } from '../api.js';
import type { Check, CheckResult, PodMetadataLike, PodSpecLike } from './types.js';
import { ALLOWED, forbidden } from './types.js';

const SAFE_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SAFE_1_27 = [...SAFE_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SAFE_1_29 = [
  ...SAFE_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SAFE_1_32 = [...SAFE_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctls(safe: readonly string[]) {
  const allowed = new Set(safe);
  return function sysctlsCheck(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
    const sysctls = spec.securityContext?.sysctls;
    const list = Array.isArray(sysctls) ? sysctls : [];
    // In the pod's order, duplicates kept, as upstream.
    const bad = list.map((s) => String(s?.name ?? '')).filter((name) => !allowed.has(name));
    return bad.length > 0 ? forbidden('forbidden sysctls', bad.join(', ')) : ALLOWED;
  };
}

export const sysctlChecks: readonly Check[] = [
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minimumVersion: v1(0), checkPod: sysctls(SAFE_1_0) },
      { minimumVersion: v1(27), checkPod: sysctls(SAFE_1_27) },
      { minimumVersion: v1(29), checkPod: sysctls(SAFE_1_29) },
      { minimumVersion: v1(32), checkPod: sysctls(SAFE_1_32) },
    ],
  },
];
