// ImagePolicyWebhook: which images may run is often decided outside the cluster (a registry
// scanner, a signing service, a compliance team's allow-list). This plugin asks such a backend, in
// an imagepolicy.k8s.io/v1alpha1 ImageReview over HTTPS, about every image of a new or changed pod
// and refuses the pod when the backend says no. Upstream: plugin/pkg/admission/imagepolicy.
//
// Configured with upstream's `imagePolicy` block (kubeConfigFile naming the backend, allowTTL,
// denyTTL, retryBackoff, defaultAllow). Answers are cached in the shared store (lib/state
// decisionCache) for allowTTL / denyTTL, so every Lambda instance benefits from one review; a dry
// run reads the cache but never fills it. When the backend cannot be reached, defaultAllow decides:
// refuse, or admit with upstream's failed-open audit annotation. Upstream also sets the pod
// annotation alpha.image-policy.k8s.io/failed-open, which only a mutating webhook can do, so the
// plugin is served as a mutating webhook (the same review, plus that annotation when failing
// open) and a validating one (the review of the final pod).

import { createHash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import type { Decision } from '../../lib/admission/decision.js';
import { allowed, forbidden, patched, unconvertible, withAuditAnnotations } from '../../lib/admission/decision.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { ConfigFields } from '../../lib/config/fields.js';
import { isObjectOfKind } from '../../lib/kube/objects.js';
import type { Pod } from '../../lib/kube/pod.js';
import type { WebhookClient } from '../../lib/kube/webhook-client.js';
import { BackendError, KubeconfigError, loadKubeconfigClient } from '../../lib/kube/webhook-client.js';
import type { PluginState } from '../../lib/admission/ports.js';

const UPSTREAM_NAME = 'ImagePolicyWebhook';
/** AuditKeyPrefix + ImagePolicyFailedOpenKeySuffix upstream; the apiserver prefixes our keys with the webhook name. */
export const FAILED_OPEN_AUDIT_KEY = 'failed-open';
/** api.ImagePolicyFailedOpenKey: the pod annotation upstream sets when failing open. */
export const FAILED_OPEN_POD_ANNOTATION = 'alpha.image-policy.k8s.io/failed-open';
const REVIEW_API_VERSION = 'imagepolicy.k8s.io/v1alpha1';
/** Each attempt's budget; the webhook's timeoutSeconds bounds them all. */
const ATTEMPT_TIMEOUT_MS = 3000;
/** webhook.DefaultRetryBackoffWithInitialDelay: 5 steps, factor 1.5. */
const RETRY_STEPS = 5;
const RETRY_FACTOR = 1.5;

const RULES = [
  { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
  {
    operations: ['UPDATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['pods/ephemeralcontainers'],
    scope: 'Namespaced',
  },
] as const;

export interface ImagePolicyWebhookConfig {
  /** undefined: no imagePolicy entry; every review fails (HTTP 500), as upstream refuses to start. */
  readonly backend: WebhookClient | undefined;
  /** Seconds an allow is cached; 0: not cached. */
  readonly allowTTL: number;
  /** Seconds a denial is cached; 0: not cached. */
  readonly denyTTL: number;
  readonly retryBackoffMs: number;
  readonly defaultAllow: boolean;
}

interface ReviewStatus {
  allowed: boolean;
  reason: string;
  annotations: Record<string, string>;
}

// --- configuration: upstream's normalizeWebhookConfig -------------------------------------------

/** Go's time.Duration String for the durations these ranges print (1ns, 500ms, 1.5s, 30m0s, 1h0m0s). */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${ns / 1e3}µs`;
  if (ns < 1e9) return `${ns / 1e6}ms`;
  let seconds = ns / 1e9;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  const s = `${Number(seconds.toFixed(9))}s`;
  if (hours > 0) return `${hours}h${minutes}m${s}`;
  if (minutes > 0) return `${minutes}m${s}`;
  return s;
}

/** normalizeConfigDuration: -1 disables, 0 (or absent) is the default, else min < value <= max. */
function duration(
  entry: ConfigFields,
  field: string,
  scaleNs: number,
  minNs: number,
  maxNs: number,
  defaultNs: number,
): number {
  const value = entry.integer(field, 0);
  if (value === -1) return 0;
  if (value === 0) return defaultNs;
  const ns = value * scaleNs;
  if (ns <= minNs || ns > maxNs)
    throw entry.error(
      field,
      `valid value is between ${goDuration(minNs)} and ${goDuration(maxNs)}, got ${goDuration(ns)}`,
    );
  return ns;
}

const SECOND = 1e9;
const MILLISECOND = 1e6;

function parseConfig(raw: unknown, baseDir: string): ImagePolicyWebhookConfig {
  if (raw === undefined || raw === null)
    return { backend: undefined, allowTTL: 300, denyTTL: 30, retryBackoffMs: 500, defaultAllow: false };
  const top = ConfigFields.of(UPSTREAM_NAME, raw, 'an object with imagePolicy').allow(
    'apiVersion',
    'kind',
    'imagePolicy',
  );
  const entry = top.child('imagePolicy');
  if (entry === undefined)
    throw top.error('imagePolicy', 'required: {kubeConfigFile, allowTTL, denyTTL, retryBackoff, defaultAllow}');
  entry.allow('kubeConfigFile', 'allowTTL', 'denyTTL', 'retryBackoff', 'defaultAllow');
  const retryBackoff = duration(entry, 'retryBackoff', MILLISECOND, 1, 5 * 60 * SECOND, 500 * MILLISECOND);
  const allowTTL = duration(entry, 'allowTTL', SECOND, SECOND, 30 * 60 * SECOND, 5 * 60 * SECOND);
  const denyTTL = duration(entry, 'denyTTL', SECOND, SECOND, 30 * 60 * SECOND, 30 * SECOND);
  const defaultAllow = entry.boolean('defaultAllow', false);
  const file = entry.string('kubeConfigFile');
  if (file === undefined)
    throw entry.error('kubeConfigFile', 'required: the kubeconfig naming the ImageReview backend');
  let backend: WebhookClient;
  try {
    backend = loadKubeconfigClient(isAbsolute(file) ? file : resolve(baseDir, file));
  } catch (error) {
    if (error instanceof KubeconfigError) throw entry.error('kubeConfigFile', error.message);
    throw error;
  }
  return {
    backend,
    allowTTL: allowTTL / SECOND,
    denyTTL: denyTTL / SECOND,
    retryBackoffMs: retryBackoff / MILLISECOND,
    defaultAllow,
  };
}

// --- the review -----------------------------------------------------------------------------------

/** Upstream handles pods proper and pods/ephemeralcontainers, on CREATE and UPDATE. */
function shouldIgnore(request: AdmissionRequest): boolean {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return true;
  if (request.resource.group !== '' || request.resource.resource !== 'pods') return true;
  return request.subResource !== '' && request.subResource !== 'ephemeralcontainers';
}

/** filterAnnotations: only `*.image-policy.k8s.io/*` annotations are the backend's business. */
function policyAnnotations(pod: Pod): Record<string, string> {
  const all = pod.metadata?.annotations ?? {};
  return Object.fromEntries(
    Object.keys(all)
      .filter((k) => k.includes('.image-policy.k8s.io/') && typeof all[k] === 'string')
      .sort()
      .map((k) => [k, all[k]]),
  );
}

/** The ImageReview spec, fields in Go's order and omitempty, so it doubles as the cache key. */
function reviewSpec(request: AdmissionRequest, pod: Pod): Record<string, unknown> {
  const lists =
    request.subResource === 'ephemeralcontainers'
      ? [pod.spec?.ephemeralContainers]
      : [pod.spec?.containers, pod.spec?.initContainers];
  const containers = lists
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .map((c) => (typeof c?.image === 'string' && c.image !== '' ? { image: c.image } : {}));
  const annotations = policyAnnotations(pod);
  return {
    ...(containers.length > 0 && { containers }),
    ...(Object.keys(annotations).length > 0 && { annotations }),
    ...(request.namespace !== '' && { namespace: request.namespace }),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One ImageReview, retried with upstream's backoff on transient failures (reset, 429, 500, 504). */
async function askBackend(
  backend: WebhookClient,
  spec: Record<string, unknown>,
  retryBackoffMs: number,
): Promise<ReviewStatus> {
  let delay = retryBackoffMs;
  for (let step = 1; ; step++) {
    let failure: BackendError;
    try {
      const response = await backend.post(
        { apiVersion: REVIEW_API_VERSION, kind: 'ImageReview', spec },
        ATTEMPT_TIMEOUT_MS,
      );
      if (response.statusCode >= 200 && response.statusCode < 300) return statusOf(response.body);
      failure = new BackendError(
        `Error contacting webhook: ${response.statusCode}`,
        [429, 500, 504].includes(response.statusCode),
      );
    } catch (error) {
      if (!(error instanceof BackendError)) throw error;
      failure = error;
    }
    if (!failure.transient || step >= RETRY_STEPS) throw failure;
    await pause(delay);
    delay *= RETRY_FACTOR;
  }
}

function statusOf(body: string): ReviewStatus {
  let review: { status?: { allowed?: unknown; reason?: unknown; auditAnnotations?: unknown } };
  try {
    review = JSON.parse(body);
  } catch {
    throw new BackendError('the backend answered something that is not an ImageReview', false);
  }
  const status = review?.status ?? {};
  const annotations =
    typeof status.auditAnnotations === 'object' && status.auditAnnotations !== null
      ? Object.fromEntries(Object.entries(status.auditAnnotations).filter(([, v]) => typeof v === 'string'))
      : {};
  return {
    allowed: status.allowed === true,
    reason: typeof status.reason === 'string' ? status.reason : '',
    annotations: annotations as Record<string, string>,
  };
}

type Outcome = { kind: 'reviewed'; status: ReviewStatus } | { kind: 'failed'; error: BackendError };

async function review(
  spec: Record<string, unknown>,
  config: ImagePolicyWebhookConfig,
  state: PluginState,
): Promise<Outcome> {
  if (!config.backend)
    throw new Error(`${UPSTREAM_NAME} is not configured: add its imagePolicy entry to the AdmissionConfiguration`);
  const key = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
  const cached = await state.decisionCache.get(key);
  if (cached) return { kind: 'reviewed', status: cached };
  let status: ReviewStatus;
  try {
    status = await askBackend(config.backend, spec, config.retryBackoffMs);
  } catch (error) {
    if (error instanceof BackendError) return { kind: 'failed', error };
    throw error;
  }
  await state.decisionCache.put(key, status, status.allowed ? config.allowTTL : config.denyTTL);
  return { kind: 'reviewed', status };
}

async function decide(
  request: AdmissionRequest,
  config: ImagePolicyWebhookConfig,
  state: PluginState,
  phase: 'mutate' | 'validate',
): Promise<Decision> {
  if (shouldIgnore(request)) return allowed();
  if (!isObjectOfKind<Pod>(request.object, 'Pod')) return unconvertible('Pod');
  const pod = request.object;
  const outcome = await review(reviewSpec(request, pod), config, state);
  if (outcome.kind === 'failed') {
    // webhookError: defaultAllow admits, marked as failed open; otherwise the failure is the answer.
    if (!config.defaultAllow) return forbidden(request, [outcome.error.message]);
    const marked = { [FAILED_OPEN_AUDIT_KEY]: 'true' };
    if (phase === 'validate' || pod.metadata?.annotations?.[FAILED_OPEN_POD_ANNOTATION] === 'true')
      return withAuditAnnotations(allowed(), marked);
    const mutated = {
      ...pod,
      metadata: {
        ...pod.metadata,
        annotations: { ...pod.metadata?.annotations, [FAILED_OPEN_POD_ANNOTATION]: 'true' },
      },
    };
    return withAuditAnnotations(patched(mutated), marked);
  }
  const { status } = outcome;
  const message = status.allowed
    ? undefined
    : status.reason !== ''
      ? `image policy webhook backend denied one or more images: ${status.reason}`
      : 'one or more images rejected by webhook backend';
  const decision = message === undefined ? allowed() : forbidden(request, [message]);
  return Object.keys(status.annotations).length ? withAuditAnnotations(decision, status.annotations) : decision;
}

export default definePlugin<ImagePolicyWebhookConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'image-policy-webhook',
    summary:
      "Asks an external ImageReview backend about every pod's images, caching its answers, and refuses the images it rejects.",
    // The mutating phase only adds upstream's failed-open pod annotation; it never fails a request.
    mutating: { rules: RULES, failurePolicy: 'Ignore', timeoutSeconds: 10, reinvocationPolicy: 'Never' },
    validating: { rules: RULES, failurePolicy: 'Fail', timeoutSeconds: 10 },
    writes: true,
    ledgers: ['decisionCache'],
    needs: [],
    systemNamespaces: 'exclude',
    requiresConfiguration: true,
  },

  configure: (raw, source) => parseConfig(raw, source.baseDir),

  admit: (request, { config, state }) => decide(request, config, state, 'mutate'),
  validate: (request, { config, state }) => decide(request, config, state, 'validate'),
});
