// What the kube-apiserver checks in a webhook's answer before it believes it (fixtures/apiserver/README.md
// items 4-6): a violation makes the call fail, whatever the plugin meant. Returns the broken
// rules, [] when the answer would be accepted.
import jsonpatch from 'fast-json-patch';
import type { GatewayResult } from '../../lib/http/event.js';

export function apiserverRuleViolations(
  sent: { apiVersion?: unknown; request?: { uid?: unknown; object?: unknown } },
  phase: 'mutate' | 'validate',
  result: GatewayResult,
): string[] {
  if (result.statusCode !== 200) return [`HTTP ${result.statusCode}`];
  const problems: string[] = [];
  let review: Record<string, any>;
  try {
    review = JSON.parse(result.body);
  } catch {
    return ['body is not JSON'];
  }
  if (review.kind !== 'AdmissionReview') problems.push(`kind ${review.kind}`);
  if (review.apiVersion !== sent.apiVersion)
    problems.push(`apiVersion ${review.apiVersion} answers ${String(sent.apiVersion)}`);
  const response = review.response;
  if (!response || typeof response !== 'object') return [...problems, 'no response'];
  if (response.uid !== sent.request?.uid) problems.push('uid differs');
  if (typeof response.allowed !== 'boolean') problems.push('allowed is not a boolean');
  if ((response.patch === undefined) !== (response.patchType === undefined))
    problems.push('patch and patchType not together');
  if (response.patch !== undefined) {
    if (phase === 'validate') problems.push('patch from a validating webhook');
    if (response.patchType !== 'JSONPatch') problems.push(`patchType ${response.patchType}`);
    try {
      const operations = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
      // Go's json-patch, as the apiserver applies it, has no ban on `__proto__` keys; fuzzed objects carry them.
      jsonpatch.applyPatch(structuredClone(sent.request?.object ?? null), operations, true, false, false);
    } catch (error) {
      problems.push(`patch does not apply: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  if (response.allowed === false && !(Number.isInteger(response.status?.code) && response.status.code >= 400))
    problems.push('denial without an error code');
  return problems;
}
