import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { apiserverTimeout } from './admission-metrics.js';
import type { GatewayEvent, GatewayResult } from './event.js';
import { requestPath } from './event.js';
import { logEnabled, logRecord } from './log.js';

/**
 * The path as logged: only `/<plugin>/<phase>`. In url-secret mode the segment before them is the
 * caller's secret, and a log line is no place for it (nor for whatever else a stranger sent).
 */
export function loggedPath(event: GatewayEvent): string {
  const segments = requestPath(event).split('/').filter(Boolean);
  const kept = segments.slice(-2).join('/');
  return segments.length > 2 ? `/<redacted>/${kept}` : `/${kept}`;
}

/** LOG_SAMPLE_ALLOWED: the fraction of plain allowed answers (no patch, warning or annotation) logged (0..1, default 1). */
export function allowedSampleRate(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.LOG_SAMPLE_ALLOWED === undefined || env.LOG_SAMPLE_ALLOWED === '' ? 1 : Number(env.LOG_SAMPLE_ALLOWED);
  if (!(value >= 0 && value <= 1)) throw new Error(`LOG_SAMPLE_ALLOWED must be a number from 0 to 1, got ${JSON.stringify(env.LOG_SAMPLE_ALLOWED)}`);
  return value;
}

/**
 * One JSON line per request: who asked what, what we answered, how long it took, with the Lambda
 * request id, whether this instance was cold, and the apiserver's `?timeout=`. Refusals, failures
 * and lost observations are always logged, and so are patches, warnings and audit annotations;
 * plain allowed answers are sampled (LOG_SAMPLE_ALLOWED).
 */
export function requestLog(plugin: string, sampleAllowed = allowedSampleRate()): MiddlewareObj<GatewayEvent, GatewayResult> {
  const started = new WeakMap<GatewayEvent, number>();
  let coldStart = true;

  const requestLogBefore = (request: { event: GatewayEvent }): void => {
    if (logEnabled()) started.set(request.event, performance.now());
  };

  const requestLogAfter = (request: { event: GatewayEvent; response: GatewayResult | null; context?: Context }): void => {
    const cold = coldStart;
    coldStart = false;
    if (!logEnabled()) return;
    const { event } = request;
    const { outcome } = event;
    const plainAllow =
      request.response?.statusCode === 200 &&
      outcome !== undefined &&
      outcome.allowed &&
      !outcome.patched &&
      !outcome.warned &&
      !outcome.audited &&
      !event.learningLost;
    if (plainAllow && sampleAllowed < 1 && Math.random() >= sampleAllowed) return;
    const review = event.admissionRequest;
    const start = started.get(event);
    logRecord({
      level: event.failure && event.failure.statusCode >= 500 ? 'error' : event.learningLost ? 'warn' : 'info',
      plugin,
      path: loggedPath(event),
      statusCode: request.response?.statusCode,
      requestId: request.context?.awsRequestId,
      coldStart: cold,
      timeout: apiserverTimeout(event),
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
