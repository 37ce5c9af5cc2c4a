// The apiserver's side of admission webhooks, as a pure function: which registered webhooks a
// request reaches (rules, namespaceSelector, objectSelector, matchConditions), the mutating ones
// called one after the other in order, each seeing the object as the ones before patched it, a
// reinvocation of the IfNeeded ones when a later webhook changed the object, then the validating
// ones on the final object, and failurePolicy deciding what a failed call means. `npm run check`
// and `npm run audit` run it offline over the emitted configurations; a test runs it against the
// local server over HTTPS. Calls, CEL and patching are ports: this module only decides.
//
// Upstream: staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/ (generic/webhook.go
// ShouldCallHook, mutating/dispatcher.go, mutating/reinvocationcontext.go,
// validating/dispatcher.go, errors/statuserror.go).
import type { JsonPatchOperation } from './diff.js';
import type { LabelSelector } from './label-selector.js';
import { selectorMatches } from './label-selector.js';
import { isNamespaceRequest } from './learning.js';
import type { WebhookRule } from './plugin.js';
import type { AdmissionRequest } from './request.js';
import { decodeAdmissionReview } from './request.js';
import type { AdmissionRequestWire, AdmissionResponseWire, KubeObject, StatusWire } from './types.js';
import { ruleSends } from './webhook-rules.js';

/** One registered webhook, as a Mutating/ValidatingWebhookConfiguration states it. */
export interface ChainWebhook {
  readonly name: string;
  readonly phase: 'mutate' | 'validate';
  readonly rules: readonly WebhookRule[];
  readonly namespaceSelector?: LabelSelector;
  readonly objectSelector?: LabelSelector;
  readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
}

/** What a call returned: the webhook's response, or why there was none (HTTP error, timeout...). */
export type WebhookAnswer = { readonly response: AdmissionResponseWire } | { readonly failure: string };

export interface ChainPorts<W extends ChainWebhook> {
  /** Sends the request (a fresh uid per call, as the apiserver's CreateAdmissionObjects). */
  call(webhook: W, request: AdmissionRequestWire): Promise<WebhookAnswer>;
  /** The webhook's matchConditions: all true (or none) to call it, one false to skip, or an error. */
  conditionsMatch(webhook: W, request: AdmissionRequest): boolean | { readonly error: string };
  /** A namespace's labels; undefined when it does not exist (the apiserver's NotFound). */
  namespaceLabels(name: string): Readonly<Record<string, string>> | undefined;
  /** RFC 6902; throws when the patch does not apply. */
  applyPatch(object: KubeObject, patch: readonly JsonPatchOperation[]): KubeObject;
  /** A fresh uid for each call. */
  uid(): string;
  /**
   * What the apiserver's registry does between the two phases (BeforeCreate: uid,
   * creationTimestamp, the strategy's PrepareForCreate), so validating webhooks see the object
   * as it will be stored. Absent: the object goes on unchanged.
   */
  beforeValidation?(request: AdmissionRequestWire): KubeObject | null;
}

export type CallOutcome = 'allowed' | 'patched' | 'denied' | 'failed-open' | 'failed';

export interface WebhookCall<W extends ChainWebhook> {
  readonly webhook: W;
  /** 1: the first pass; 2: a reinvocation (IfNeeded). */
  readonly round: 1 | 2;
  readonly outcome: CallOutcome;
  readonly status?: StatusWire;
  readonly warnings: readonly string[];
  /** The operations that changed the object ([] when none). */
  readonly patch: readonly JsonPatchOperation[];
  /** The object the webhook received (for a readable diff of its patch). */
  readonly before: KubeObject | null;
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** Why the call failed (outcome failed or failed-open). */
  readonly error?: string;
}

export interface ChainResult<W extends ChainWebhook> {
  readonly allowed: boolean;
  /** The apiserver's status when the request is refused. */
  readonly status?: { readonly code: number; readonly message: string; readonly reason?: string };
  readonly calls: readonly WebhookCall<W>[];
  /** The object as the validating webhooks saw it (after every mutation). */
  readonly object: KubeObject | null;
  readonly warnings: readonly string[];
}

const labelsOf = (object: KubeObject | null | undefined): Readonly<Record<string, string>> =>
  (object?.metadata?.labels as Record<string, string> | undefined) ?? {};

const isEmpty = (selector: LabelSelector | undefined) =>
  selector === undefined ||
  (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0);

