// Baseline: only sysctls that are namespaced and isolated from other pods on the node; the safe set
// grew in 1.27, 1.29 and 1.32. Upstream: policy/check_sysctls.go.
import { v1 } from '../api.js';
import type { Check, CheckResult, PodMetadataLike, PodSpecLike } from './types.js';
import { ALLOWED, forbidden } from './types.js';

/**
 * The safe sysctls by the minor version that added them (also read by the native compiler): at a
 * version, every group up to it is safe.
 */
export const SAFE_SYSCTLS: readonly (readonly [minor: number, added: readonly string[]])[] = [
  [
    0,
    [
      'kernel.shm_rmid_forced',
      'net.ipv4.ip_local_port_range',
      'net.ipv4.tcp_syncookies',
      'net.ipv4.ping_group_range',
      'net.ipv4.ip_unprivileged_port_start',
    ],
  ],
  [27, ['net.ipv4.ip_local_reserved_ports']],
  [
    29,
    [
      'net.ipv4.tcp_keepalive_time',
      'net.ipv4.tcp_fin_timeout',
      'net.ipv4.tcp_keepalive_intvl',
      'net.ipv4.tcp_keepalive_probes',
    ],
  ],
  [32, ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']],
];

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
    versions: SAFE_SYSCTLS.map(([minor], i) => ({
      minimumVersion: v1(minor),
      checkPod: sysctls(SAFE_SYSCTLS.slice(0, i + 1).flatMap(([, added]) => added)),
    })),
  },
];
