// The apiserver's webhook rule matching (admission/plugin/webhook/predicates/rules), once: the
// handler uses it to tell judged requests from learned ones, and the offline chain
// (lib/admission/chain.ts) to decide which emitted webhooks a request reaches.
import { isNamespaceRequest } from './learning.js';
import type { WebhookRule } from './plugin.js';
import type { AdmissionRequest } from './request.js';

const allows = (list: readonly string[], value: string) => list.includes('*') || list.includes(value);

/** The apiserver's rule matching (webhook/predicates/rules): does `rule` send this request? */
export function ruleSends(rule: WebhookRule, request: AdmissionRequest): boolean {
  const { group, version, resource } = request.resource;
  const clusterScoped = request.namespace === '' || isNamespaceRequest(request);
  if (rule.scope === 'Namespaced' && clusterScoped) return false;
  if (rule.scope === 'Cluster' && !clusterScoped) return false;
  if (!allows(rule.operations, request.operation)) return false;
  if (!allows(rule.apiGroups, group) || !allows(rule.apiVersions, version)) return false;
  // rules.Matcher.resource: `pods/*` matches pods and every subresource of pods, `*` every
  // resource without a subresource, `*/*` everything.
  return rule.resources.some((entry) => {
    const slash = entry.indexOf('/');
    const [main, sub] = slash < 0 ? [entry, ''] : [entry.slice(0, slash), entry.slice(slash + 1)];
    return (main === '*' || main === resource) && (sub === '*' || sub === request.subResource);
  });
}
