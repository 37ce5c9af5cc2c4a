// ExtendedResourceToleration: nodes with special hardware (GPUs, FPGAs...) are tainted with the
// name of their extended resource, so pods that do not need the hardware stay off them. A pod that
// does request the resource gets the matching toleration automatically, so users need not know the
// taint convention (kubernetes/kubernetes#55080). Upstream:
// plugin/pkg/admission/extendedresourcetoleration.
//
// Served as a mutating webhook (upstream Admit: add the tolerations) and a validating twin that
// checks they are still there once every other mutating webhook has run. Pod updates may only add
// tolerations, so the twin never refuses a change the mutation would not have made possible.

import { allowed, badRequest, forbidden, patched } from '../../lib/admission/decision.js';
import { FieldPath, required } from '../../lib/admission/field.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { Pod } from '../../lib/kube/pod.js';
import { goTypeName, ofKind } from '../../lib/kube/objects.js';
import { isExtendedResourceName } from '../../lib/kube/resources.js';
import type { Toleration } from '../../lib/kube/tolerations.js';
import { addOrUpdateToleration, isToleration, matchToleration, tolerationsOf } from '../../lib/kube/tolerations.js';

const POD_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'pods', 'Namespaced');
/**
 * Our twin (upstream never refuses, it only adds): it checks new pods only, where a later webhook
 * could have undone the mutation; a pod that predates the webhook is not refused on its updates.
 * It fails open: tolerations are a convenience, not a security boundary, and an outage must not
 * stop every pod write.
 */
const NEW_PODS = judgedResource(['CREATE'], '', 'pods', 'Namespaced');

const PODS: ObjectGuard<Pod> = {
  // Other resources and subresources (pods/resize, pods/binding...) are left alone.
  ignore: POD_WRITES.ignore,
  accepts: ofKind<Pod>('Pod'),
  otherwise: (request) => badRequest(`expected *core.Pod but got ${goTypeName(request.object)}`),
};

/**
 * Extended resources requested by regular and init containers, sorted (upstream sorts, so several
 * tolerations are added in a stable order). Ephemeral containers cannot request resources.
 */
function requestedExtendedResources(pod: Pod): string[] {
  const names = new Set<string>();
  for (const containers of [pod.spec?.containers, pod.spec?.initContainers]) {
    if (!Array.isArray(containers)) continue;
    for (const container of containers) {
      const requests = container?.resources?.requests;
      if (requests === null || typeof requests !== 'object' || Array.isArray(requests)) continue;
      for (const name of Object.keys(requests)) if (isExtendedResourceName(name)) names.add(name);
    }
  }
  return [...names].sort();
}

function tolerationFor(resource: string): Toleration {
  return { key: resource, operator: 'Exists', effect: 'NoSchedule' };
}

export default definePlugin({
  metadata: {
    upstreamName: 'ExtendedResourceToleration',
    name: 'extended-resource-toleration',
    summary: 'Adds a NoSchedule toleration (operator Exists) for every extended resource a pod requests.',
    ...mutatingWithTwin(POD_WRITES.rules, { twinRules: NEW_PODS.rules, twinFailurePolicy: 'Ignore' }),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  admit: guardedPhase(PODS, (pod) => {
    let tolerations = tolerationsOf(pod.spec);
    let changed = false;
    for (const resource of requestedExtendedResources(pod)) {
      const next = addOrUpdateToleration(tolerations, tolerationFor(resource));
      if (next !== undefined) [tolerations, changed] = [next, true];
    }
    if (!changed) return allowed();
    // Only a pod with a spec requests resources. Copies only the path that changes.
    return patched({ ...pod, spec: { ...pod.spec, tolerations } });
  }),

  validate: guardedPhase({ ...PODS, ignore: NEW_PODS.ignore }, (pod, request) => {
    const tolerations = tolerationsOf(pod.spec);
    const path = FieldPath.of('spec', 'tolerations');
    const errors = requestedExtendedResources(pod)
      .filter((resource) => !tolerations.some((t) => isToleration(t) && matchToleration(tolerationFor(resource), t)))
      .map((resource) =>
        required(
          path,
          `a toleration with key ${JSON.stringify(resource)}, operator "Exists" and effect "NoSchedule" is needed for the requested extended resource ${JSON.stringify(resource)}`,
        ),
      );
    return errors.length === 0 ? allowed() : forbidden(request, errors);
  }),
});