type Match = 'call' | 'skip' | { readonly error: string; readonly notFound?: true };

/** generic/webhook.go ShouldCallHook: namespaceSelector, objectSelector, then rules. */
function shouldCall<W extends ChainWebhook>(webhook: W, request: AdmissionRequest, ports: ChainPorts<W>): Match {
  const { namespaceSelector, objectSelector } = webhook;
  if (namespaceSelector && !isEmpty(namespaceSelector)) {
    // A cluster-scoped object other than a Namespace is never excluded by namespace.
    if (request.namespace !== '' || isNamespaceRequest(request)) {
      let labels: Readonly<Record<string, string>> | undefined;
      // A Namespace being created or updated is matched by its own labels (not yet stored).
      if (isNamespaceRequest(request) && request.operation !== 'DELETE') labels = labelsOf(request.object);
      else labels = ports.namespaceLabels(request.namespace || request.name);
      if (labels === undefined)
        return { error: `namespaces "${request.namespace || request.name}" not found`, notFound: true };
      if (!selectorMatches(namespaceSelector, labels)) return 'skip';
    }
  }
  if (objectSelector && !isEmpty(objectSelector)) {
    const matches = (o: KubeObject | null) => o !== null && selectorMatches(objectSelector, labelsOf(o));
    if (!matches(request.object) && !matches(request.oldObject)) return 'skip';
  }
  return webhook.rules.some((rule) => ruleSends(rule, request)) ? 'call' : 'skip';
}

/** errors/statuserror.go ToStatusErr: the message kubectl prints for a webhook's refusal. */
function deniedStatus(name: string, status: StatusWire | undefined) {
  const deniedBy = `admission webhook "${name}" denied the request`;
  const message = status?.message ? `${deniedBy}: ${status.message}` : `${deniedBy} without explanation`;
  const code = status?.code && status.code !== 0 ? status.code : 400;
  return { code, message, ...(status?.reason && { reason: status.reason }) };
}

const internalError = (message: string) => ({
  code: 500,
  message: `Internal error occurred: ${message}`,
  reason: 'InternalError',
});

