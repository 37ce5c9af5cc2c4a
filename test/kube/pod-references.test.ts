// The pod visitors NodeRestriction uses to refuse mirror pods that reference other API objects.
// Ported from upstream pkg/api/pod/util_test.go: TestPodSecrets and TestPodConfigmaps name every
// reference after its struct path and expect exactly those names back.
import { describe, expect, it } from 'vitest';
import { visitPodConfigMapNames, visitPodSecretNames } from '../../lib/kube/pod.js';

const collect = (visitor: typeof visitPodSecretNames, spec: unknown): string[] => {
  const names: string[] = [];
  visitor(spec, (name) => void names.push(name));
  return names.sort();
};

const envReferences = (prefix: string, fromRef: string, keyRef: string) => ({
  envFrom: [{ [fromRef]: { name: `${prefix}.EnvFrom[*].${fromRef[0].toUpperCase()}${fromRef.slice(1)}` } }],
  env: [
    {
      name: 'e',
      valueFrom: {
        [keyRef]: { name: `${prefix}.Env[*].ValueFrom.${keyRef[0].toUpperCase()}${keyRef.slice(1)}`, key: 'k' },
      },
    },
  ],
});

describe('TestPodSecrets', () => {
  const ephemeral = 'Spec.EphemeralContainers[*].EphemeralContainerCommon';
  const spec = {
    containers: [{ name: 'c', ...envReferences('Spec.Containers[*]', 'secretRef', 'secretKeyRef') }],
    imagePullSecrets: [{ name: 'Spec.ImagePullSecrets' }],
    initContainers: [{ name: 'i', ...envReferences('Spec.InitContainers[*]', 'secretRef', 'secretKeyRef') }],
    volumes: [
      { name: 'a', azureFile: { secretName: 'Spec.Volumes[*].VolumeSource.AzureFile.SecretName', shareName: 's' } },
      { name: 'b', cephfs: { monitors: ['m'], secretRef: { name: 'Spec.Volumes[*].VolumeSource.CephFS.SecretRef' } } },
      { name: 'c', cinder: { volumeID: 'v', secretRef: { name: 'Spec.Volumes[*].VolumeSource.Cinder.SecretRef' } } },
      {
        name: 'd',
        flexVolume: { driver: 'd', secretRef: { name: 'Spec.Volumes[*].VolumeSource.FlexVolume.SecretRef' } },
      },
      {
        name: 'e',
        projected: { sources: [{ secret: { name: 'Spec.Volumes[*].VolumeSource.Projected.Sources[*].Secret' } }] },
      },
      {
        name: 'f',
        rbd: { monitors: ['m'], image: 'i', secretRef: { name: 'Spec.Volumes[*].VolumeSource.RBD.SecretRef' } },
      },
      { name: 'g', secret: { secretName: 'Spec.Volumes[*].VolumeSource.Secret.SecretName' } },
      { name: 'h', secret: { secretName: 'Spec.Volumes[*].VolumeSource.Secret' } },
      {
        name: 'i',
        scaleIO: { gateway: 'g', system: 's', secretRef: { name: 'Spec.Volumes[*].VolumeSource.ScaleIO.SecretRef' } },
      },
      {
        name: 'j',
        iscsi: {
          targetPortal: 't',
          iqn: 'q',
          lun: 0,
          secretRef: { name: 'Spec.Volumes[*].VolumeSource.ISCSI.SecretRef' },
        },
      },
      {
        name: 'k',
        storageos: { volumeName: 'v', secretRef: { name: 'Spec.Volumes[*].VolumeSource.StorageOS.SecretRef' } },
      },
      {
        name: 'l',
        csi: { driver: 'd', nodePublishSecretRef: { name: 'Spec.Volumes[*].VolumeSource.CSI.NodePublishSecretRef' } },
      },
    ],
    ephemeralContainers: [{ name: 'x', ...envReferences(ephemeral, 'secretRef', 'secretKeyRef') }],
  };
  const expected = [
    'Spec.Containers[*].EnvFrom[*].SecretRef',
    'Spec.Containers[*].Env[*].ValueFrom.SecretKeyRef',
    `${ephemeral}.EnvFrom[*].SecretRef`,
    `${ephemeral}.Env[*].ValueFrom.SecretKeyRef`,
    'Spec.ImagePullSecrets',
    'Spec.InitContainers[*].EnvFrom[*].SecretRef',
    'Spec.InitContainers[*].Env[*].ValueFrom.SecretKeyRef',
    'Spec.Volumes[*].VolumeSource.AzureFile.SecretName',
    'Spec.Volumes[*].VolumeSource.CephFS.SecretRef',
    'Spec.Volumes[*].VolumeSource.Cinder.SecretRef',
    'Spec.Volumes[*].VolumeSource.FlexVolume.SecretRef',
    'Spec.Volumes[*].VolumeSource.Projected.Sources[*].Secret',
    'Spec.Volumes[*].VolumeSource.RBD.SecretRef',
    'Spec.Volumes[*].VolumeSource.Secret',
    'Spec.Volumes[*].VolumeSource.Secret.SecretName',
    'Spec.Volumes[*].VolumeSource.ScaleIO.SecretRef',
    'Spec.Volumes[*].VolumeSource.ISCSI.SecretRef',
    'Spec.Volumes[*].VolumeSource.StorageOS.SecretRef',
    'Spec.Volumes[*].VolumeSource.CSI.NodePublishSecretRef',
  ];

  it('visits every secret a pod references, and nothing else', () => {
    expect(collect(visitPodSecretNames, spec)).toEqual([...expected].sort());
  });

  it('stops at the first name when the visitor says so, and reports it', () => {
    const seen: string[] = [];
    expect(
      visitPodSecretNames(spec, (name) => {
        seen.push(name);
        return false;
      }),
    ).toBe(false);
    expect(seen).toEqual(['Spec.ImagePullSecrets']);
    expect(visitPodSecretNames({ containers: [{ name: 'c' }] }, () => false)).toBe(true);
  });

  // Upstream skips empty names since skipEmptyNames; NodeRestriction counts a reference without a
  // name as a reference, as it did before the split, so the visitor still reports it.
  it('visits a reference without a name', () => {
    expect(collect(visitPodSecretNames, { containers: [{ name: 'c', envFrom: [{ secretRef: {} }] }] })).toEqual(['']);
  });

  it('reads a hostile spec as Go reads zero values', () => {
    expect(
      collect(visitPodSecretNames, {
        containers: 'x',
        volumes: [null, 7, { secret: 'x' }, { azureFile: {} }],
        imagePullSecrets: {},
      }),
    ).toEqual(['']);
    expect(collect(visitPodSecretNames, null)).toEqual([]);
  });
});

