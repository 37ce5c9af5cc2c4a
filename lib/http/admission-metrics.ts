import type { Context } from 'aws-lambda';
import type { DecisionLabel, FailureReason, PluginMetrics, RequestOutcome } from '../metrics/index.js';
import { malformedReason } from '../metrics/index.js';
import { StoreUnavailableError } from '../admission/ports.js';
import type { GatewayEvent } from './event.js';
import { logEnabled } from './log.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest, Outcome } from './invocation.js';

/** The apiserver's `?timeout=10s` (its webhook timeoutSeconds), in seconds; undefined when absent. */
export function apiserverTimeout(event: GatewayEvent): string | undefined {
  if ('queryStringParameters' in event && event.queryStringParameters?.timeout)
    return event.queryStringParameters.timeout;
  if ('rawQueryString' in event && event.rawQueryString)
    return new URLSearchParams(event.rawQueryString).get('timeout') ?? undefined;
  return undefined;
}

/** `10s`, `1m`, `500ms` (Go durations as the apiserver formats them) → seconds. */
export function durationSeconds(text: string | undefined): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text ?? '');
  if (!match) return undefined;
  const value = Number(match[1]);
  return match[2] === 'ms' ? value / 1000 : match[2] === 'm' ? value * 60 : value;
}

function decisionOf(outcome: Outcome): DecisionLabel {
  if (!outcome.allowed) return 'denied';
  if (outcome.patched) return 'patched';
  if (outcome.warned) return 'warned';
  if (outcome.audited) return 'audited';
  return 'allowed';
}

/**
 * A 5xx: the store was out, the apiserver's deadline passed (it has already given up and applied
 * its failurePolicy), or anything else, which is a bug of ours.
 */
function failureOf(error: unknown, seconds: number, event: GatewayEvent, context: Context | undefined): FailureReason {
  if (error instanceof StoreUnavailableError) return 'store_unavailable';
  const name = (error as Error | undefined)?.name;
  const timeout = durationSeconds(apiserverTimeout(event));
  const lambdaOut = context?.getRemainingTimeInMillis ? context.getRemainingTimeInMillis() <= 0 : false;
  if (name === 'TimeoutError' || name === 'AbortError' || lambdaOut || (timeout !== undefined && seconds >= timeout))
    return 'deadline';
  return 'bug';
}

/**
 * Moves one plugin's counters once per request: after the answer (`after`), or after httpErrors
 * turned a failure into one (`onError`: registered before httpErrors, so it runs after it and
 * still sees the error to classify it).
 */
export function admissionMetrics(metrics: PluginMetrics): AdmissionMiddleware {
  let coldStart = true;

  const admissionMetricsAfter = (request: AdmissionMiddyRequest): void => {
    const { event } = request;
    const { admission } = request.context;
    const seconds = (performance.now() - (admission?.startedAt ?? performance.now())) / 1000;
    const statusCode = request.response?.statusCode ?? 500;
    const review = admission?.review;
    const answered = admission?.outcome;
    const decision = statusCode === 200 && answered ? decisionOf(answered) : undefined;
    // Plain properties, no spreads: this runs on every request (docs/performance.md).
    const outcome: RequestOutcome = {
      // A refused caller's request never gets a served route: the endpoint its path names (one of three).
      phase: admission?.route?.endpoint ?? admission?.requested?.endpoint ?? 'none',
      operation: review?.operation ?? '',
      statusCode,
      decision,
      rejectionCode: decision === 'denied' ? (answered?.code ?? 403) : undefined,
      dryRun: review?.dryRun === true,
      malformed: statusCode >= 400 && statusCode < 500 ? malformedReason(statusCode) : undefined,
      failure: statusCode >= 500 ? failureOf(request.error, seconds, event, request.context) : undefined,
      learningLost: admission?.learningLost !== undefined,
      seconds,
      coldStart,
    };
    coldStart = false;
    // In Lambda with logs on, the request log writes this line with its own fields (one write).
    if (metrics.emfLine && admission && logEnabled()) admission.metricsLine = metrics.emfLine(outcome);
    else metrics.recordRequest(outcome);
  };

  return { after: admissionMetricsAfter, onError: admissionMetricsAfter };
}