function decodePatch(response: AdmissionResponseWire): JsonPatchOperation[] {
  if (response.patch === undefined) return [];
  if (response.patchType !== 'JSONPatch')
    throw new Error(`unsupported patch type ${JSON.stringify(response.patchType)}`);
  const operations = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as unknown;
  if (!Array.isArray(operations)) throw new Error('the patch is not a JSON array');
  return operations as JsonPatchOperation[];
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The view the plugins and rules read, from the wire request as it now is. */
const viewOf = (wire: AdmissionRequestWire): AdmissionRequest =>
  decodeAdmissionReview({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: wire });

type Refusal = NonNullable<ChainResult<never>['status']>;

/**
 * Runs one request through the webhooks: `webhooks` in the apiserver's order (configurations
 * sorted by name, then each configuration's webhooks in order). Mutating ones run first, then
 * validating ones; the first refusal ends the chain, as the apiserver's.
 */
export async function runChain<W extends ChainWebhook>(
  webhooks: readonly W[],
  initial: AdmissionRequestWire,
  ports: ChainPorts<W>,
): Promise<ChainResult<W>> {
  const calls: WebhookCall<W>[] = [];
  const warnings: string[] = [];
  let wire: AdmissionRequestWire = { ...initial };

  /** Whether to call; a matching or condition error decided by failurePolicy (or not at all). */
  function decideCall(webhook: W, view: AdmissionRequest, round: 1 | 2): 'call' | 'skip' | Refusal {
    const match = shouldCall(webhook, view, ports);
    if (match === 'skip') return 'skip';
    if (match !== 'call') {
      // The namespace lookup failing is the request's failure, whatever the failurePolicy.
      return { code: 404, message: match.error, reason: 'NotFound' };
    }
    const conditions = ports.conditionsMatch(webhook, view);
    if (conditions === true) return 'call';
    if (conditions === false) return 'skip';
    const error = `failed calling webhook "${webhook.name}": failed to evaluate match conditions: ${conditions.error}`;
    const failedOpen = webhook.failurePolicy === 'Ignore';
    calls.push({
      webhook,
      round,
      outcome: failedOpen ? 'failed-open' : 'failed',
      warnings: [],
      patch: [],
      before: wire.object ?? null,
      auditAnnotations: {},
      error,
    });
    return failedOpen ? 'skip' : internalError(error);
  }

  /** One call, recorded; a refusal (denial, failed Fail call, patch that does not apply) ends the chain. */
  async function invoke(webhook: W, round: 1 | 2): Promise<{ changed: boolean; refused?: Refusal }> {
    const before = wire.object ?? null;
    const answer = await ports.call(webhook, { ...wire, uid: ports.uid() });
    const record = (fields: Partial<WebhookCall<W>> & Pick<WebhookCall<W>, 'outcome'>) =>
      calls.push({ webhook, round, warnings: [], patch: [], before, auditAnnotations: {}, ...fields });
    if ('failure' in answer) {
      const error = `failed calling webhook "${webhook.name}": ${answer.failure}`;
      if (webhook.failurePolicy === 'Ignore') {
        record({ outcome: 'failed-open', error });
        return { changed: false };
      }
      record({ outcome: 'failed', error });
      return { changed: false, refused: internalError(error) };
    }
    const { response } = answer;
    const own = response.warnings ?? [];
    warnings.push(...own);
    const auditAnnotations = response.auditAnnotations ?? {};
    if (!response.allowed) {
      record({ outcome: 'denied', status: response.status, warnings: own, auditAnnotations });
      return { changed: false, refused: deniedStatus(webhook.name, response.status) };
    }
    let patch: JsonPatchOperation[] = [];
    let after = before;
    try {
      patch = webhook.phase === 'mutate' ? decodePatch(response) : [];
      if (patch.length > 0 && before !== null) after = ports.applyPatch(before, patch);
    } catch (error) {
      // A patch that does not apply fails the request whatever the failurePolicy.
      const message = `failed to apply the patch of webhook "${webhook.name}": ${(error as Error).message}`;
      record({ outcome: 'failed', error: message, warnings: own, auditAnnotations });
      return { changed: false, refused: internalError(message) };
    }
    const changed = after !== before && !sameJson(after, before);
    record({ outcome: changed ? 'patched' : 'allowed', warnings: own, patch: changed ? patch : [], auditAnnotations });
    if (changed) wire = { ...wire, object: after };
    return { changed };
  }

  const mutating = webhooks.filter((w) => w.phase === 'mutate');
  const validating = webhooks.filter((w) => w.phase === 'validate');
  const done = (status: ChainResult<W>['status']): ChainResult<W> => ({
    allowed: status === undefined,
    ...(status && { status }),
    calls,
    object: wire.object ?? null,
    warnings,
  });

  // mutating/reinvocationcontext.go: IfNeeded webhooks called so far, and those to call again.
  const invokedReinvocable = new Set<string>();
  let reinvoke = new Set<string>();
  let reinvocationNeeded = false;
  for (const webhook of mutating) {
    const decision = decideCall(webhook, viewOf(wire), 1);
    if (decision === 'skip') continue;
    if (decision !== 'call') return done(decision);
    const { changed, refused } = await invoke(webhook, 1);
    if (refused) return done(refused);
    if (changed) {
      reinvoke = new Set([...reinvoke, ...invokedReinvocable]);
      reinvocationNeeded = true;
    }
    if (webhook.reinvocationPolicy === 'IfNeeded') invokedReinvocable.add(webhook.name);
  }
  // The admission chain runs once more when a webhook changed the object; only the IfNeeded
  // webhooks called before that change are called again, and nobody for the first time.
  if (reinvocationNeeded) {
    for (const webhook of mutating) {
      if (!reinvoke.has(webhook.name)) continue;
      const decision = decideCall(webhook, viewOf(wire), 2);
      if (decision === 'skip') continue;
      if (decision !== 'call') return done(decision);
      const { refused } = await invoke(webhook, 2);
      if (refused) return done(refused);
    }
  }

  // validating/dispatcher.go: every matching webhook sees the final object; the apiserver calls
  // them in parallel and answers with the first refusal in order.
  if (ports.beforeValidation) wire = { ...wire, object: ports.beforeValidation(wire) };
  const final = viewOf(wire);
  const refusals: Refusal[] = [];
  for (const webhook of validating) {
    const decision = decideCall(webhook, final, 1);
    if (decision === 'skip') continue;
    if (decision !== 'call') {
      refusals.push(decision);
      continue;
    }
    const { refused } = await invoke(webhook, 1);
    if (refused) refusals.push(refused);
  }
  return done(refusals[0]);
}
