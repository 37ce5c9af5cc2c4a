import type { Container, EphemeralContainer, PodSpec, Volume } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../admission/types.js';
import { FieldPath } from '../admission/field.js';
import { isPlainObject } from '../admission/types.js';
import { isPresent, listAt, objectAt, stringAt } from './objects.js';

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
export function visitContainers(
  spec: PodSpecWithImageVolumes | undefined,
  // biome-ignore lint/suspicious/noConfusingVoidType: a visitor may return nothing, or false to stop.
  visit: (container: AnyContainer, path: FieldPath) => boolean | void,
): void {
  if (!spec) return;
  const specPath = FieldPath.of('spec');
  for (const list of CONTAINER_LISTS) {
    const containers = spec[list] as AnyContainer[] | undefined;
    if (!Array.isArray(containers)) continue;
    for (let i = 0; i < containers.length; i++) {
      // Go decodes a null list element as the zero-value Container; so do we (no crash, no fields).
      const container = isPlainObject(containers[i]) ? containers[i] : ({} as AnyContainer);
      if (visit(container, specPath.child(list).index(i)) === false) return;
    }
  }
}

/** Every image volume with its field path. */
export function imageVolumes(spec: PodSpecWithImageVolumes | undefined): { volume: PodVolume; path: FieldPath }[] {
  const volumes = spec?.volumes;
  if (!Array.isArray(volumes)) return [];
  return volumes.flatMap((volume, i) =>
    volume?.image ? [{ volume, path: FieldPath.of('spec', 'volumes').index(i) }] : [],
  );
}

/** Every image a pod references: containers of all kinds and image volumes. */
export function podImages(spec: PodSpecWithImageVolumes | undefined): Set<string> {
  const images = new Set<string>();
  visitContainers(spec, (c) => void images.add(c.image ?? ''));
  for (const { volume } of imageVolumes(spec)) images.add(volume.image?.reference ?? '');
  return images;
}

/** Called with each name a pod references; returns false to stop visiting. */
export type NameVisitor = (name: string) => boolean | undefined;

/** A container's envFrom[].<fromRef> and env[].valueFrom.<keyRef> references. */
function visitContainerReferences(container: unknown, fromRef: string, keyRef: string, visit: NameVisitor): boolean {
  for (const from of listAt(container, 'envFrom')) {
    const ref = objectAt(from)[fromRef];
    if (isPresent(ref) && visit(stringAt(ref, 'name')) === false) return false;
  }
  for (const env of listAt(container, 'env')) {
    const ref = objectAt(env, 'valueFrom')[keyRef];
    if (isPresent(ref) && visit(stringAt(ref, 'name')) === false) return false;
  }
  return true;
}

/** The containers of a spec as received, in upstream's order, until `visit` returns false. */
function visitContainerNames(spec: unknown, fromRef: string, keyRef: string, visit: NameVisitor): boolean {
  let completed = true;
  visitContainers(
    objectAt(spec) as PodSpecWithImageVolumes,
    (c) => (completed = visitContainerReferences(c, fromRef, keyRef, visit)),
  );
  return completed;
}

/** The names a projected volume's sources of one kind (`secret`, `configMap`) carry. */
function visitProjectedNames(v: Record<string, unknown>, kind: string, visit: NameVisitor): boolean {
  return listAt(v, 'projected', 'sources').every(
    (s) => !isPresent(objectAt(s)[kind]) || visit(stringAt(s, kind, 'name')) !== false,
  );
}

/** The secret a volume names, by its source (a volume has one: the first, in upstream's order). */
function visitVolumeSecretNames(v: Record<string, unknown>, visit: NameVisitor): boolean {
  const name = (...path: string[]) => visit(stringAt(v, ...path)) !== false;
  const secretRef = (source: string) => !isPresent(objectAt(v, source).secretRef) || name(source, 'secretRef', 'name');
  if (isPresent(v.azureFile)) return stringAt(v, 'azureFile', 'secretName') === '' || name('azureFile', 'secretName');
  if (isPresent(v.cephfs)) return secretRef('cephfs');
  if (isPresent(v.cinder)) return secretRef('cinder');
  if (isPresent(v.flexVolume)) return secretRef('flexVolume');
  if (isPresent(v.projected)) return visitProjectedNames(v, 'secret', visit);
  if (isPresent(v.rbd)) return secretRef('rbd');
  if (isPresent(v.secret)) return name('secret', 'secretName');
  if (isPresent(v.scaleIO)) return secretRef('scaleIO');
  if (isPresent(v.iscsi)) return secretRef('iscsi');
  if (isPresent(v.storageos)) return secretRef('storageos');
  if (isPresent(v.csi))
    return !isPresent(objectAt(v, 'csi').nodePublishSecretRef) || name('csi', 'nodePublishSecretRef', 'name');
  return true;
}

/**
 * podutil.VisitPodSecretNames on a spec as received: image pull secrets, every container's env
 * and envFrom, and every volume's secret, until `visit` returns false (then false). Empty names
 * are visited too.
 */
export function visitPodSecretNames(spec: unknown, visit: NameVisitor): boolean {
  for (const ref of listAt(spec, 'imagePullSecrets')) if (visit(stringAt(ref, 'name')) === false) return false;
  if (!visitContainerNames(spec, 'secretRef', 'secretKeyRef', visit)) return false;
  return listAt(spec, 'volumes').every((volume) => visitVolumeSecretNames(objectAt(volume), visit));
}

/** podutil.VisitPodConfigmapNames on a spec as received, as visitPodSecretNames. */
export function visitPodConfigMapNames(spec: unknown, visit: NameVisitor): boolean {
  if (!visitContainerNames(spec, 'configMapRef', 'configMapKeyRef', visit)) return false;
  return listAt(spec, 'volumes').every((volume) => {
    const v = objectAt(volume);
    if (isPresent(v.projected)) return visitProjectedNames(v, 'configMap', visit);
    return !isPresent(v.configMap) || visit(stringAt(v, 'configMap', 'name')) !== false;
  });
}
