// EventRateLimit: Events are the apiserver's noisiest writes. A crash-looping pod, a flapping
// controller or one chatty tenant can send enough of them to slow etcd for everyone (the
// kubernetes/community proposal that led to this plugin began with an etcd struggling under event
// patches). This plugin puts token buckets in front of Event writes: one for the whole server, one
// per namespace, per user, or per source and involved object, as configured. Upstream:
// plugin/pkg/admission/eventratelimit.
//
// Upstream keeps its buckets in the apiserver's memory. Here they live in the shared store
// (lib/state tokenBuckets), so every Lambda instance draws from the same buckets and they survive
// restarts. A request takes a token from every configured bucket or from none (upstream takes from
// the buckets that have one even when another refuses); a retry of the same request uid takes
// nothing again. Dry runs are not counted, as upstream. A bucket is forgotten (expires) once it
// would be full again, which is all upstream's LRU eviction does for an idle key; upstream also
// evicts the least recently used bucket when more than cacheSize keys are live, which loosens the
// limit, and that we do not do: with more than cacheSize busy keys we are stricter than upstream.

import type { Decision } from '../../lib/admission/decision.js';
import { allowed, denied } from '../../lib/admission/decision.js';
import type { FieldError } from '../../lib/admission/field.js';
import { aggregateMessage, FieldPath, invalid, notSupported } from '../../lib/admission/field.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { ConfigFields, validationError } from '../../lib/config/fields.js';
import { createHash } from 'node:crypto';

const UPSTREAM_NAME = 'EventRateLimit';
const CONFIG_VERSION = 'eventratelimit.admission.k8s.io/v1alpha1';
const LIMIT_TYPES = ['Namespace', 'Server', 'SourceAndObject', 'User'] as const;
export type LimitType = (typeof LIMIT_TYPES)[number];
const isLimitType = (type: string): type is LimitType => (LIMIT_TYPES as readonly string[]).includes(type);
/** Upstream's LRU size when a limit sets none. */
const DEFAULT_CACHE_SIZE = 4096;
/** Bucket keys longer than this are stored by digest (a DynamoDB key holds at most 2048 bytes). */
const MAX_PLAIN_KEY_BYTES = 512;

const RULES = [
  {
    operations: ['CREATE', 'UPDATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['events'],
    scope: 'Namespaced',
  },
  {
    operations: ['CREATE', 'UPDATE'],
    apiGroups: ['events.k8s.io'],
    apiVersions: ['*'],
    resources: ['events'],
    scope: 'Namespaced',
  },
] as const;

export interface Limit {
  readonly type: LimitType;
  readonly qps: number;
  readonly burst: number;
  /** Accepted and validated as upstream; see the header for what a shared store makes of it. */
  readonly cacheSize: number;
}

export interface EventRateLimitConfig {
  /** No entry in the AdmissionConfiguration: no limits (upstream refuses to start instead). */
  readonly limits: readonly Limit[];
}

interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
}
interface EventLike {
  source?: { component?: string; host?: string };
  involvedObject?: ObjectReference;
  /** events.k8s.io: the same facts under their new names. */
  deprecatedSource?: { component?: string; host?: string };
  regarding?: ObjectReference;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** getSourceAndObjectKey: source component and host, then the involved object's identity. */
function sourceAndObjectKey(request: AdmissionRequest): string {
  const event = request.object as EventLike | null;
  if (event === null || typeof event !== 'object') return '';
  const core = request.kind.group === '';
  const source = (core ? event.source : event.deprecatedSource) ?? {};
  const object = (core ? event.involvedObject : event.regarding) ?? {};
  return [source.component, source.host, object.kind, object.namespace, object.name, object.uid, object.apiVersion]
    .map(text)
    .join('');
}

function keyOf(type: LimitType, request: AdmissionRequest): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return request.namespace;
    case 'User':
      return request.userInfo.username ?? '';
    case 'SourceAndObject':
      return sourceAndObjectKey(request);
  }
}

/**
 * The bucket's name in the store: the limit type (numbered when a type is configured twice, as
 * upstream gives each limit its own cache), then the key itself when short enough.
 */
