// The part of a pod the Pod Security Standards read, as loose JSON types (the webhook receives the
// object as JSON and never trusts its shape), and upstream's small message helpers
// (policy/helpers.go, policy/visitor.go, policy/checks.go).
import type { NumberedVersion } from '../api.js';

export interface SecurityContextLike {
  privileged?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  procMount?: string | null;
  capabilities?: { add?: string[] | null; drop?: string[] | null } | null;
  seccompProfile?: { type?: string } | null;
  appArmorProfile?: { type?: string } | null;
  seLinuxOptions?: { type?: string; user?: string; role?: string; level?: string } | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
  sysctls?: { name?: string; value?: string }[] | null;
}

interface HandlerLike {
  httpGet?: { host?: string } | null;
  tcpSocket?: { host?: string } | null;
}

export interface ContainerLike {
  name?: string;
  securityContext?: SecurityContextLike | null;
  ports?: { hostPort?: number | null }[] | null;
  livenessProbe?: HandlerLike | null;
  readinessProbe?: HandlerLike | null;
  startupProbe?: HandlerLike | null;
  lifecycle?: { postStart?: HandlerLike | null; preStop?: HandlerLike | null } | null;
}

export interface VolumeLike {
  name?: string;
  [source: string]: unknown;
}

export interface PodSpecLike {
  containers?: ContainerLike[] | null;
  initContainers?: ContainerLike[] | null;
  ephemeralContainers?: ContainerLike[] | null;
  volumes?: VolumeLike[] | null;
  securityContext?: SecurityContextLike | null;
  hostNetwork?: boolean | null;
  hostPID?: boolean | null;
  hostIPC?: boolean | null;
  hostUsers?: boolean | null;
  os?: { name?: string } | null;
  runtimeClassName?: string | null;
}

export interface PodMetadataLike {
  name?: string;
  annotations?: Record<string, string> | null;
}

/** What one check says about a pod: allowed, or forbidden with upstream's reason and detail. */
export interface CheckResult {
  readonly allowed: boolean;
  readonly forbiddenReason?: string;
  readonly forbiddenDetail?: string;
}

export const ALLOWED: CheckResult = { allowed: true };

export const forbidden = (forbiddenReason: string, forbiddenDetail: string): CheckResult => ({
  allowed: false,
  forbiddenReason,
  forbiddenDetail,
});

export type CheckPod = (meta: PodMetadataLike, spec: PodSpecLike) => CheckResult;

export interface VersionedCheck {
  /** The first policy version this revision of the check applies to. */
  readonly minimumVersion: NumberedVersion;
  readonly checkPod: CheckPod;
  /** Baseline checks this restricted revision replaces at the restricted level. */
  readonly overrideCheckIDs?: readonly string[];
}

export interface Check {
  readonly id: string;
  readonly level: 'baseline' | 'restricted';
  /** Strictly increasing minimum versions. */
  readonly versions: readonly VersionedCheck[];
}

/** joinQuote: `"a", "b"` (no escaping, as upstream). */
export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
export function containers(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** sets.NewString(...).List(): unique, sorted by bytes. */
export function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(byBytes);
}

export function byBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function list<T>(value: T[] | null | undefined): T[] {
  return Array.isArray(value) ? value : [];
}

/** visitContainers: init containers, then containers, then ephemeral containers. */
export function visitContainers(spec: PodSpecLike, visit: (container: ContainerLike) => void): void {
  for (const c of list(spec.initContainers)) visit(c ?? {});
  for (const c of list(spec.containers)) visit(c ?? {});
  for (const c of list(spec.ephemeralContainers)) visit(c ?? {});
}

export const nameOf = (container: ContainerLike): string => (typeof container.name === 'string' ? container.name : '');

export const volumesOf = (spec: PodSpecLike): VolumeLike[] => list(spec.volumes).map((v) => v ?? {});

/** A field a Go struct would hold as non-nil: present and not null. */
export const isSet = <T>(value: T): value is NonNullable<T> => value !== undefined && value !== null;

/** Pods with `hostUsers: false` run in a user namespace; some restricted checks relax for them. */
export const inUserNamespace = (spec: PodSpecLike): boolean => spec.hostUsers === false;

export const isWindows = (spec: PodSpecLike): boolean => spec.os?.name === 'windows';
