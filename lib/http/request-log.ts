import { apiserverTimeout } from './admission-metrics.js';
import { fleetPath, requestPath } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';
import { bounded, logEnabled, logRecord, MAX_LOGGED_STACK, writeLogLine } from './log.js';
import { redactWebhookPath } from './webhook-path.js';

/** LOG_SAMPLE_ALLOWED: the fraction of plain allowed answers (no patch, warning or annotation) logged (0..1, default 1). */
export function allowedSampleRate(env: NodeJS.ProcessEnv = process.env): number {
  const value =
    env.LOG_SAMPLE_ALLOWED === undefined || env.LOG_SAMPLE_ALLOWED === '' ? 1 : Number(env.LOG_SAMPLE_ALLOWED);
  if (!(value >= 0 && value <= 1))
    throw new Error(`LOG_SAMPLE_ALLOWED must be a number from 0 to 1, got ${JSON.stringify(env.LOG_SAMPLE_ALLOWED)}`);
  return value;
}

export interface RequestLogOptions {
  /** url-secret mode: the path's first segment is the caller's secret, logged redacted. */
  readonly secretInPath: boolean;
  readonly sampleAllowed?: number;
  /** A fleet's cluster: the path is logged as called, its first segment the cluster's name (no secret). */
  readonly cluster?: string;
}

/**
 * One JSON line per request: who asked what, what we answered, how long it took, with the Lambda
 * request id, whether this instance was cold, and the apiserver's `?timeout=`. Refusals, failures
 * and lost observations are always logged, and so are patches, warnings and audit annotations;
 * plain allowed answers are sampled (LOG_SAMPLE_ALLOWED). In url-secret mode the path is logged
 * with the secret redacted: CloudWatch is read by more people than the webhook configuration.
 * Every text field is bounded (log.ts's `bounded`, the cut marked): a forged review's names and a
 * failure's text are the caller's to make as long as the body limit allows.
 */
export function requestLog(plugin: string, options: RequestLogOptions): AdmissionMiddleware {
  const known = new Set(options.cluster === undefined ? [plugin] : [plugin, options.cluster]);
  const pathOf = options.cluster === undefined ? requestPath : fleetPath;
  const sampleAllowed = options.sampleAllowed ?? allowedSampleRate();
  let coldStart = true;

  const requestLogAfter = (request: AdmissionMiddyRequest): void => {
    const cold = coldStart;
    coldStart = false;
    if (!logEnabled()) return;
    const { admission } = request.context;
    const { review, outcome, failure, learningLost, caller, metricsLine } = admission ?? {};
    const plainAllow =
      request.response?.statusCode === 200 &&
      outcome !== undefined &&
      outcome.allowed &&
      !outcome.patched &&
      !outcome.warned &&
      !outcome.audited &&
      !learningLost;
    if (plainAllow && sampleAllowed < 1 && Math.random() >= sampleAllowed) {
      if (metricsLine !== undefined) writeLogLine(metricsLine); // the metrics are never sampled
      return;
    }
    // The EMF line already names the plugin (a dimension); every other key differs from its keys.
    // One object in the line's field order, absent fields undefined (JSON leaves them out): no
    // spread of partial objects, which cost a copy each on every request.
    const record = {
      level: failure && failure.statusCode >= 500 ? 'error' : learningLost ? 'warn' : 'info',
      plugin: metricsLine === undefined ? plugin : undefined,
      path: bounded(redactWebhookPath(pathOf(request.event), options.secretInPath, known)),
      statusCode: request.response?.statusCode,
      requestId: bounded(request.context.awsRequestId),
      coldStart: cold,
      timeout: bounded(apiserverTimeout(request.event)),
      uid: bounded(review?.uid),
      operation: bounded(review?.operation),
      resource: bounded(
        review && (review.subResource ? `${review.resource.resource}/${review.subResource}` : review.resource.resource),
      ),
      namespace: bounded(review?.namespace || undefined),
      name: bounded(review?.name || undefined),
      dryRun: review?.dryRun,
      answer: outcome,
      failure: failure && {
        statusCode: failure.statusCode,
        reason: bounded(failure.reason),
        stack: bounded(failure.stack, MAX_LOGGED_STACK),
      },
      learningLost: bounded(learningLost || undefined),
      caller: bounded(caller?.subject),
      latencyMs:
        admission === undefined ? undefined : Math.round((performance.now() - admission.startedAt) * 1000) / 1000,
    };
    logRecord(record, metricsLine);
  };

  return { after: requestLogAfter, onError: requestLogAfter };
}
