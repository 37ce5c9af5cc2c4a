import type { MiddlewareObj } from '@middy/core';
import type { GatewayEvent, GatewayResult } from './event.js';
import { requestPath } from './event.js';
import { logEnabled, logRecord } from './log.js';

/** One JSON line per request: who asked what, what we answered, how long it took. */
export function requestLog(plugin: string): MiddlewareObj<GatewayEvent, GatewayResult> {
  const started = new WeakMap<GatewayEvent, number>();

  const requestLogBefore = (request: { event: GatewayEvent }): void => {
    if (logEnabled()) started.set(request.event, performance.now());
  };

  const requestLogAfter = (request: { event: GatewayEvent; response: GatewayResult | null }): void => {
    if (!logEnabled()) return;
    const { event } = request;
    const review = event.admissionRequest;
    const start = started.get(event);
    logRecord({
      level: event.failure && event.failure.statusCode >= 500 ? 'error' : event.learningLost ? 'warn' : 'info',
      plugin,
      path: requestPath(event),
      statusCode: request.response?.statusCode,
      ...(review && {
        uid: review.uid,
        operation: review.operation,
        resource: review.subResource ? `${review.resource.resource}/${review.subResource}` : review.resource.resource,
        namespace: review.namespace || undefined,
        name: review.name || undefined,
        dryRun: review.dryRun,
      }),
      ...(event.outcome && { decision: event.outcome }),
      ...(event.failure && { failure: event.failure }),
      ...(event.learningLost && { learningLost: event.learningLost }),
      ...(event.caller && { caller: event.caller.subject }),
      latencyMs: start === undefined ? undefined : Math.round((performance.now() - start) * 1000) / 1000,
    });
  };

  return { before: requestLogBefore, after: requestLogAfter, onError: requestLogAfter };
}
