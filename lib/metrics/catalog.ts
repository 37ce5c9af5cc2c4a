// What is measured, named once. The names and labels follow the kube-apiserver's own admission
// metrics where they overlap (staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go:
// `apiserver_admission_webhook_request_total{name,type,operation,code,rejected}` and
// `apiserver_admission_webhook_admission_duration_seconds` with its buckets), so an operator can
// put the apiserver's view of a webhook and ours on one chart. Labels stay low-cardinality:
// plugin, phase, decision, operation, a status code or a reason from a closed list, and in a fleet the
// cluster (a name from the deployment's own list); never a
// namespace, a user, an object name or a path (the caller secret lives in url-secret paths).

export type MetricPhase = 'mutate' | 'validate' | 'learn' | 'none';

/** The answer, most telling first: a patched answer that also warns counts as `patched`. */
export type DecisionLabel = 'denied' | 'patched' | 'warned' | 'audited' | 'allowed';

/** 4xx: requests the apiserver would never send, or callers we refuse. Closed list by status code. */
export type MalformedReason =
  | 'bad_request'
  | 'caller_refused'
  | 'not_found'
  | 'too_large'
  | 'unsupported_media_type'
  | 'other_4xx';

/** 5xx: our own failures; the apiserver's failurePolicy decides. */
export type FailureReason = 'store_unavailable' | 'deadline' | 'bug';

export type StoreResult = 'ok' | 'conflict' | 'unavailable';

/** What one admission request came to, as the metrics see it. */
export interface RequestOutcome {
  readonly phase: MetricPhase;
  /** CREATE, UPDATE, DELETE, CONNECT; '' when the body was never decoded. */
  readonly operation: string;
  /** The HTTP status answered: 200 for every decision, 4xx/5xx for failures of the call. */
  readonly statusCode: number;
  readonly decision?: DecisionLabel;
  /** status.code of a denial (403, 429, ...). */
  readonly rejectionCode?: number;
  readonly dryRun: boolean;
  readonly malformed?: MalformedReason;
  readonly failure?: FailureReason;
  readonly learningLost: boolean;
  readonly seconds: number;
  readonly coldStart: boolean;
}

/** One call to the state store, as lib/state reports it. */
export interface StoreCall {
  /** GetItem, Query, PutItem, UpdateItem, DeleteItem, TransactWriteItems. */
  readonly operation: string;
  readonly result: StoreResult;
  readonly seconds: number;
}

const PREFIX = 'serverless_admission';

/** Prometheus names. The EMF names (CloudWatch) are in emf.ts. */
export const METRIC = {
  requests: `${PREFIX}_webhook_request_total`,
  duration: `${PREFIX}_webhook_admission_duration_seconds`,
  decisions: `${PREFIX}_webhook_decision_total`,
  dryRuns: `${PREFIX}_webhook_dry_run_total`,
  malformed: `${PREFIX}_webhook_malformed_total`,
  failures: `${PREFIX}_webhook_failure_total`,
  learningLost: `${PREFIX}_webhook_learning_lost_total`,
  storeCalls: `${PREFIX}_store_request_total`,
  storeDuration: `${PREFIX}_store_request_duration_seconds`,
  coldStarts: `${PREFIX}_cold_start_total`,
  readerEvents: `${PREFIX}_reader_event_total`,
  readerRelists: `${PREFIX}_reader_relist_total`,
  readerErrors: `${PREFIX}_reader_error_total`,
  readerLag: `${PREFIX}_reader_lag_seconds`,
  clusterThrottled: `${PREFIX}_cluster_throttled_total`,
} as const;

/** What the cluster reader reports (lib/cluster): labelled by resource (a closed list: the kinds read). */
export interface ReaderMetrics {
  /** Watch events recorded (ADDED, MODIFIED, DELETED, BOOKMARK). */
  event(resource: string, type: string): void;
  /** A complete list was read (at start without a resourceVersion, or after 410 Gone). */
  relist(resource: string): void;
  /** A list or watch failed: `gone` (410, relisted), `unavailable` (network, 5xx), `forbidden`, `store`. */
  error(resource: string, reason: 'gone' | 'unavailable' | 'forbidden' | 'store'): void;
  /** Seconds since the reader last knew it held everything of `resource` (0 while a watch is open). */
  lag(resource: string, seconds: () => number): void;
}

/** `apiserver_admission_webhook_admission_duration_seconds`' buckets: 5 ms to 25 s. */
export const APISERVER_WEBHOOK_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

/** DynamoDB calls take milliseconds; finer buckets at the low end. */
export const STORE_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export const HELP: Record<(typeof METRIC)[keyof typeof METRIC], string> = {
  [METRIC.requests]:
    'Admission requests answered, by plugin, phase, operation, HTTP status code and whether the request was rejected (denied or failed), as apiserver_admission_webhook_request_total.',
  [METRIC.duration]:
    'Time from the request reaching the handler to the answer, in seconds, with the buckets of apiserver_admission_webhook_admission_duration_seconds.',
  [METRIC.decisions]:
    'Decisions answered with HTTP 200: allowed, patched, warned (allowed with warnings), audited (allowed with audit annotations) or denied with rejection_code.',
  [METRIC.dryRuns]: 'Requests with dryRun: true (nothing is written for them).',
  [METRIC.malformed]:
    'Requests answered 4xx without a decision (not an AdmissionReview, too large, caller refused, no such phase).',
  [METRIC.failures]: 'Requests answered 5xx (the apiserver failurePolicy decides): store_unavailable, deadline or bug.',
  [METRIC.learningLost]:
    'Decisions answered whose observation of cluster state could not be recorded (store failure while learning).',
  [METRIC.storeCalls]:
    'Calls to the DynamoDB state store by operation and result (ok, conflict: a condition or transaction lost, unavailable).',
  [METRIC.storeDuration]: 'Latency of calls to the DynamoDB state store, in seconds.',
  [METRIC.coldStarts]: 'Handler instances started (Lambda cold starts; locally, once per plugin at start).',
  [METRIC.readerEvents]: 'Watch events the cluster reader recorded, by resource and event type.',
  [METRIC.readerRelists]:
    'Complete lists the cluster reader read, by resource (at start, and after a watch expired: 410 Gone).',
  [METRIC.readerErrors]:
    'Failed lists and watches of the cluster reader, by resource and reason (gone, unavailable, forbidden, store).',
  [METRIC.clusterThrottled]:
    "A fleet's requests refused 429 because their cluster was over its fair share (its throttle), by cluster.",
  [METRIC.readerLag]:
    'Seconds since the cluster reader last knew it held every object of the resource: 0 while its watch is open, growing while it cannot reach the apiserver.',
};

export function malformedReason(statusCode: number): MalformedReason {
  switch (statusCode) {
    case 400:
      return 'bad_request';
    case 401:
    case 403:
      return 'caller_refused';
    case 404:
    case 405:
      return 'not_found';
    case 413:
      return 'too_large';
    case 415:
      return 'unsupported_media_type';
    default:
      return 'other_4xx';
  }
}
