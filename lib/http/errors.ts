/**
 * A failure answered with an HTTP status instead of an AdmissionReview: 4xx for bodies the
 * apiserver would never send and for callers we refuse, 5xx for our own failures. The reason is
 * one line; the apiserver logs it and its failurePolicy decides.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly statusCode: number,
    reason: string,
  ) {
    super(reason.replace(/[\r\n]+/g, ' '));
  }
}

export const badRequest = (reason: string) => new HttpError(400, reason);
export const forbiddenCaller = (reason: string) => new HttpError(403, reason);
export const notFound = (reason: string) => new HttpError(404, reason);
export const payloadTooLarge = (reason: string) => new HttpError(413, reason);

/**
 * url-secret mode: every request without a capability for what its path names, at this deployment,
 * gets this one answer, whether the route exists or not (an unknown route says nothing more).
 */
export const refusedCapability = () => new HttpError(403, 'caller capability missing or not valid');
