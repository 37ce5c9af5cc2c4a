// Every plugin this project serves. The local server, the emitted webhook configuration and
// serverless.yml's function list derive from this list; a test proves they agree.
import type { AnyAdmissionPlugin } from '../lib/admission/plugin.js';
import alwaysPullImages from './always-pull-images/plugin.js';
import defaultTolerationSeconds from './default-toleration-seconds/plugin.js';
import denyServiceExternalIps from './deny-service-external-ips/plugin.js';
import extendedResourceToleration from './extended-resource-toleration/plugin.js';
import limitPodHardAntiAffinityTopology from './limit-pod-hard-anti-affinity-topology/plugin.js';
import namespaceLifecycle from './namespace-lifecycle/plugin.js';
import podNodeSelector from './pod-node-selector/plugin.js';
import resourceQuota from './resource-quota/plugin.js';
import storageObjectInUseProtection from './storage-object-in-use-protection/plugin.js';
import taintNodesByCondition from './taint-nodes-by-condition/plugin.js';
import validatingAdmissionPolicy from './validating-admission-policy/plugin.js';

export const plugins: readonly AnyAdmissionPlugin[] = [
  alwaysPullImages,
  defaultTolerationSeconds,
  denyServiceExternalIps,
  extendedResourceToleration,
  limitPodHardAntiAffinityTopology,
  namespaceLifecycle,
  podNodeSelector,
  resourceQuota,
  storageObjectInUseProtection,
  taintNodesByCondition,
  validatingAdmissionPolicy,
];

export function pluginByName(name: string): AnyAdmissionPlugin | undefined {
  return plugins.find((p) => p.metadata.name === name);
}
