import { HttpError } from './errors.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';

/**
 * The answer to every failure of ours (5xx): no internal text at all. A store's or a bug's message
 * can hold what the caller sent back to it, the table's or the code's insides; the apiserver logs
 * what a webhook answers and may show it to the user whose request failed. The request log keeps
 * the detail (bounded), under the request id the answer names.
 */
export const internalErrorAnswer = (requestId: string | undefined): string =>
  requestId ? `internal error (request id ${requestId})` : 'internal error';

/**
 * Turns every failure into an HTTP answer without an AdmissionReview, so the apiserver counts the
 * call as failed and its failurePolicy decides: never a silent allow. Our own bugs and store
 * outages are 500 with a fixed one-line answer; refusals of a caller or a body (4xx) say why.
 */
export function httpErrors(): AdmissionMiddleware {
  const httpErrorsOnError = (request: AdmissionMiddyRequest): void => {
    const error = request.error;
    const statusCode = error instanceof HttpError ? error.statusCode : 500;
    const message = error instanceof Error ? error.message : String(error);
    const reason = error instanceof HttpError ? message : `internal error: ${message}`.replace(/[\r\n]+/g, ' ');
    request.context.admission.failure = {
      statusCode,
      reason,
      ...(statusCode >= 500 && error instanceof Error ? { stack: error.stack } : {}),
    };
    const answer = statusCode >= 500 ? internalErrorAnswer(request.context.awsRequestId) : reason;
    request.response = { statusCode, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${answer}\n` };
  };
  return { onError: httpErrorsOnError };
}
