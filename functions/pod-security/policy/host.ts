// Baseline checks on what a pod shares with its node: host namespaces, hostPath volumes, host
// ports, probe and lifecycle hosts, Windows HostProcess. Upstream: policy/check_hostNamespaces.go,
// check_hostPathVolumes.go, check_hostPorts.go, check_hostProbesAndhostLifecycle.go,
// check_windowsHostProcess.go.
import { v1 } from '../api.js';
import type { Check, CheckResult, ContainerLike, PodSpecLike } from './types.js';
import {
  ALLOWED,
  containers,
  forbidden,
  joinQuote,
  nameOf,
  pluralize,
  sortedSet,
  visitContainers,
  volumesOf,
  isSet,
} from './types.js';

function hostNamespaces1_0(_: unknown, spec: PodSpecLike): CheckResult {
  const shared: string[] = [];
  if (spec.hostNetwork === true) shared.push('hostNetwork=true');
  if (spec.hostPID === true) shared.push('hostPID=true');
  if (spec.hostIPC === true) shared.push('hostIPC=true');
  return shared.length > 0 ? forbidden('host namespaces', shared.join(', ')) : ALLOWED;
}

function hostPathVolumes1_0(_: unknown, spec: PodSpecLike): CheckResult {
  const names = volumesOf(spec)
    .filter((v) => isSet(v.hostPath))
    .map((v) => String(v.name ?? ''));
  return names.length > 0
    ? forbidden('hostPath volumes', `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}`)
    : ALLOWED;
}

function hostPorts1_0(_: unknown, spec: PodSpecLike): CheckResult {
  const bad: string[] = [];
  const ports: string[] = [];
  visitContainers(spec, (c) => {
    const used = (Array.isArray(c.ports) ? c.ports : []).map((p) => p?.hostPort ?? 0).filter((p) => p !== 0);
    if (used.length === 0) return;
    bad.push(nameOf(c));
    ports.push(...used.map(String));
  });
  if (bad.length === 0) return ALLOWED;
  const sorted = sortedSet(ports);
  return forbidden(
    'hostPort',
    `${containers(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', sorted.length)} ${sorted.join(', ')}`,
  );
}

type Handler = ContainerLike['livenessProbe'];

function hostsOf(handler: Handler): string[] {
  if (!handler) return [];
  return [handler.httpGet?.host, handler.tcpSocket?.host].filter((h): h is string => typeof h === 'string' && h !== '');
}

function hostProbesAndHostLifecycle1_34(_: unknown, spec: PodSpecLike): CheckResult {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  visitContainers(spec, (c) => {
    const handlers = [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop];
    for (const handler of handlers) {
      const found = hostsOf(handler);
      if (found.length === 0) continue;
      bad.add(nameOf(c));
      for (const h of found) hosts.add(h);
    }
  });
  if (bad.size === 0) return ALLOWED;
  const names = sortedSet(bad);
  const values = sortedSet(hosts);
  return forbidden(
    'probe or lifecycle host',
    `${containers(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', values.length)} ${joinQuote(values)}`,
  );
}

function windowsHostProcess1_0(_: unknown, spec: PodSpecLike): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.windowsOptions?.hostProcess === true) bad.push(nameOf(c));
  });
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push('pod');
  if (bad.length > 0) setters.push(containers(bad));
  return setters.length > 0
    ? forbidden('hostProcess', `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`)
    : ALLOWED;
}

export const hostChecks: readonly Check[] = [
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minimumVersion: v1(0), checkPod: hostNamespaces1_0 }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minimumVersion: v1(0), checkPod: hostPathVolumes1_0 }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minimumVersion: v1(0), checkPod: hostPorts1_0 }] },
  {
    id: 'hostProbesAndHostLifecycle',
    level: 'baseline',
    versions: [{ minimumVersion: v1(34), checkPod: hostProbesAndHostLifecycle1_34 }],
  },
  {
    id: 'windowsHostProcess',
    level: 'baseline',
    versions: [{ minimumVersion: v1(0), checkPod: windowsHostProcess1_0 }],
  },
];