describe('TestPodConfigmaps', () => {
  const ephemeral = 'Spec.EphemeralContainers[*].EphemeralContainerCommon';
  const spec = {
    containers: [{ name: 'c', ...envReferences('Spec.Containers[*]', 'configMapRef', 'configMapKeyRef') }],
    ephemeralContainers: [{ name: 'x', ...envReferences(ephemeral, 'configMapRef', 'configMapKeyRef') }],
    initContainers: [{ name: 'i', ...envReferences('Spec.InitContainers[*]', 'configMapRef', 'configMapKeyRef') }],
    volumes: [
      {
        name: 'a',
        projected: {
          sources: [{ configMap: { name: 'Spec.Volumes[*].VolumeSource.Projected.Sources[*].ConfigMap' } }],
        },
      },
      { name: 'b', configMap: { name: 'Spec.Volumes[*].VolumeSource.ConfigMap' } },
    ],
  };
  const expected = [
    'Spec.Containers[*].EnvFrom[*].ConfigMapRef',
    'Spec.Containers[*].Env[*].ValueFrom.ConfigMapKeyRef',
    `${ephemeral}.EnvFrom[*].ConfigMapRef`,
    `${ephemeral}.Env[*].ValueFrom.ConfigMapKeyRef`,
    'Spec.InitContainers[*].EnvFrom[*].ConfigMapRef',
    'Spec.InitContainers[*].Env[*].ValueFrom.ConfigMapKeyRef',
    'Spec.Volumes[*].VolumeSource.Projected.Sources[*].ConfigMap',
    'Spec.Volumes[*].VolumeSource.ConfigMap',
  ];

  it('visits every configmap a pod references, and nothing else', () => {
    expect(collect(visitPodConfigMapNames, spec)).toEqual([...expected].sort());
  });

  it('finds no configmap among secrets', () => {
    expect(
      collect(visitPodConfigMapNames, {
        volumes: [{ name: 's', secret: { secretName: 's' } }],
        imagePullSecrets: [{ name: 'p' }],
      }),
    ).toEqual([]);
  });
});
