import { decodeAdmissionReview, MalformedReviewError } from '../admission/request.js';
import { parseBoundedJson } from './bounded-json.js';
import { badRequest, HttpError } from './errors.js';
import { bodyText, headerValue } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';

/**
 * Parses the body once and checks it is an AdmissionReview we can answer; anything else is the
 * caller's mistake and gets HTTP 400 with a one-line reason (415 for a non-JSON content type).
 */
export function admissionReviewParser(): AdmissionMiddleware {
  const admissionReviewParserBefore = (request: AdmissionMiddyRequest): void => {
    const contentType = headerValue(request.event, 'content-type');
    if (contentType !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim())) {
      throw new HttpError(415, `content type ${JSON.stringify(contentType)} is not application/json`);
    }
    const text = bodyText(request.event);
    const body = parseBoundedJson(text);
    try {
      request.context.admission.review = decodeAdmissionReview(body, text);
    } catch (error) {
      if (error instanceof MalformedReviewError) throw badRequest(`not an AdmissionReview: ${error.message}`);
      throw error;
    }
  };
  return { before: admissionReviewParserBefore };
}
