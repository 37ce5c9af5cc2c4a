// ValidatingAdmissionPolicy: CEL policies evaluated at admission, for clusters whose apiserver
// lacks the feature (before 1.26, or with the feature gate or API off, as on some managed control
// planes). Policies, bindings and params are loaded from the AdmissionConfiguration instead of the
// API, compiled once at start, and evaluated as upstream's dispatcher does: the first denial
// decides the answer, with upstream's message and status code; warnings and audit annotations are
// answered alongside. Upstream: staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating.
import type { AdmissionRequest } from '../../lib/admission/request.js';
import {
  allowed,
  auditAnnotationKey,
  denied,
  forbiddenMessage,
  resourceNameForMessage,
  withAuditAnnotations,
  withWarnings,
} from '../../lib/admission/decision.js';
import type { Decision as AdmissionDecision } from '../../lib/admission/decision.js';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import { UnknownNamespaceError, resourcesMatch, webhookRulesFor } from '../../lib/admission-policy/matching.js';
import { ParamError } from '../../lib/admission-policy/params.js';
import { RequestData } from '../../lib/admission-policy/request-data.js';
import { configure } from './config.js';
import type { CompiledBinding, CompiledPolicy, PluginConfig } from './config.js';
import { validate } from './evaluate.js';
import type { Bindings } from './evaluate.js';

/**
 * In-tree, these are `validation.policy.admission.k8s.io/validation_failure` and
 * `<policy>/<key>`. A webhook's keys are stored under `<webhook name>/<key>` and must be one name
 * segment, so ours are `validation_failure` and `<policy>_<key>` (auditAnnotationKey).
 */
export const VALIDATION_FAILURE_ANNOTATION = 'validation_failure';
const MAX_AUDIT_ANNOTATION_VALUE = 10 * 1024;
const CODES: Record<string, number> = { Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

interface Denial {
  readonly policy: string;
  readonly binding?: string;
  readonly message: string;
  readonly reason?: string;
  readonly fieldPath?: string;
}

/** What one request gathers across policies before it is answered. */
class Outcome {
  readonly denials: Denial[] = [];
  readonly warnings: string[] = [];
  readonly annotations: Record<string, string> = {};

  /** upstream addConfigError: failurePolicy Ignore drops it, Fail denies. */
  configError(policy: CompiledPolicy, binding: CompiledBinding | undefined, error: Error): void {
    if (policy.failurePolicy === 'Ignore') return;
    const message = `failed to configure ${binding ? 'binding' : 'policy'}: ${error.message}`;
    this.denials.push({ policy: policy.name, binding: binding?.name, message });
  }
}

async function dispatch(
  policy: CompiledPolicy,
  data: RequestData,
  config: PluginConfig,
  outcome: Outcome,
): Promise<void> {
  const { request } = data;
  if (!(await resourcesMatch(policy.matchConstraints, request, data.labels))) return;
  const collected = new Map<string, string[]>();
  for (const binding of policy.bindings) {
    try {
      if (binding.matchResources && !(await resourcesMatch(binding.matchResources, request, data.labels))) continue;
    } catch (error) {
      if (!(error instanceof UnknownNamespaceError)) throw error;
      outcome.configError(policy, binding, error);
      continue;
    }
    let params: unknown[];
    try {
      params = config.params.collect(policy, binding, request.namespace);
    } catch (error) {
      if (!(error instanceof ParamError)) throw error;
      outcome.configError(policy, binding, error);
      continue;
    }
    const namespaceObject = policy.usesNamespaceObject ? await data.namespaceObject() : null;
    for (const param of params) {
      const bindings: Bindings = { ...data.converted, params: param, namespaceObject };
      const result = validate(policy, bindings);
      result.decisions.forEach((decision, index) => {
        if (decision.action !== 'deny') return;
        for (const action of binding.validationActions) {
          if (action === 'Deny') outcome.denials.push({ policy: policy.name, binding: binding.name, ...decision });
          else if (action === 'Warn')
            outcome.warnings.push(
              `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${decision.message}`,
            );
          else if (!(VALIDATION_FAILURE_ANNOTATION in outcome.annotations)) {
            // Upstream adds one annotation per failure under one key; the apiserver keeps the first.
            const value = [
              {
                message: decision.message,
                policy: policy.name,
                binding: binding.name,
                expressionIndex: index,
                validationActions: binding.validationActions,
              },
            ];
            outcome.annotations[VALIDATION_FAILURE_ANNOTATION] = JSON.stringify(value);
          }
        }
      });
      for (const annotation of result.auditAnnotations) {
        if (annotation.error !== undefined)
          outcome.denials.push({ policy: policy.name, binding: binding.name, message: annotation.error });
        else {
          const values = collected.get(annotation.key) ?? [];
          const value = annotation.value.slice(0, MAX_AUDIT_ANNOTATION_VALUE);
          if (!values.includes(value)) values.push(value);
          collected.set(annotation.key, values);
        }
      }
    }
  }
  for (const [key, values] of collected) outcome.annotations[auditAnnotationKey(policy.name, key)] = values.join(', ');
}

function answer(request: AdmissionRequest, outcome: Outcome): AdmissionDecision {
  let decision: AdmissionDecision = allowed();
  const first = outcome.denials[0];
  if (first) {
    const text =
      first.binding === undefined
        ? `ValidatingAdmissionPolicy '${first.policy}' denied request: ${first.message}`
        : `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.message}`;
    const reason = first.reason ?? 'Invalid';
    const cause = first.fieldPath ? { message: text, field: first.fieldPath } : { message: text };
    decision = denied(forbiddenMessage(request, text), CODES[reason] ?? 422, reason, {
      name: resourceNameForMessage(request),
      group: request.resource.group,
      kind: request.resource.resource,
      causes: [cause],
    });
  }
  decision = withWarnings(decision, ...outcome.warnings);
  return Object.keys(outcome.annotations).length > 0 ? withAuditAnnotations(decision, outcome.annotations) : decision;
}

/** The union of the policies' matchConstraints rules, as webhook rules (resourceNames dropped). */
export const validatingRulesFor = (config: PluginConfig): WebhookRule[] => webhookRulesFor(config.policies);

export default definePlugin<PluginConfig>({
  metadata: {
    upstreamName: 'ValidatingAdmissionPolicy',
    name: 'validating-admission-policy',
    summary:
      'Evaluates CEL ValidatingAdmissionPolicies and their bindings from the AdmissionConfiguration, as the apiserver does.',
    // The rules come from the loaded policies: validatingRulesFor.
    validating: { rules: [], failurePolicy: 'Fail', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS },
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
  },

  configure,
  validatingRulesFor,
  inactiveReason: (config) =>
    config.policies.length === 0
      ? 'no policies to judge: add ValidatingAdmissionPolicy manifests (or paths) to its entry (example: config/examples/validating-admission-policy/admission.yaml)'
      : undefined,

  async validate(request, context) {
    const candidates = context.config.index.candidates(request);
    if (candidates.length === 0) return allowed();
    const data = new RequestData(request, context.state.learnedNamespaces, context.config.unknownNamespace);
    const outcome = new Outcome();
    for (const policy of candidates) {
      try {
        await dispatch(policy, data, context.config, outcome);
      } catch (error) {
        if (!(error instanceof UnknownNamespaceError)) throw error;
        outcome.configError(policy, undefined, error);
      }
    }
    // unknownNamespace Skip (lib/admission-policy/manifests.ts): one warning naming the missing sync.
    return withWarnings(answer(request, outcome), ...data.neverSeenWarnings('ValidatingAdmissionPolicy'));
  },
});
