// Restricted checks on the user a container runs as. Upstream: policy/check_runAsNonRoot.go,
// check_runAsUser.go. From policy version 1.35 a pod in a user namespace (`hostUsers: false`) is
// root only inside it, and both checks let it pass (KEP-127); before 1.35 that relaxation sat
// behind an alpha feature gate that clusters left off, so older versions stay strict.
import { v1 } from '../api.js';
import type { Check, CheckResult, PodMetadataLike, PodSpecLike } from './types.js';
import { ALLOWED, containers, forbidden, inUserNamespace, isSet, nameOf, visitContainers } from './types.js';

function runAsNonRoot1_0(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const setters: string[] = [];
  let podRunAsNonRoot = false;
  const pod = spec.securityContext?.runAsNonRoot;
  if (isSet(pod)) {
    if (pod === false) setters.push('pod');
    else podRunAsNonRoot = true;
  }
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  visitContainers(spec, (c) => {
    const own = c.securityContext?.runAsNonRoot;
    if (isSet(own)) {
      if (own === false) explicitlyBad.push(nameOf(c));
    } else if (!podRunAsNonRoot) {
      implicitlyBad.push(nameOf(c));
    }
  });
  if (explicitlyBad.length > 0) setters.push(containers(explicitlyBad));
  if (setters.length > 0)
    return forbidden(
      'runAsNonRoot != true',
      `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
    );
  if (implicitlyBad.length > 0)
    return forbidden(
      'runAsNonRoot != true',
      `pod or ${containers(implicitlyBad)} must set securityContext.runAsNonRoot=true`,
    );
  return ALLOWED;
}

function runAsUser1_23(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const setters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) setters.push('pod');
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.runAsUser === 0) bad.push(nameOf(c));
  });
  if (bad.length > 0) setters.push(containers(bad));
  return setters.length > 0 ? forbidden('runAsUser=0', `${setters.join(' and ')} must not set runAsUser=0`) : ALLOWED;
}

const relaxedInUserNamespace = (check: (meta: PodMetadataLike, spec: PodSpecLike) => CheckResult) =>
  function userNamespaceAware(meta: PodMetadataLike, spec: PodSpecLike): CheckResult {
    return inUserNamespace(spec) ? ALLOWED : check(meta, spec);
  };

export const userChecks: readonly Check[] = [
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      { minimumVersion: v1(0), checkPod: runAsNonRoot1_0 },
      { minimumVersion: v1(35), checkPod: relaxedInUserNamespace(runAsNonRoot1_0) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      { minimumVersion: v1(23), checkPod: runAsUser1_23 },
      { minimumVersion: v1(35), checkPod: relaxedInUserNamespace(runAsUser1_23) },
    ],
  },
];
