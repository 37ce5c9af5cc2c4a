// The per-plugin `enforcement` and `exemptions` (lib/config/enforcement.ts), applied in one place
// for every plugin: the handler asks `isExempt` before the plugin runs, and passes the plugin's
// decision through `enforced` before anything learns from it or encodes it.
import type { Decision } from '../admission/decision.js';
import { isNamespaceRequest } from '../admission/learning.js';
import { allowed } from '../admission/decision.js';
import type { LabelSelector } from '../admission/label-selector.js';
import { selectorMatches } from '../admission/label-selector.js';
import type { LearnedNamespaces } from '../admission/ports.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { Enforcement, Exemptions } from '../config/enforcement.js';

/**
 * The audit annotation a refusal becomes in Audit mode. The apiserver records it in the audit
 * event as `<webhook name>/audit-mode-refusal`, e.g.
 * `always-pull-images.validate.serverless-admission.io/audit-mode-refusal`.
 */
export const AUDIT_REFUSAL_KEY = 'audit-mode-refusal';

/**
 * Deny: the decision as the plugin made it. Warn and Audit soften a refusal into an admission
 * that carries its message (as a warning, or as an audit annotation), keeping the plugin's own
 * warnings and annotations; an admission or a mutation is the same in every mode.
 */
export function enforced(decision: Decision, enforcement: Enforcement): Decision {
  if (decision.kind !== 'denied' || enforcement === 'Deny') return decision;
  const { warnings, auditAnnotations } = decision;
  const message = decision.status.message;
  if (enforcement === 'Warn') {
    return { kind: 'allowed', warnings: [...(warnings ?? []), message], ...(auditAnnotations && { auditAnnotations }) };
  }
  return {
    kind: 'allowed',
    ...(warnings && { warnings }),
    auditAnnotations: { ...auditAnnotations, [AUDIT_REFUSAL_KEY]: message },
  };
}

/** The namespace a request is in; for a Namespace itself, its own name (as the webhook matcher). */
const namespaceOf = (request: AdmissionRequest): string =>
  request.namespace !== '' ? request.namespace : isNamespaceRequest(request) ? request.name : '';

const labelsOf = (object: AdmissionRequest['object']): Readonly<Record<string, string>> =>
  (object?.metadata?.labels as Record<string, string> | undefined) ?? {};

/**
 * Every object the request carries matches: an UPDATE that removes the exempting label is judged
 * (the emitted objectSelector, which the apiserver matches against either object, calls us too).
 */
function objectsMatch(selector: LabelSelector, request: AdmissionRequest): boolean {
  const objects = [request.object, request.oldObject].filter((o) => o !== null);
  return objects.length > 0 && objects.every((o) => selectorMatches(selector, labelsOf(o)));
}

/**
 * The namespace's labels: a Namespace request's own object; else the learned namespace when the
 * plugin learns namespaces (`learned`), else unknown (the emitted namespaceSelector exempts it).
 * Cluster-scoped requests have no namespace and are never exempt by namespaceSelector.
 */
async function namespaceMatches(
  selector: LabelSelector,
  request: AdmissionRequest,
  learned: LearnedNamespaces | undefined,
): Promise<boolean> {
  if (isNamespaceRequest(request)) return objectsMatch(selector, request);
  if (request.namespace === '' || learned === undefined) return false;
  const namespace = await learned.get(request.namespace);
  return namespace !== undefined && selectorMatches(selector, namespace.labels);
}

/** True when the plugin must not judge this request: by namespace, user, group or labels. */
export async function isExempt(
  request: AdmissionRequest,
  exemptions: Exemptions,
  learned: LearnedNamespaces | undefined,
): Promise<boolean> {
  const namespace = namespaceOf(request);
  if (namespace !== '' && exemptions.namespaces.includes(namespace)) return true;
  if (exemptions.usernames.includes(request.userInfo.username ?? '')) return true;
  if ((request.userInfo.groups ?? []).some((g) => exemptions.groups.includes(g))) return true;
  if (exemptions.objectSelector && objectsMatch(exemptions.objectSelector, request)) return true;
  if (exemptions.namespaceSelector) return namespaceMatches(exemptions.namespaceSelector, request, learned);
  return false;
}

/** The answer to an exempt request: admitted unchanged. */
export const exempt = (): Decision => allowed();
