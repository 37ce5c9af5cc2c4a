import { diffJson } from './diff.js';
import type { Decision } from './decision.js';
import type { AdmissionRequest } from './request.js';
import type { AdmissionResponseWire, AdmissionReviewWire } from './types.js';

export type Phase = 'mutate' | 'validate';

/**
 * A decision that the apiserver would reject as a malformed answer. It is a bug in a plugin, so it
 * is thrown (HTTP 500, failurePolicy decides) rather than sent.
 */
export class ProtocolViolation extends Error {
  override readonly name = 'ProtocolViolation';
}

/**
 * The apiserver stores a webhook's audit annotation under `<webhook name>/<key>` and drops it
 * unless that is a qualified name: the key is one name segment, at most 63 characters.
 */
const AUDIT_KEY = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** The apiserver prints warnings on one line each; a newline would split or garble kubectl output. */
function oneLine(warning: string): string {
  return warning.replace(/[\r\n]+/g, ' ');
}

/**
 * Encodes a decision as the AdmissionReview the apiserver expects back: the same apiVersion and
 * kind, the same uid, `patch` and `patchType` together or not at all, no patch from a validating
 * webhook or without an object, an empty patch omitted.
 */
export function encodeAdmissionResponse(
  request: AdmissionRequest,
  decision: Decision,
  phase: Phase,
): AdmissionReviewWire {
  const response: AdmissionResponseWire = { uid: request.uid, allowed: decision.kind !== 'denied' };
  if (decision.kind === 'denied') {
    if (!Number.isInteger(decision.status.code) || decision.status.code < 400) {
      throw new ProtocolViolation(`a denial needs an HTTP error code, got ${decision.status.code}`);
    }
    response.status = { metadata: {}, status: 'Failure', ...decision.status };
  }
  if (decision.kind === 'patched') {
    if (phase !== 'mutate') throw new ProtocolViolation('a validating webhook cannot patch');
    if (request.object === null)
      throw new ProtocolViolation(`a ${request.operation} without an object cannot be patched`);
    const operations = diffJson(request.object, decision.object);
    if (operations.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(operations)).toString('base64');
    }
  }
  if (decision.warnings?.length) response.warnings = decision.warnings.map(oneLine);
  if (decision.auditAnnotations && Object.keys(decision.auditAnnotations).length) {
    const invalid = Object.keys(decision.auditAnnotations).find((key) => !AUDIT_KEY.test(key));
    if (invalid !== undefined)
      throw new ProtocolViolation(
        `audit annotation key ${JSON.stringify(invalid)} is not a name the apiserver accepts`,
      );
    response.auditAnnotations = { ...decision.auditAnnotations };
  }
  return { apiVersion: request.reviewVersion, kind: 'AdmissionReview', response };
}
