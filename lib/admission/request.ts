import type {
  AdmissionRequestWire,
  GroupVersionKind,
  GroupVersionResource,
  KubeObject,
  Operation,
  ReviewApiVersion,
  UserInfo,
} from './types.js';
import { isPlainObject, OPERATIONS, SUPPORTED_REVIEW_VERSIONS } from './types.js';

/**
 * One read-only view of an admission request, whatever AdmissionReview version carried it.
 * Plugins read this and nothing else: no HTTP, no base64, no API Gateway event.
 */
export interface AdmissionRequest {
  readonly reviewVersion: ReviewApiVersion;
  readonly uid: string;
  readonly kind: Readonly<GroupVersionKind>;
  readonly resource: Readonly<GroupVersionResource>;
  /** '' when the request is for the main resource. */
  readonly subResource: string;
  /**
   * What the user actually sent, before the apiserver converted it for a webhook registered with
   * matchPolicy Equivalent (e.g. apps/v1beta1 for apps/v1); equal to kind/resource otherwise.
   */
  readonly requestKind: Readonly<GroupVersionKind>;
  readonly requestResource: Readonly<GroupVersionResource>;
  readonly requestSubResource: string;
  readonly name: string;
  readonly namespace: string;
  readonly operation: Operation;
  readonly userInfo: Readonly<UserInfo>;
  readonly object: Readonly<KubeObject> | null;
  readonly oldObject: Readonly<KubeObject> | null;
  readonly dryRun: boolean;
  readonly options: Readonly<Record<string, unknown>> | null;
  /**
   * The AdmissionReview's JSON text, when the codec was given it: numbers as written, for plugins
   * that must tell `10` from `10.0` or keep int64s beyond 2^53 (lib/admission/unstructured).
   */
  readonly source?: string;
}

