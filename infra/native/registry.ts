// Which plugins can be compiled to native policies: one compiler per plugin, by the plugin's
// registry name. A served plugin without one stays a webhook on every version (why.ts says why).
import { alwaysAdmit, alwaysDeny } from './plugins/always.js';
import { alwaysPullImages } from './plugins/always-pull-images.js';
import { storageObjectInUseProtection, taintNodesByCondition } from './plugins/creation-marks.js';
import { denyServiceExternalIps } from './plugins/deny-service-external-ips.js';
import { externalIpRanger } from './plugins/external-ip-ranger.js';
import { limitPodHardAntiAffinityTopology } from './plugins/limit-pod-hard-anti-affinity-topology.js';
import { namespaceReservation } from './plugins/namespace-reservation.js';
import { originPodNodeEnvironment, runOnceDuration } from './plugins/openshift-scheduling.js';
import { podNodeSelector } from './plugins/pod-node-selector.js';
import { podSecurity } from './plugins/pod-security.js';
import { podNodeConstraints } from './plugins/pod-node-constraints.js';
import { restrictedEndpointsAdmission } from './plugins/restricted-endpoints-admission.js';
import { defaultTolerationSeconds, extendedResourceToleration } from './plugins/tolerations.js';
import {
  certificateApprovalPolicy,
  certificateSigningPolicy,
  clusterTrustBundleAttestPolicy,
  ingressAdmissionPolicy,
} from './native-only.js';
import type { AnyNativeCompiler } from './policy.js';

export const compilers: ReadonlyMap<string, AnyNativeCompiler> = new Map(
  [
    alwaysAdmit,
    alwaysDeny,
    alwaysPullImages,
    defaultTolerationSeconds,
    denyServiceExternalIps,
    extendedResourceToleration,
    externalIpRanger,
    limitPodHardAntiAffinityTopology,
    namespaceReservation,
    originPodNodeEnvironment,
    podNodeConstraints,
    podNodeSelector,
    podSecurity,
    restrictedEndpointsAdmission,
    runOnceDuration,
    storageObjectInUseProtection,
    taintNodesByCondition,
    // Served only natively (native-only.ts).
    certificateApprovalPolicy,
    certificateSigningPolicy,
    clusterTrustBundleAttestPolicy,
    ingressAdmissionPolicy,
  ].map((c) => [c.name, c]),
);
