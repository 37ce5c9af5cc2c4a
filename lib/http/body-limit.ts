import { badRequest, payloadTooLarge } from './errors.js';
import { bodyBytes } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';

/**
 * Lambda's synchronous invocation payload limit. The apiserver caps request bodies at 3 MB and an
 * UPDATE review carries the object twice, so a genuine review fits; anything larger is refused
 * before it is parsed.
 */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

export function bodyLimit({ maxBytes = MAX_BODY_BYTES } = {}): AdmissionMiddleware {
  const bodyLimitBefore = (request: AdmissionMiddyRequest): void => {
    const size = bodyBytes(request.event);
    if (size === 0) throw badRequest('empty body: expected an AdmissionReview');
    if (size > maxBytes) throw payloadTooLarge(`body of ${size} bytes exceeds the limit of ${maxBytes} bytes`);
  };
  return { before: bodyLimitBefore };
}
