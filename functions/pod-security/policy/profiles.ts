// Checks on the kernel's confinement of a pod: AppArmor, seccomp, SELinux and the /proc mask.
// Upstream: policy/check_appArmorProfile.go, check_seccompProfile_baseline.go,
// check_seccompProfile_restricted.go, check_seLinuxOptions.go, check_procMount.go.
import { goQuote } from '../../../lib/admission/field.js';
import { v1 } from '../api.js';
import type { Check, CheckResult, PodMetadataLike, PodSpecLike, SecurityContextLike } from './types.js';
import {
  ALLOWED,
  byBytes,
  containers,
  forbidden,
  inUserNamespace,
  isSet,
  isWindows,
  joinQuote,
  nameOf,
  pluralize,
  sortedSet,
  visitContainers,
} from './types.js';

const annotationsOf = (meta: PodMetadataLike): Record<string, string> =>
  meta.annotations !== null && typeof meta.annotations === 'object' ? meta.annotations : {};

/**
 * The shape most profile checks share: the pod and each container may set a field; the ones that
 * set a forbidden value are named, `pod and containers "a", "b"`.
 */
function badSetters(spec: PodSpecLike, isBad: (context: SecurityContextLike) => boolean): string[] {
  const setters: string[] = [];
  if (spec.securityContext && isBad(spec.securityContext)) setters.push('pod');
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext && isBad(c.securityContext)) bad.push(nameOf(c));
  });
  if (bad.length > 0) setters.push(containers(bad));
  return setters;
}

// --- AppArmor ---

export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
/** The AppArmor profile types baseline allows (also read by the native compiler). */
export const ALLOWED_APPARMOR_TYPES: readonly string[] = ['RuntimeDefault', 'Localhost'];
const allowedAppArmorType = (type: unknown) => typeof type === 'string' && ALLOWED_APPARMOR_TYPES.includes(type);
const allowedAppArmorAnnotation = (value: string) =>
  value === '' || value === 'runtime/default' || value.startsWith('localhost/');

function appArmorProfile1_0(meta: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const badValues: string[] = [];
  const setters = badSetters(spec, (context) => {
    if (!isSet(context.appArmorProfile) || allowedAppArmorType(context.appArmorProfile.type)) return false;
    badValues.push(String(context.appArmorProfile.type ?? ''));
    return true;
  });
  const annotations = Object.entries(annotationsOf(meta))
    .filter(([key, value]) => key.startsWith(APPARMOR_ANNOTATION_PREFIX) && !allowedAppArmorAnnotation(String(value)))
    .map(([key, value]) => `${key}=${goQuote(String(value))}`)
    .sort(byBytes);
  const values = [...sortedSet(badValues), ...annotations];
  if (annotations.length > 0) setters.push(pluralize('annotation', 'annotations', annotations.length));
  if (setters.length === 0) return ALLOWED;
  return forbidden(
    pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  );
}

// --- seccomp ---

export const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
export const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
/** The seccomp profile types baseline and restricted allow (also read by the native compiler). */
export const VALID_SECCOMP_TYPES: readonly string[] = ['Localhost', 'RuntimeDefault'];
const validSeccomp = (type: unknown) => typeof type === 'string' && VALID_SECCOMP_TYPES.includes(type);
const validSeccompAnnotation = (value: string) =>
  value === 'runtime/default' || value === 'docker/default' || value.startsWith('localhost/');

/** Before 1.19 seccomp was set by annotations only. */
function seccompProfileBaseline1_0(meta: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const annotations = annotationsOf(meta);
  const bad: string[] = [];
  const check = (key: string) => {
    if (Object.hasOwn(annotations, key) && !validSeccompAnnotation(String(annotations[key])))
      bad.push(`${key}=${goQuote(String(annotations[key]))}`);
  };
  check(SECCOMP_POD_ANNOTATION);
  visitContainers(spec, (c) => check(SECCOMP_CONTAINER_ANNOTATION_PREFIX + nameOf(c)));
  if (bad.length === 0) return ALLOWED;
  const list = sortedSet(bad);
  return forbidden(
    'seccompProfile',
    `forbidden ${pluralize('annotation', 'annotations', list.length)} ${list.join(', ')}`,
  );
}

function seccompProfileBaseline1_19(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const badValues: string[] = [];
  const setters = badSetters(spec, (context) => {
    if (!isSet(context.seccompProfile) || validSeccomp(context.seccompProfile.type)) return false;
    badValues.push(String(context.seccompProfile.type ?? ''));
    return true;
  });
  if (setters.length === 0) return ALLOWED;
  return forbidden(
    'seccompProfile',
    `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}`,
  );
}

