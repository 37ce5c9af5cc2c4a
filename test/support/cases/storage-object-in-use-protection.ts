// Upstream's StorageObjectInUseProtection table (plugin/pkg/admission/storage/
// storageobjectinuseprotection/admission_test.go, TestAdmit), held once for the plugin's tests
// and the native policies' proof.
import type { KubeObject } from '../../../lib/admission/types.js';

export const PVC = { kind: { kind: 'PersistentVolumeClaim' }, resource: { resource: 'persistentvolumeclaims' } };
export const PV = { kind: { kind: 'PersistentVolume' }, resource: { resource: 'persistentvolumes' } };
export const VAC = {
  kind: { group: 'storage.k8s.io', version: 'v1', kind: 'VolumeAttributesClass' },
  resource: { group: 'storage.k8s.io', version: 'v1', resource: 'volumeattributesclasses' },
};

export const claim: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'claim', namespace: 'ns' },
  spec: {},
};
export const pv: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' }, spec: {} };
export const vac: KubeObject = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttributesClass',
  metadata: { name: 'vac' },
  driverName: 'csi.example.com',
};
export const withFinalizers = (object: KubeObject, ...finalizers: string[]): KubeObject => ({
  ...object,
  metadata: { ...object.metadata, finalizers },
});

export const claimWithFinalizer = withFinalizers(claim, 'kubernetes.io/pvc-protection');
const pvWithFinalizer = withFinalizers(pv, 'kubernetes.io/pv-protection');
const vacWithFinalizer = withFinalizers(vac, 'kubernetes.io/vac-protection');

export interface AdmitCase {
  readonly name: string;
  /** The review's kind and resource. */
  readonly target: typeof PVC | typeof PV | typeof VAC;
  readonly object: KubeObject;
  readonly expected: KubeObject;
}

export const ADMIT_CASES: readonly AdmitCase[] = [
  { name: 'persistentvolumeclaims: create -> add finalizer', target: PVC, object: claim, expected: claimWithFinalizer },
  {
    name: 'persistentvolumeclaims: finalizer already exists -> no new finalizer',
    target: PVC,
    object: claimWithFinalizer,
    expected: claimWithFinalizer,
  },
  { name: 'persistentvolumes: create -> add finalizer', target: PV, object: pv, expected: pvWithFinalizer },
  {
    name: 'persistentvolumes: finalizer already exists -> no new finalizer',
    target: PV,
    object: pvWithFinalizer,
    expected: pvWithFinalizer,
  },
  { name: 'volumeattributesclasses: create -> add finalizer', target: VAC, object: vac, expected: vacWithFinalizer },
  {
    name: 'volumeattributesclasses: finalizer already exists -> no new finalizer',
    target: VAC,
    object: vacWithFinalizer,
    expected: vacWithFinalizer,
  },
];
