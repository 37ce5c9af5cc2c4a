// Restricted: only volume types that carry no node or network access of their own. Replaces the
// baseline's hostPath check at the restricted level. Upstream: policy/check_restrictedVolumes.go.
import { v1 } from '../api.js';
import type { Check, CheckResult, PodMetadataLike, PodSpecLike } from './types.js';
import { ALLOWED, forbidden, isSet, joinQuote, pluralize, sortedSet, volumesOf } from './types.js';

// Image volumes (read-only OCI artifacts) are allowed too, as upstream's table allows them.
// Exported for the native compiler (infra/native/plugins/pod-security-checks.ts).
export const ALLOWED_VOLUME_SOURCES: readonly string[] = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

/** The sources upstream names, in upstream's order; any other source is "unknown". */
export const NAMED_VOLUME_SOURCES: readonly string[] = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

function restrictedVolumes1_0(_: PodMetadataLike, spec: PodSpecLike): CheckResult {
  const badVolumes: string[] = [];
  const badTypes: string[] = [];
  for (const volume of volumesOf(spec)) {
    if (ALLOWED_VOLUME_SOURCES.some((source) => isSet(volume[source]))) continue;
    badVolumes.push(String(volume.name ?? ''));
    badTypes.push(NAMED_VOLUME_SOURCES.find((source) => isSet(volume[source])) ?? 'unknown');
  }
  if (badVolumes.length === 0) return ALLOWED;
  const types = sortedSet(badTypes);
  const volumes = `${pluralize('volume', 'volumes', badVolumes.length)} ${joinQuote(badVolumes)}`;
  const uses = pluralize('uses', 'use', badVolumes.length);
  return forbidden(
    'restricted volume types',
    `${volumes} ${uses} ${pluralize('restricted volume type', 'restricted volume types', types.length)} ${joinQuote(types)}`,
  );
}

export const volumeChecks: readonly Check[] = [
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ minimumVersion: v1(0), checkPod: restrictedVolumes1_0, overrideCheckIDs: ['hostPathVolumes'] }],
  },
];