function seccompProfileRestricted1_19(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const setters: string[] = [];
  const badValues: string[] = [];
  let podSeccompSet = false;
  const podProfile = spec.securityContext?.seccompProfile;
  if (isSet(podProfile)) {
    if (!validSeccomp(podProfile.type)) {
      setters.push('pod');
      badValues.push(String(podProfile.type ?? ''));
    } else {
      podSeccompSet = true;
    }
  }
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  visitContainers(spec, (c) => {
    const profile = c.securityContext?.seccompProfile;
    if (isSet(profile)) {
      if (!validSeccomp(profile.type)) {
        explicitlyBad.push(nameOf(c));
        badValues.push(String(profile.type ?? ''));
      }
    } else if (!podSeccompSet) {
      implicitlyBad.push(nameOf(c));
    }
  });
  if (explicitlyBad.length > 0) setters.push(containers(explicitlyBad));
  if (setters.length > 0) {
    return forbidden(
      'seccompProfile',
      `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}`,
    );
  }
  if (implicitlyBad.length > 0) {
    return forbidden(
      'seccompProfile',
      `pod or ${containers(implicitlyBad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    );
  }
  return ALLOWED;
}

/** Pod validation refuses seccomp profiles on Windows pods. */
function seccompProfileRestricted1_25(meta: PodMetadataLike, spec: PodSpecLike): CheckResult {
  return isWindows(spec) ? ALLOWED : seccompProfileRestricted1_19(meta, spec);
}

// --- SELinux ---

/** The SELinux types baseline allows, from 1.0 and from 1.31 (also read by the native compiler). */
export const SELINUX_TYPES_1_0: readonly string[] = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
export const SELINUX_TYPES_1_31: readonly string[] = [...SELINUX_TYPES_1_0, 'container_engine_t'];

function seLinuxOptions(allowedTypes: ReadonlySet<string>) {
  return function seLinuxOptionsCheck(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const setters = badSetters(spec, (context) => {
      const options = context.seLinuxOptions;
      if (!isSet(options)) return false;
      let valid = true;
      const type = typeof options.type === 'string' ? options.type : '';
      if (!allowedTypes.has(type)) {
        valid = false;
        badTypes.push(type);
      }
      if (typeof options.user === 'string' && options.user !== '') {
        valid = false;
        setUser = true;
      }
      if (typeof options.role === 'string' && options.role !== '') {
        valid = false;
        setRole = true;
      }
      return !valid;
    });
    if (setters.length === 0) return ALLOWED;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return forbidden(
      'seLinuxOptions',
      `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
    );
  };
}

// --- /proc mask ---

function procMountStrict(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  visitContainers(spec, (c) => {
    const procMount = c.securityContext?.procMount;
    if (!isSet(procMount) || procMount === 'Default') return;
    bad.push(nameOf(c));
    types.push(String(procMount));
  });
  if (bad.length === 0) return ALLOWED;
  return forbidden(
    'procMount',
    `${containers(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  );
}

/** From 1.35 the baseline lets pods in a user namespace (`hostUsers: false`) unmask /proc. */
function procMountBaseline1_35(meta: PodMetadataLike, spec: PodSpecLike): CheckResult {
  return inUserNamespace(spec) ? ALLOWED : procMountStrict(meta, spec);
}

export const profileChecks: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minimumVersion: v1(0), checkPod: appArmorProfile1_0 }] },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { minimumVersion: v1(0), checkPod: seccompProfileBaseline1_0 },
      { minimumVersion: v1(19), checkPod: seccompProfileBaseline1_19 },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: v1(19), checkPod: seccompProfileRestricted1_19, overrideCheckIDs: ['seccompProfile_baseline'] },
      { minimumVersion: v1(25), checkPod: seccompProfileRestricted1_25, overrideCheckIDs: ['seccompProfile_baseline'] },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minimumVersion: v1(0), checkPod: seLinuxOptions(new Set(SELINUX_TYPES_1_0)) },
      { minimumVersion: v1(31), checkPod: seLinuxOptions(new Set(SELINUX_TYPES_1_31)) },
    ],
  },
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      { minimumVersion: v1(0), checkPod: procMountStrict },
      { minimumVersion: v1(35), checkPod: procMountBaseline1_35 },
    ],
  },
  {
    id: 'procMount_restricted',
    level: 'restricted',
    versions: [{ minimumVersion: v1(35), checkPod: procMountStrict, overrideCheckIDs: ['procMount'] }],
  },
];
