import type { AdmissionRequest } from './request.js';
import { qualifiedResource } from './request.js';
import type { FieldError } from './field.js';
import { aggregateMessage, fieldErrorMessage } from './field.js';
import type { KubeObject, StatusWire } from './types.js';

/**
 * What a plugin answers. Nobody builds an AdmissionResponse by hand: plugins return one of these,
 * made by the helpers below, and the codec turns it into the wire response.
 */
export type Decision = Allowed | Denied | Patched;

interface Annotated {
  readonly warnings?: readonly string[];
  /** Keys without the plugin prefix; the codec prefixes nothing (the apiserver adds the webhook name). */
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

export interface Allowed extends Annotated {
  readonly kind: 'allowed';
}

export interface Denied extends Annotated {
  readonly kind: 'denied';
  readonly status: Required<Pick<StatusWire, 'code' | 'reason' | 'message'>> & Pick<StatusWire, 'details'>;
}

export interface Patched extends Annotated {
  readonly kind: 'patched';
  /** The whole mutated object; the codec diffs it against the object as received. */
  readonly object: KubeObject;
}

export function allowed(): Allowed {
  return { kind: 'allowed' };
}

/** A denial: an answer, not a failure. The apiserver relays `code` to the user (403 by default). */
export function denied(message: string, code = 403, reason = 'Forbidden', details?: StatusWire['details']): Denied {
  return { kind: 'denied', status: { code, reason, message, ...(details ? { details } : {}) } };
}

/** The mutated object; an unchanged object becomes a plain allow in the codec. */
export function patched(object: KubeObject): Patched {
  return { kind: 'patched', object };
}

/**
 * A rejection that upstream returns as a non-Forbidden API error (BadRequest, Invalid...): still an
 * answer to the user's request, with upstream's code and reason. Failures of the webhook itself are
 * thrown, never answered (so the apiserver's failurePolicy decides).
 */
export function errored(code: number, reason: string, message: string): Denied {
  return denied(message, code, reason);
}

/**
 * apierrors.NewNotFound(resource, name): what upstream answers for an object its informer cannot
 * find. `resource` is group-qualified (`pods`, `csidrivers.storage.k8s.io`).
 */
export function notFound(resource: string, name: string): Denied {
  const dot = resource.indexOf('.');
  const [kind, group] = dot < 0 ? [resource, ''] : [resource.slice(0, dot), resource.slice(dot + 1)];
  return denied(`${resource} ${JSON.stringify(name)} not found`, 404, 'NotFound', {
    name,
    ...(group && { group }),
    kind,
  });
}

export function badRequest(message: string): Denied {
  return errored(400, 'BadRequest', message);
}

/** apierrors.NewBadRequest for an object that does not decode as the kind the request names. */
export function unconvertible(kind: string): Denied {
  return badRequest(`Resource was marked with kind ${kind} but was unable to be converted`);
}

export function withWarnings<D extends Decision>(decision: D, ...warnings: string[]): D {
  if (warnings.length === 0) return decision;
  return { ...decision, warnings: [...(decision.warnings ?? []), ...warnings] };
}

/**
 * An audit annotation key the apiserver keeps: segments joined by `_` into one name of at most 63
 * characters (a longer one is cut and suffixed with a hash of the whole, so keys stay distinct).
 */
export function auditAnnotationKey(...segments: string[]): string {
  const key = segments
    .join('_')
    .replace(/[^-A-Za-z0-9_.]/g, '_')
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  if (key.length <= 63) return key;
  // node:crypto loaded here, not imported: every handler imports this module and few ever cut a
  // key, so a cold start does not compile crypto for it (docs/performance.md, "Cold starts").
  const { createHash } = process.getBuiltinModule('node:crypto');
  return `${key.slice(0, 54).replace(/[^A-Za-z0-9]+$/, '')}-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

export function withAuditAnnotations<D extends Decision>(decision: D, annotations: Record<string, string>): D {
  return { ...decision, auditAnnotations: { ...decision.auditAnnotations, ...annotations } };
}

/**
 * The name admission.NewForbidden prints: the request's name, else the object's name or
 * generateName (names are generated after admission), else "Unknown".
 */
export function resourceNameForMessage(request: AdmissionRequest): string {
  if (request.name !== '') return request.name;
  const meta = request.object?.metadata ?? request.oldObject?.metadata;
  if (meta === undefined) return 'Unknown';
  if (typeof meta.name === 'string' && meta.name !== '') return meta.name;
  if (typeof meta.generateName === 'string' && meta.generateName !== '') return meta.generateName;
  return 'Unknown';
}

/** apierrors.NewForbidden's message: `pods "p" is forbidden: <err>`. */
export function forbiddenMessage(request: AdmissionRequest, error: string): string {
  const resource = qualifiedResource(request.resource);
  const name = resourceNameForMessage(request);
  return name === ''
    ? `${resource} is forbidden: ${error}`
    : `${resource} ${JSON.stringify(name)} is forbidden: ${error}`;
}

/**
 * admission.NewForbidden for each error, aggregated as upstream aggregates them: every violation is
 * reported with its field path, de-duplicated, in order.
 */
export function forbidden(request: AdmissionRequest, errors: readonly (FieldError | string)[]): Denied {
  const messages = errors.map((e) => forbiddenMessage(request, typeof e === 'string' ? e : fieldErrorMessage(e)));
  return denied(aggregateMessage(messages), 403, 'Forbidden', {
    name: resourceNameForMessage(request),
    group: request.resource.group,
    kind: request.resource.resource,
  });
}
