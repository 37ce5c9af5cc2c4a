// AlwaysPullImages: in a multi-tenant cluster, an image pulled to a node by one tenant can be run
// by any other pod scheduled there that names it, with no check of the other tenant's pull
// credentials. Forcing imagePullPolicy: Always makes every start pull, so the registry checks
// credentials each time. Upstream: plugin/pkg/admission/alwayspullimages.
//
// Served as a mutating webhook (upstream Admit: set Always everywhere) and a validating twin
// (upstream Validate: refuse anything else), because a later mutating webhook may undo the change.

import type { AdmissionRequest } from '../../lib/admission/request.js';
import { allowed, forbidden, patched, unconvertible } from '../../lib/admission/decision.js';
import type { FieldError } from '../../lib/admission/field.js';
import { notSupported } from '../../lib/admission/field.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import { isObjectOfKind, ofKind } from '../../lib/kube/objects.js';
import type { Pod, PodSpecWithImageVolumes, PodVolume } from '../../lib/kube/pod.js';
import { imageVolumes, podImages, visitContainers } from '../../lib/kube/pod.js';

const ALWAYS = 'Always';
const POD_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'pods', 'Namespaced');

/** Other resources, subresources, and updates that bring no new image are left alone. */
function shouldIgnore(request: AdmissionRequest): boolean {
  return POD_WRITES.ignore(request) || isUpdateWithNoNewImages(request);
}

function isUpdateWithNoNewImages(request: AdmissionRequest): boolean {
  if (
    request.operation !== 'UPDATE' ||
    !isObjectOfKind<Pod>(request.object, 'Pod') ||
    !isObjectOfKind<Pod>(request.oldObject, 'Pod')
  )
    return false;
  const oldImages = podImages(request.oldObject.spec);
  for (const image of podImages(request.object.spec)) if (!oldImages.has(image)) return false;
  return true;
}

const PODS: ObjectGuard<Pod> = {
  ignore: shouldIgnore,
  accepts: ofKind<Pod>('Pod'),
  otherwise: () => unconvertible('Pod'),
};

function policyViolations(pod: Pod): FieldError[] {
  const errors: FieldError[] = [];
  visitContainers(pod.spec, (container, path) => {
    if (container.imagePullPolicy !== ALWAYS)
      errors.push(notSupported(path.child('imagePullPolicy'), container.imagePullPolicy ?? '', [ALWAYS]));
  });
  for (const { volume, path } of imageVolumes(pod.spec)) {
    if (volume.image?.pullPolicy !== ALWAYS)
      errors.push(notSupported(path.child('image', 'pullPolicy'), volume.image?.pullPolicy ?? '', [ALWAYS]));
  }
  return errors;
}

/** Whether every container and image volume already pulls Always: admit's question, asked without messages. */
function pullsAlways(pod: Pod): boolean {
  let always = true;
  visitContainers(pod.spec, (container) => {
    always = container.imagePullPolicy === ALWAYS;
    return always; // the first that does not stops the visit
  });
  return always && imageVolumes(pod.spec).every(({ volume }) => volume.image?.pullPolicy === ALWAYS);
}

// Module functions, not closures made on every request (tsx, which runs `npm start`, names each).
function pullingAlways<C extends { imagePullPolicy?: string }>(container: C): C {
  return { ...container, imagePullPolicy: ALWAYS };
}

function volumePullingAlways(volume: PodVolume): PodVolume {
  return volume?.image ? { ...volume, image: { ...volume.image, pullPolicy: ALWAYS } } : volume;
}

/** A copy of the pod sharing every part it does not change: only the lists on the path are new. */
function withPullAlways(pod: Pod): Pod {
  // Assign only the lists the pod has (never `delete`: it would drop the copy into V8's slow
  // dictionary mode, and the diff and serialisation that follow would pay for it).
  const spec: Partial<PodSpecWithImageVolumes> = { ...pod.spec };
  if (Array.isArray(spec.initContainers)) spec.initContainers = spec.initContainers.map(pullingAlways);
  if (Array.isArray(spec.containers)) spec.containers = spec.containers.map(pullingAlways);
  if (Array.isArray(spec.ephemeralContainers)) spec.ephemeralContainers = spec.ephemeralContainers.map(pullingAlways);
  if (Array.isArray(spec.volumes)) spec.volumes = spec.volumes.map(volumePullingAlways);
  return { ...pod, spec: spec as PodSpecWithImageVolumes };
}

export default definePlugin({
  metadata: {
    upstreamName: 'AlwaysPullImages',
    name: 'always-pull-images',
    summary: 'Forces imagePullPolicy Always on every container and image volume of new or re-imaged pods.',
    ...mutatingWithTwin(POD_WRITES.rules),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  admit: guardedPhase(PODS, (pod) => (pullsAlways(pod) ? allowed() : patched(withPullAlways(pod)))),

  validate: guardedPhase(PODS, (pod, request) => {
    const errors = policyViolations(pod);
    return errors.length === 0 ? allowed() : forbidden(request, errors);
  }),
});
