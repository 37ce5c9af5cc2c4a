// How a PodSecurity answer of the native policies is compared with the webhook's: the same
// decision; a refusal with the webhook's message after the apiserver's policy prefix; the same
// warnings after the prefix the apiserver gives a policy's warning; the audit policy's failure
// message as the webhook's audit-violations; the same enforce-policy and exempt annotations.
import { nativeName } from '../../../infra/native/objects.js';

export const ENFORCE = nativeName('pod-security', 'enforce');
export const WARN = nativeName('pod-security', 'warn');
export const AUDIT = nativeName('pod-security', 'audit');

export const warningPrefix = `Validation failed for ValidatingAdmissionPolicy '${WARN}' with binding '${WARN}': `;
export const refusalPrefix = `ValidatingAdmissionPolicy '${ENFORCE}' with binding '${ENFORCE}' denied request: `;

/** What an answer says, whoever gave it, in the built-in's words. */
export interface PodSecurityAnswer {
  readonly allowed: boolean;
  /** The text after `is forbidden: ` (and, for the policies, after their prefix). */
  readonly refusal?: string;
  readonly warnings: readonly string[];
  readonly auditViolations?: string;
  readonly enforcePolicy?: string;
  readonly exempt?: string;
}

const afterForbidden = (message: string) =>
  message.slice(message.indexOf(' is forbidden: ') + ' is forbidden: '.length);

export function webhookAnswer(response: {
  allowed: boolean;
  status?: { message?: string };
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}): PodSecurityAnswer {
  const a = response.auditAnnotations ?? {};
  return {
    allowed: response.allowed,
    ...(!response.allowed && { refusal: afterForbidden(response.status?.message ?? '') }),
    warnings: response.warnings ?? [],
    ...(a['audit-violations'] !== undefined && { auditViolations: a['audit-violations'] }),
    ...(a['enforce-policy'] !== undefined && { enforcePolicy: a['enforce-policy'] }),
    ...(a.exempt !== undefined && { exempt: a.exempt }),
  };
}

/** The policies' answer; `annotations` keyed `<policy>/<key>` (the apiserver) or `<policy>_<key>` (the engine). */
export function nativeAnswer(response: {
  allowed: boolean;
  status?: { message?: string };
  warnings?: string[];
  annotations: Record<string, string>;
}): PodSecurityAnswer {
  const a = response.annotations;
  const find = (policy: string, key: string) => a[`${policy}/${key}`] ?? a[`${policy}_${key}`];
  const failure = a['validation.policy.admission.k8s.io/validation_failure'] ?? a.validation_failure;
  const audit = failure === undefined ? undefined : (JSON.parse(failure) as { message: string; policy: string }[]);
  const auditViolations = audit?.find((f) => f.policy === AUDIT)?.message;
  const refusal = response.allowed ? undefined : afterForbidden(response.status?.message ?? '');
  const enforcePolicy = find(ENFORCE, 'enforce-policy');
  const exempt = find(AUDIT, 'exempt');
  return {
    allowed: response.allowed,
    ...(refusal !== undefined && {
      refusal: refusal.startsWith(refusalPrefix)
        ? refusal.slice(refusalPrefix.length)
        : `(not the policy's) ${refusal}`,
    }),
    warnings: (response.warnings ?? []).map((w) => (w.startsWith(warningPrefix) ? w.slice(warningPrefix.length) : w)),
    ...(auditViolations !== undefined && { auditViolations }),
    ...(enforcePolicy !== undefined && { enforcePolicy }),
    ...(exempt !== undefined && { exempt }),
  };
}
