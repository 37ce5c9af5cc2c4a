// What the emitter refuses to print: documents that fail the admissionregistration.k8s.io/v1
// OpenAPI schema (kubernetes-models' Ajv validation), the apiserver's own validation of webhook
// configurations (apiserverViolations, apiserver-validation.ts: what `kubectl apply` would refuse),
// or our own rules, which neither can express (https only, bounded timeouts, no protected
// resources, names that map back to plugins).
import {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import type { WebhookConfiguration } from './webhooks.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import { isCelError, run } from '@bufbuild/cel';
import { protectedResourcesReached, WEBHOOK_DOMAIN } from './webhooks.js';

export { apiserverViolations } from './apiserver-validation.js';

/** Throws the schema's ValidationError (field paths included) for an invalid document. */
export function validateSchema(doc: WebhookConfiguration): void {
  if (doc.kind === 'MutatingWebhookConfiguration') new MutatingWebhookConfiguration(doc as never).validate();
  else new ValidatingWebhookConfiguration(doc as never).validate();
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/** Our rules over a set of configurations; an empty list means they hold. */
export function ruleViolations(docs: readonly WebhookConfiguration[], pluginNames: readonly string[]): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const doc of docs) {
    for (const webhook of doc.webhooks ?? []) {
      const where = `${doc.kind} ${doc.metadata?.name}: webhook ${webhook.name}`;
      if (names.has(`${doc.kind}/${webhook.name}`)) problems.push(`${where}: name not unique`);
      names.add(`${doc.kind}/${webhook.name}`);
      if (
        !webhook.name.endsWith(`.${WEBHOOK_DOMAIN}`) ||
        !DNS_SUBDOMAIN.test(webhook.name) ||
        webhook.name.length > 253
      ) {
        problems.push(`${where}: name must be a DNS subdomain ending in .${WEBHOOK_DOMAIN}`);
      }
      if (!pluginNames.some((p) => webhook.name.startsWith(`${p}.`)))
        problems.push(`${where}: name does not begin with a plugin name and a dot`);
      const url = webhook.clientConfig.url;
      if (url === undefined || webhook.clientConfig.service !== undefined)
        problems.push(`${where}: clientConfig must be a url, not a service`);
      else {
        if (!url.startsWith('https://')) problems.push(`${where}: url must be https`);
        if (url.includes('?') || url.includes('#')) problems.push(`${where}: url must have no query or fragment`);
        try {
          new URL(url);
        } catch {
          problems.push(`${where}: url is not a URL`);
        }
      }
      const timeout = webhook.timeoutSeconds;
      if (timeout === undefined || !Number.isInteger(timeout) || timeout < 1 || timeout > 10)
        problems.push(`${where}: timeoutSeconds must be 1-10`);
      if (webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun')
        problems.push(`${where}: sideEffects must be None or NoneOnDryRun`);
      if (webhook.matchPolicy !== 'Equivalent') problems.push(`${where}: matchPolicy must be Equivalent`);
      if (JSON.stringify(webhook.admissionReviewVersions) !== JSON.stringify(['v1', 'v1beta1']))
        problems.push(`${where}: admissionReviewVersions must be [v1, v1beta1]`);
      const reached = (webhook.rules ?? []).flatMap((rule) =>
        protectedResourcesReached({
          apiGroups: rule.apiGroups ?? [],
          resources: rule.resources ?? [],
          // kubernetes-models types scope as a string; the schema check above holds it to the enum.
          scope: rule.scope as WebhookRule['scope'],
        }),
      );
      for (const p of new Set(reached)) {
        if (!excludedByMatchConditions(webhook.matchConditions ?? [], p))
          problems.push(`${where}: would be called for ${p.group}/${p.resource}`);
      }
    }
  }
  return problems;
}

/**
 * Whether the apiserver would skip the webhook for a request on this resource: some matchCondition
 * evaluates to false. An expression that errors does not count (the apiserver would then apply
 * the failurePolicy, worse still).
 */
export function excludedByMatchConditions(
  conditions: readonly { expression: string }[],
  resource: { group: string; resource: string },
): boolean {
  const request = {
    uid: 'check',
    kind: { group: resource.group, version: 'v1', kind: 'Check' },
    resource: { group: resource.group, version: 'v1', resource: resource.resource },
    subResource: '',
    name: 'check',
    namespace: 'kube-system',
    operation: 'CREATE',
    userInfo: { username: 'system:kube-controller-manager', groups: ['system:authenticated'] },
    dryRun: false,
  };
  return conditions.some(({ expression }) => {
    const result = run(expression, { request, object: {}, oldObject: null });
    return !isCelError(result) && result === false;
  });
}