function bucketName(limits: readonly Limit[], index: number, key: string): string {
  const type = limits[index].type;
  const repeat = limits.slice(0, index).filter((l) => l.type === type).length;
  const prefix = repeat === 0 ? type : `${type}.${repeat}`;
  if (Buffer.byteLength(key) <= MAX_PLAIN_KEY_BYTES) return `${prefix}#${key}`;
  return `${prefix}#sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** Upstream's Validate only looks at kind Event; ours also covers events.k8s.io (docs/plugins/event-rate-limit.md). */
function isEvent(request: AdmissionRequest): boolean {
  const { group, kind } = request.kind;
  return (group === '' || group === 'events.k8s.io') && kind === 'Event' && request.subResource === '';
}

/** apierrors.NewTooManyRequestsError(message). */
const tooManyRequests = (message: string): Decision => denied(`Too many requests: ${message}`, 429, 'TooManyRequests');

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** LoadConfiguration + ValidateConfiguration: every violation, each naming its field. */
function parseConfig(raw: unknown): EventRateLimitConfig {
  if (raw === undefined || raw === null) return { limits: [] };
  const entry = ConfigFields.of(UPSTREAM_NAME, raw, `a ${CONFIG_VERSION} Configuration`)
    .typeMeta([CONFIG_VERSION], ['Configuration'])
    .allow('apiVersion', 'kind', 'limits');
  const list = entry.list('limits');
  const errors: FieldError[] = [];
  const path = FieldPath.of('limits');
  if (list.length === 0) errors.push(invalid(path, entry.value.limits ?? null, 'must not be empty'));
  const parsed: Limit[] = [];
  list.forEach((limit, i) => {
    const at = path.index(i);
    limit.allow('type', 'qps', 'burst', 'cacheSize');
    const qps = limit.integer('qps', 0, INT32_MIN, INT32_MAX);
    const burst = limit.integer('burst', 0, INT32_MIN, INT32_MAX);
    const cacheSize = limit.integer('cacheSize', 0, INT32_MIN, INT32_MAX);
    const type = limit.string('type') ?? '';
    if (!isLimitType(type)) errors.push(notSupported(at.child('type'), type, LIMIT_TYPES));
    if (burst <= 0) errors.push(invalid(at.child('burst'), burst, 'must be positive'));
    if (qps <= 0) errors.push(invalid(at.child('qps'), qps, 'must be positive'));
    if (type !== 'Server' && cacheSize < 0)
      errors.push(invalid(at.child('cacheSize'), cacheSize, 'must not be negative'));
    if (isLimitType(type))
      parsed.push({ type, qps, burst, cacheSize: type === 'Server' ? 1 : cacheSize || DEFAULT_CACHE_SIZE });
  });
  const invalidConfiguration = validationError(UPSTREAM_NAME, errors);
  if (invalidConfiguration) throw invalidConfiguration;
  return { limits: parsed };
}

export default definePlugin<EventRateLimitConfig>({
  metadata: {
    upstreamName: UPSTREAM_NAME,
    name: 'event-rate-limit',
    summary:
      'Rate-limits Event writes with token buckets per server, namespace, user or source and object, shared by every instance through the store.',
    // Fails open: a rate limiter that cannot reach its buckets should not drop every event.
    validating: { rules: RULES, failurePolicy: 'Ignore', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS },
    writes: true,
    ledgers: ['tokenBuckets'],
    needs: [],
    // Upstream counts every namespace's events, the control plane's included; refusing an Event
    // cannot stop a controller, so nothing is gained by excluding system namespaces.
    systemNamespaces: 'include',
  },

  configure: (raw) => parseConfig(raw),

  async validate(request, { config, state }): Promise<Decision> {
    if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !isEvent(request)) return allowed();
    // Dry runs never reach etcd, so they are not limited (and take no token).
    if (request.dryRun) return allowed();
    const { limits } = config;
    if (limits.length === 0) return allowed();
    const keys = limits.map((limit) => keyOf(limit.type, request));
    const empty = await state.tokenBuckets.takeAll(
      limits.map((limit, i) => ({ key: bucketName(limits, i, keys[i]), spec: { qps: limit.qps, burst: limit.burst } })),
    );
    if (empty.length === 0) return allowed();
    // Each enforcer's plain error, aggregated, then one TooManyRequests error around them all, as
    // upstream's Validate does: `Too many requests: limit reached on type Namespace for key shop`.
    return tooManyRequests(
      aggregateMessage(empty.map((i) => `limit reached on type ${limits[i].type} for key ${keys[i]}`)),
    );
  },
});
