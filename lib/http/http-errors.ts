import { HttpError } from './errors.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';

/**
 * Turns every failure into an HTTP answer without an AdmissionReview, so the apiserver counts the
 * call as failed and its failurePolicy decides: never a silent allow. Our own bugs and store
 * outages are 500; the reason is one line of text.
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
    request.response = { statusCode, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${reason}\n` };
  };
  return { onError: httpErrorsOnError };
}
