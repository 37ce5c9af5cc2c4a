// LimitPodHardAntiAffinityTopology: a required (hard) pod anti-affinity term over a wide topology
// such as a zone lets one pod keep every other matching pod out of a whole zone or region, which
// lets a tenant starve others of capacity and makes scheduling expensive. Hard anti-affinity is
// therefore only allowed per node (topologyKey kubernetes.io/hostname); preferred terms may use
// any key. Upstream: plugin/pkg/admission/antiaffinity.
//
// Validating only: upstream only validates, and nothing is there to mutate.

import type { PodAffinityTerm } from 'kubernetes-types/core/v1.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { qualifiedResource } from '../../lib/admission/request.js';
import { allowed, denied, unconvertible } from '../../lib/admission/decision.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, validatingOnly } from '../../lib/admission/plugin.js';
import type { Pod } from '../../lib/kube/pod.js';
import { ofKind } from '../../lib/kube/objects.js';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
const POD_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'pods', 'Namespaced');

const PODS: ObjectGuard<Pod> = {
  // Other resources and subresources (pods/binding, pods/eviction...) are left alone.
  ignore: POD_WRITES.ignore,
  accepts: ofKind<Pod>('Pod'),
  otherwise: () => unconvertible('Pod'),
};

/**
 * The required anti-affinity terms. requiredDuringSchedulingRequiredDuringExecution is not in the
 * API yet; upstream keeps a commented-out check for it, and so do we, by not reading it.
 */
function hardAntiAffinityTerms(pod: Pod): PodAffinityTerm[] {
  const terms = pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return Array.isArray(terms) ? terms : [];
}

/**
 * apierrors.NewForbidden with the pod's own name, as upstream builds it (not admission.NewForbidden:
 * a pod named only by generateName is printed without a name).
 */
function forbiddenTopology(request: AdmissionRequest, pod: Pod, topologyKey: string) {
  const resource = qualifiedResource(request.resource);
  const name = typeof pod.metadata?.name === 'string' ? pod.metadata.name : '';
  const error = `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${topologyKey} but only key ${LABEL_HOSTNAME} is allowed`;
  const message =
    name === '' ? `${resource} is forbidden: ${error}` : `${resource} ${JSON.stringify(name)} is forbidden: ${error}`;
  return denied(message, 403, 'Forbidden', { name, group: request.resource.group, kind: request.resource.resource });
}

export default definePlugin({
  metadata: {
    upstreamName: 'LimitPodHardAntiAffinityTopology',
    name: 'limit-pod-hard-anti-affinity-topology',
    summary: 'Refuses pods whose required pod anti-affinity uses a topologyKey other than kubernetes.io/hostname.',
    ...validatingOnly(POD_WRITES.rules),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  validate: guardedPhase(PODS, (pod, request) => {
    // Upstream stops at the first offending term; the message names only that one.
    const offending = hardAntiAffinityTerms(pod).find((term) => (term?.topologyKey ?? '') !== LABEL_HOSTNAME);
    return offending === undefined ? allowed() : forbiddenTopology(request, pod, offending?.topologyKey ?? '');
  }),
});
