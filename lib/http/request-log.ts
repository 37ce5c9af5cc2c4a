import { requestPath } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';
import { logEnabled, logRecord } from './log.js';
import { redactWebhookPath } from './webhook-path.js';

/**
 * One JSON line per request: who asked what, what we answered, how long it took. In url-secret
 * mode the path is logged with the secret segment redacted: CloudWatch is read by more people
 * than the webhook configuration.
 */
export function requestLog(plugin: string, options: { secretInPath: boolean }): AdmissionMiddleware {
  const known = new Set([plugin]);

  const requestLogAfter = (request: AdmissionMiddyRequest): void => {
    if (!logEnabled()) return;
    const { admission } = request.context;
    const { review, outcome, failure, learningLost, caller } = admission ?? {};
    logRecord({
      level: failure && failure.statusCode >= 500 ? 'error' : learningLost ? 'warn' : 'info',
      plugin,
      path: redactWebhookPath(requestPath(request.event), options.secretInPath, known),
      statusCode: request.response?.statusCode,
      ...(review && {
        uid: review.uid,
        operation: review.operation,
        resource: review.subResource ? `${review.resource.resource}/${review.subResource}` : review.resource.resource,
        namespace: review.namespace || undefined,
        name: review.name || undefined,
        dryRun: review.dryRun,
      }),
      ...(outcome && { decision: outcome }),
      ...(failure && { failure }),
      ...(learningLost && { learningLost }),
      ...(caller && { caller: caller.subject }),
      latencyMs: admission === undefined ? undefined : Math.round((performance.now() - admission.startedAt) * 1000) / 1000,
    });
  };

  return { after: requestLogAfter, onError: requestLogAfter };
}
