// Which pod updates are judged again. A pod's spec is immutable apart from container images, and
// ephemeral containers are only added: upstream re-evaluates an update only when the container
// lists change length, an image or a container's seccomp annotation changes, or an ephemeral
// container is added or changed. Upstream: admission.go isSignificantPodUpdate.
import type { KubeObject } from '../../lib/admission/types.js';
import type { ContainerLike } from './policy/types.js';

type PodLike = Readonly<KubeObject>;
type ContainerWithImage = ContainerLike & { image?: unknown };

const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

const listAt = (pod: PodLike, key: string): ContainerWithImage[] => {
  const value = (pod.spec as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(value) ? value.map((c) => (c ?? {}) as ContainerLike) : [];
};

const annotationsOf = (pod: PodLike): Record<string, unknown> => {
  const value = pod.metadata?.annotations;
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
};

function significantContainerUpdate(
  container: ContainerWithImage,
  old: ContainerWithImage,
  annotations: Record<string, unknown>,
  oldAnnotations: Record<string, unknown>,
): boolean {
  if ((container.image ?? '') !== (old.image ?? '')) return true;
  const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + (container.name ?? '');
  return (annotations[key] ?? '') !== (oldAnnotations[key] ?? '');
}

export function isSignificantPodUpdate(pod: PodLike, oldPod: PodLike): boolean {
  const annotations = annotationsOf(pod);
  const oldAnnotations = annotationsOf(oldPod);
  for (const key of ['containers', 'initContainers']) {
    const now = listAt(pod, key);
    const before = listAt(oldPod, key);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => significantContainerUpdate(c, before[i], annotations, oldAnnotations))) return true;
  }
  const oldEphemeral = listAt(oldPod, 'ephemeralContainers');
  for (const container of listAt(pod, 'ephemeralContainers')) {
    const old = oldEphemeral.find((o) => o.name === container.name);
    if (old === undefined) return true;
    if (significantContainerUpdate(container, old, annotations, oldAnnotations)) return true;
  }
  return false;
}
