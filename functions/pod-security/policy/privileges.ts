// Checks on what a container may do beyond an ordinary process: privileged mode, added and dropped
// capabilities, privilege escalation. Upstream: policy/check_privileged.go,
// check_capabilities_baseline.go, check_capabilities_restricted.go,
// check_allowPrivilegeEscalation.go.
import { v1 } from '../api.js';
import type { Check, CheckResult, PodSpecLike } from './types.js';
import { ALLOWED, containers, forbidden, isWindows, joinQuote, nameOf, sortedSet, visitContainers } from './types.js';

function privileged1_0(_: unknown, spec: PodSpecLike): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.privileged === true) bad.push(nameOf(c));
  });
  return bad.length > 0
    ? forbidden('privileged', `${containers(bad)} must not set securityContext.privileged=true`)
    : ALLOWED;
}

/** The capabilities baseline lets a container add (also read by the native compiler). */
export const BASELINE_CAPABILITIES: readonly string[] = [
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
];
const BASELINE = new Set(BASELINE_CAPABILITIES);

const listOf = (value: string[] | null | undefined): string[] => (Array.isArray(value) ? value.map(String) : []);

function capabilitiesBaseline1_0(_: unknown, spec: PodSpecLike): CheckResult {
  const bad: string[] = [];
  const added: string[] = [];
  visitContainers(spec, (c) => {
    const extra = listOf(c.securityContext?.capabilities?.add).filter((cap) => !BASELINE.has(cap));
    if (extra.length === 0) return;
    bad.push(nameOf(c));
    added.push(...extra);
  });
  if (bad.length === 0) return ALLOWED;
  return forbidden(
    'non-default capabilities',
    `${containers(bad)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add`,
  );
}

function capabilitiesRestricted1_22(_: unknown, spec: PodSpecLike): CheckResult {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCapabilities: string[] = [];
  visitContainers(spec, (c) => {
    const capabilities = c.securityContext?.capabilities;
    if (!capabilities) {
      missingDropAll.push(nameOf(c));
      return;
    }
    if (!listOf(capabilities.drop).includes('ALL')) missingDropAll.push(nameOf(c));
    const extra = listOf(capabilities.add).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length > 0) {
      addingForbidden.push(nameOf(c));
      forbiddenCapabilities.push(...extra);
    }
  });
  const details: string[] = [];
  if (missingDropAll.length > 0)
    details.push(`${containers(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length > 0) {
    details.push(
      `${containers(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCapabilities))} in securityContext.capabilities.add`,
    );
  }
  return details.length > 0 ? forbidden('unrestricted capabilities', details.join('; ')) : ALLOWED;
}

/** Pod validation refuses capabilities on Windows pods, so there is nothing to require. */
function capabilitiesRestricted1_25(meta: unknown, spec: PodSpecLike): CheckResult {
  return isWindows(spec) ? ALLOWED : capabilitiesRestricted1_22(meta, spec);
}

function allowPrivilegeEscalation1_8(_: unknown, spec: PodSpecLike): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.allowPrivilegeEscalation !== false) bad.push(nameOf(c));
  });
  return bad.length > 0
    ? forbidden(
        'allowPrivilegeEscalation != false',
        `${containers(bad)} must set securityContext.allowPrivilegeEscalation=false`,
      )
    : ALLOWED;
}

/** Windows has no privilege escalation to forbid; pod validation refuses the field there. */
function allowPrivilegeEscalation1_25(meta: unknown, spec: PodSpecLike): CheckResult {
  return isWindows(spec) ? ALLOWED : allowPrivilegeEscalation1_8(meta, spec);
}

export const privilegeChecks: readonly Check[] = [
  { id: 'privileged', level: 'baseline', versions: [{ minimumVersion: v1(0), checkPod: privileged1_0 }] },
  {
    id: 'capabilities_baseline',
    level: 'baseline',
    versions: [{ minimumVersion: v1(0), checkPod: capabilitiesBaseline1_0 }],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: v1(22), checkPod: capabilitiesRestricted1_22, overrideCheckIDs: ['capabilities_baseline'] },
      { minimumVersion: v1(25), checkPod: capabilitiesRestricted1_25, overrideCheckIDs: ['capabilities_baseline'] },
    ],
  },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minimumVersion: v1(8), checkPod: allowPrivilegeEscalation1_8 },
      { minimumVersion: v1(25), checkPod: allowPrivilegeEscalation1_25 },
    ],
  },
];
