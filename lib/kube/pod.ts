import type { Container, EphemeralContainer, PodSpec, Volume } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../admission/types.js';
import { FieldPath } from '../admission/field.js';

/** kubernetes-types 1.30 predates image volumes (KEP-4639, Kubernetes 1.31). */
export interface ImageVolumeSource {
  reference?: string;
  pullPolicy?: string;
}

export type PodVolume = Volume & { image?: ImageVolumeSource };

export type PodSpecWithImageVolumes = Omit<PodSpec, 'volumes'> & { volumes?: PodVolume[] };

export interface Pod extends KubeObject {
  spec?: PodSpecWithImageVolumes;
}

/** Any container of a pod: the fields all three kinds share. */
export type AnyContainer = Container | EphemeralContainer;

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/**
 * Calls `visit` for every container in upstream's order (init, regular, ephemeral) with its field
 * path, until `visit` returns false. Mirrors pods.VisitContainersWithPath, so field paths in our
 * messages are upstream's.
 */
export function visitContainers(spec: PodSpecWithImageVolumes | undefined, visit: (container: AnyContainer, path: FieldPath) => boolean | void): void {
  if (!spec) return;
  const specPath = FieldPath.of('spec');
  for (const list of CONTAINER_LISTS) {
    const containers = spec[list] as AnyContainer[] | undefined;
    if (!Array.isArray(containers)) continue;
    for (let i = 0; i < containers.length; i++) {
      if (visit(containers[i], specPath.child(list).index(i)) === false) return;
    }
  }
}

/** Every image volume with its field path. */
export function imageVolumes(spec: PodSpecWithImageVolumes | undefined): { volume: PodVolume; path: FieldPath }[] {
  const volumes = spec?.volumes;
  if (!Array.isArray(volumes)) return [];
  return volumes.flatMap((volume, i) => (volume?.image ? [{ volume, path: FieldPath.of('spec', 'volumes').index(i) }] : []));
}

/** Every image a pod references: containers of all kinds and image volumes. */
export function podImages(spec: PodSpecWithImageVolumes | undefined): Set<string> {
  const images = new Set<string>();
  visitContainers(spec, (c) => void images.add(c.image ?? ''));
  for (const { volume } of imageVolumes(spec)) images.add(volume.image?.reference ?? '');
  return images;
}
