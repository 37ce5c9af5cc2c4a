// Every plugin this project serves. The local server, the emitted webhook configuration and
// serverless.yml's function list derive from this list; a test proves they agree.
import type { AnyAdmissionPlugin } from '../lib/admission/plugin.js';
import alwaysAdmit from './always-admit/plugin.js';
import alwaysDeny from './always-deny/plugin.js';
import alwaysPullImages from './always-pull-images/plugin.js';
import certificateSubjectRestriction from './certificate-subject-restriction/plugin.js';
import clusterResourceOverride from './cluster-resource-override/plugin.js';
import clusterResourceQuota from './cluster-resource-quota/plugin.js';
import defaultIngressClass from './default-ingress-class/plugin.js';
import defaultStorageClass from './default-storage-class/plugin.js';
import defaultTolerationSeconds from './default-toleration-seconds/plugin.js';
import denyServiceExternalIps from './deny-service-external-ips/plugin.js';
import eventRateLimit from './event-rate-limit/plugin.js';
import extendedResourceToleration from './extended-resource-toleration/plugin.js';
import externalIpRanger from './external-ip-ranger/plugin.js';
import imagePolicyWebhook from './image-policy-webhook/plugin.js';
import limitPodHardAntiAffinityTopology from './limit-pod-hard-anti-affinity-topology/plugin.js';
import limitRanger from './limit-ranger/plugin.js';
import mutatingAdmissionPolicy from './mutating-admission-policy/plugin.js';
import namespaceExists from './namespace-exists/plugin.js';
import namespaceLifecycle from './namespace-lifecycle/plugin.js';
import namespaceReservation from './namespace-reservation/plugin.js';
import nodeRestriction from './node-restriction/plugin.js';
import originPodNodeEnvironment from './origin-pod-node-environment/plugin.js';
import persistentVolumeClaimResize from './persistent-volume-claim-resize/plugin.js';
import podNodeConstraints from './pod-node-constraints/plugin.js';
import podNodeSelector from './pod-node-selector/plugin.js';
import podSecurity from './pod-security/plugin.js';
import podTolerationRestriction from './pod-toleration-restriction/plugin.js';
import priority from './priority/plugin.js';
import resourceQuota from './resource-quota/plugin.js';
import restrictedEndpointsAdmission from './restricted-endpoints-admission/plugin.js';
import runOnceDuration from './run-once-duration/plugin.js';
import runtimeClass from './runtime-class/plugin.js';
import storageObjectInUseProtection from './storage-object-in-use-protection/plugin.js';
import taintNodesByCondition from './taint-nodes-by-condition/plugin.js';
import validatingAdmissionPolicy from './validating-admission-policy/plugin.js';

export const plugins: readonly AnyAdmissionPlugin[] = [
  alwaysAdmit,
  alwaysDeny,
  alwaysPullImages,
  certificateSubjectRestriction,
  clusterResourceOverride,
  clusterResourceQuota,
  defaultIngressClass,
  defaultStorageClass,
  defaultTolerationSeconds,
  denyServiceExternalIps,
  eventRateLimit,
  extendedResourceToleration,
  externalIpRanger,
  imagePolicyWebhook,
  limitPodHardAntiAffinityTopology,
  limitRanger,
  mutatingAdmissionPolicy,
  namespaceExists,
  namespaceLifecycle,
  namespaceReservation,
  nodeRestriction,
  originPodNodeEnvironment,
  persistentVolumeClaimResize,
  podNodeConstraints,
  podNodeSelector,
  podSecurity,
  podTolerationRestriction,
  priority,
  resourceQuota,
  restrictedEndpointsAdmission,
  runOnceDuration,
  runtimeClass,
  storageObjectInUseProtection,
  taintNodesByCondition,
  validatingAdmissionPolicy,
];