/** A body the apiserver would never send: answered with HTTP 400 and this one-line reason. */
export class MalformedReviewError extends Error {
  override readonly name = 'MalformedReviewError';
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function requireString(owner: Record<string, unknown>, key: string, path: string, allowEmpty = true): string {
  const value = owner[key];
  if (typeof value !== 'string' || (!allowEmpty && value === '')) {
    throw new MalformedReviewError(`${path}.${key} must be a${allowEmpty ? '' : ' non-empty'} string`);
  }
  return value;
}

function optionalString(owner: Record<string, unknown>, key: string, path: string): string {
  const value = owner[key];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new MalformedReviewError(`${path}.${key} must be a string`);
  return value;
}

function groupVersion<K extends 'kind' | 'resource'>(
  owner: Record<string, unknown>,
  key: string,
  leaf: K,
): K extends 'kind' ? GroupVersionKind : GroupVersionResource {
  const value = owner[key];
  const path = `request.${key}`;
  if (!isPlainObject(value)) throw new MalformedReviewError(`${path} must be an object`);
  const group = optionalString(value, 'group', path);
  const version = requireString(value, 'version', path);
  const name = requireString(value, leaf, path, false);
  // Literal keys, not `[leaf]`: an object with a computed key gets a shape of its own each time.
  return (leaf === 'kind' ? { group, version, kind: name } : { group, version, resource: name }) as never;
}

function objectOrNull(owner: Record<string, unknown>, key: 'object' | 'oldObject'): KubeObject | null {
  const value = owner[key];
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw new MalformedReviewError(`request.${key} must be an object or null`);
  if (value.metadata !== undefined && value.metadata !== null && !isPlainObject(value.metadata)) {
    throw new MalformedReviewError(`request.${key}.metadata must be an object`);
  }
  return value as KubeObject;
}

const USER_INFO_STRINGS = ['username', 'uid'] as const;

const isStringList = (list: unknown): boolean => Array.isArray(list) && list.every((g) => typeof g === 'string');

function userInfoOf(owner: Record<string, unknown>): UserInfo {
  const value = owner.userInfo;
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw new MalformedReviewError('request.userInfo must be an object');
  for (const key of USER_INFO_STRINGS) {
    if (value[key] !== undefined && value[key] !== null && typeof value[key] !== 'string') {
      throw new MalformedReviewError(`request.userInfo.${key} must be a string`);
    }
  }
  if (value.groups !== undefined && value.groups !== null && !isStringList(value.groups)) {
    throw new MalformedReviewError('request.userInfo.groups must be a list of strings');
  }
  if (value.extra !== undefined && value.extra !== null) {
    if (!isPlainObject(value.extra) || !Object.values(value.extra).every(isStringList)) {
      throw new MalformedReviewError('request.userInfo.extra must map names to lists of strings');
    }
  }
  return value as UserInfo;
}

/**
 * Checks the shape of a parsed body and returns the request view. The body is not copied: the
 * view points into it, and nothing in this project writes through the view.
 */
export function decodeAdmissionReview(body: unknown, source?: string): AdmissionRequest {
  if (!isPlainObject(body)) throw new MalformedReviewError('body is not a JSON object');
  if (body.kind !== 'AdmissionReview') {
    throw new MalformedReviewError(`kind must be AdmissionReview, got ${JSON.stringify(body.kind ?? null)}`);
  }
  const apiVersion = body.apiVersion;
  if (!SUPPORTED_REVIEW_VERSIONS.includes(apiVersion as ReviewApiVersion)) {
    throw new MalformedReviewError(
      `unsupported AdmissionReview apiVersion ${JSON.stringify(apiVersion ?? null)}: supported are ${SUPPORTED_REVIEW_VERSIONS.join(', ')}`,
    );
  }
  const request = body.request;
  if (!isPlainObject(request)) throw new MalformedReviewError('request must be an object');
  const uid = requireString(request, 'uid', 'request', false);
  const operation = request.operation;
  if (!OPERATIONS.includes(operation as Operation)) {
    throw new MalformedReviewError(`request.operation must be one of ${OPERATIONS.join(', ')}`);
  }
  if (request.dryRun !== undefined && request.dryRun !== null && typeof request.dryRun !== 'boolean') {
    throw new MalformedReviewError('request.dryRun must be a boolean');
  }
  const options = request.options;
  if (options !== undefined && options !== null && !isPlainObject(options)) {
    throw new MalformedReviewError('request.options must be an object');
  }
  const wire = request as unknown as AdmissionRequestWire;
  const kind = groupVersion(request, 'kind', 'kind');
  const resource = groupVersion(request, 'resource', 'resource');
  const subResource = optionalString(request, 'subResource', 'request');
  return {
    reviewVersion: apiVersion as ReviewApiVersion,
    uid,
    kind,
    resource,
    subResource,
    requestKind: isPresent(request.requestKind) ? groupVersion(request, 'requestKind', 'kind') : kind,
    requestResource: isPresent(request.requestResource)
      ? groupVersion(request, 'requestResource', 'resource')
      : resource,
    requestSubResource: isPresent(request.requestSubResource)
      ? optionalString(request, 'requestSubResource', 'request')
      : subResource,
    name: optionalString(request, 'name', 'request'),
    namespace: optionalString(request, 'namespace', 'request'),
    operation: operation as Operation,
    userInfo: userInfoOf(request),
    object: objectOrNull(request, 'object'),
    oldObject: objectOrNull(request, 'oldObject'),
    dryRun: wire.dryRun === true,
    options: (options as Record<string, unknown> | undefined) ?? null,
    source,
  };
}

/** `pods`, `deployments.apps`: the group-qualified resource as the apiserver prints it. */
export function qualifiedResource(resource: Pick<GroupVersionResource, 'group' | 'resource'>): string {
  return resource.group === '' ? resource.resource : `${resource.resource}.${resource.group}`;
}

/** True when the request is for `resource` in `group` itself, not a subresource of it. */
export function isMainResource(request: AdmissionRequest, group: string, resource: string): boolean {
  return request.subResource === '' && request.resource.group === group && request.resource.resource === resource;
}
