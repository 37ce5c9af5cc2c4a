// Wire types of admission.k8s.io/v1 and v1beta1 AdmissionReview. No npm package ships them
// (they are not in the OpenAPI spec), so they live here, kept to what the apiserver sends and reads.

export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
export const SUPPORTED_REVIEW_VERSIONS = [ADMISSION_V1, ADMISSION_V1BETA1] as const;
export type ReviewApiVersion = (typeof SUPPORTED_REVIEW_VERSIONS)[number];

export const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A JSON object: not null, not an array. Every object a review carries must at least be one. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Kubernetes object as JSON: only metadata is known to every kind. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface AdmissionRequestWire {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
  options?: Record<string, unknown> | null;
}

/** metav1.Status as the apiserver reads it from a denial. */
export interface StatusWire {
  metadata?: Record<string, never>;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
  code?: number;
}

export interface AdmissionResponseWire {
  uid: string;
  allowed: boolean;
  status?: StatusWire;
  patch?: string;
  patchType?: 'JSONPatch';
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

export interface AdmissionReviewWire {
  apiVersion: ReviewApiVersion;
  kind: 'AdmissionReview';
  request?: AdmissionRequestWire;
  response?: AdmissionResponseWire;
}

/**
 * True when `object` decodes as a `kind`: its kind is that kind (or absent) and its spec, when
 * present, is an object. Anything else is what upstream's failed type assertion
 * (`obj.(*core.Pod)`) catches.
 */
export function isObjectOfKind<T extends KubeObject>(object: unknown, kind: string): object is T {
  if (!isPlainObject(object)) return false;
  if (object.kind !== undefined && object.kind !== kind) return false;
  return object.spec === undefined || object.spec === null || isPlainObject(object.spec);
}
