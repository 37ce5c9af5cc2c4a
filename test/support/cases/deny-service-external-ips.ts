// Upstream's DenyServiceExternalIPs table (plugin/pkg/admission/network/denyserviceexternalips/
// admission_test.go, TestAdmission), held once for the plugin's tests and the native policies'
// proof: each suite builds the Services (makeSvc) from the IPs.

export interface AdmissionCase {
  readonly name: string;
  /** The new Service's external IPs. */
  readonly newIPs: readonly string[];
  /** The stored Service's, on an update; none: a create. */
  readonly oldIPs?: readonly string[];
  readonly fail: boolean;
}

export const ADMISSION_CASES: readonly AdmissionCase[] = [
  { name: 'create: without externalIPs', newIPs: [], fail: false },
  { name: 'create: with externalIPs', newIPs: ['1.1.1.1'], fail: true },
  { name: 'update: same externalIPs', newIPs: ['1.1.1.1', '2.2.2.2'], oldIPs: ['1.1.1.1', '2.2.2.2'], fail: false },
  { name: 'update: reorder externalIPs', newIPs: ['1.1.1.1', '2.2.2.2'], oldIPs: ['2.2.2.2', '1.1.1.1'], fail: false },
  { name: 'update: change externalIPs', newIPs: ['1.1.1.1', '2.2.2.2'], oldIPs: ['1.1.1.1', '3.3.3.3'], fail: true },
  { name: 'update: add externalIPs', newIPs: ['1.1.1.1', '2.2.2.2'], oldIPs: ['1.1.1.1'], fail: true },
  { name: 'update: erase externalIPs', newIPs: [], oldIPs: ['1.1.1.1', '2.2.2.2'], fail: false },
  { name: 'update: reduce externalIPs from back', newIPs: ['1.1.1.1'], oldIPs: ['1.1.1.1', '2.2.2.2'], fail: false },
  { name: 'update: reduce externalIPs from front', newIPs: ['2.2.2.2'], oldIPs: ['1.1.1.1', '2.2.2.2'], fail: false },
];
