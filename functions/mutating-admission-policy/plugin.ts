// MutatingAdmissionPolicy: CEL mutations (KEP-3962) for clusters that cannot turn the feature on
// (alpha in 1.32, beta but off by default in 1.34 and 1.35, GA in 1.36; managed control planes set
// neither the feature gate nor runtime-config). Policies, bindings and params come from the
// AdmissionConfiguration, are compiled once at start, and are applied as the apiserver's MAP step
// applies them (mutating/dispatcher.go): policies in order, each binding and param an invocation,
// each invocation's mutations in order on the object the previous one left. Reinvocation is the
// apiserver's own: once any mutation was applied, every IfNeeded invocation runs once more, within
// this one call. The answer is one JSON patch from the object as received to the final object, or
// upstream's denial when a failurePolicy Fail policy errs.
// Upstream: staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating.
import { allowed, denied, patched, resourceNameForMessage, withWarnings } from '../../lib/admission/decision.js';
import type { Decision } from '../../lib/admission/decision.js';
import type { PhaseMetadata } from '../../lib/admission/plugin.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import {
  UnknownNamespaceError,
  resourcesMatch,
  webhookRulesFor,
  webhookRulesOverlap,
} from '../../lib/admission-policy/matching.js';
import { ParamError } from '../../lib/admission-policy/params.js';
import { RequestData } from '../../lib/admission-policy/request-data.js';
import type { BindingCommon } from '../../lib/admission-policy/spec.js';
import { isDeepStrictEqual } from 'node:util';
import { UPSTREAM_NAME, configure } from './config.js';
import type { CompiledPolicy, PluginConfig } from './config.js';
import { StrictDecodingError, mutate } from './mutate.js';

interface PolicyError {
  readonly policy: string;
  readonly binding?: string;
  readonly message: string;
}

/** One policy, binding and param: upstream's invocation, keyed as its reinvocation context keys it. */
interface Invocation {
  readonly policy: CompiledPolicy;
  readonly binding: BindingCommon;
  readonly param: unknown;
  readonly key: string;
}

const paramKey = (param: unknown): string => {
  const metadata = (param as { metadata?: { name?: string; namespace?: string } } | null)?.metadata;
  return param === null ? '' : `${metadata?.namespace ?? ''}/${metadata?.name ?? ''}`;
};

/** A view of the request with the object as mutated so far (selectors and params read it). */
const withObject = (request: AdmissionRequest, object: KubeObject | null): AdmissionRequest => ({ ...request, object });

class Dispatch {
  readonly errors: PolicyError[] = [];
  private object: KubeObject | null;
  private readonly data: RequestData;

  constructor(
    private readonly request: AdmissionRequest,
    private readonly config: PluginConfig,
    learnedNamespaces: ConstructorParameters<typeof RequestData>[1],
  ) {
    this.object = request.object;
    this.data = new RequestData(request, learnedNamespaces, config.unknownNamespace);
  }

  get result(): KubeObject | null {
    return this.object;
  }

  /** unknownNamespace Skip (lib/admission-policy/manifests.ts): one warning naming the missing sync. */
  get warnings(): string[] {
    return this.data.neverSeenWarnings(UPSTREAM_NAME);
  }

  /** generic.PolicyDispatcher's addConfigError: failurePolicy Ignore drops it, Fail refuses. */
  private error(policy: CompiledPolicy, binding: BindingCommon | undefined, message: string): void {
    if (policy.failurePolicy === 'Ignore') return;
    this.errors.push({ policy: policy.name, binding: binding?.name, message });
  }

  /** The invocations of the candidates for the object as it is now, in order. */
  async invocations(candidates: readonly CompiledPolicy[]): Promise<Invocation[]> {
    const request = withObject(this.request, this.object);
    const out: Invocation[] = [];
    for (const policy of candidates) {
      try {
        if (!(await resourcesMatch(policy.matchConstraints, request, this.data.labels))) continue;
      } catch (error) {
        if (!(error instanceof UnknownNamespaceError)) throw error;
        this.error(policy, undefined, `failed to configure policy: ${error.message}`);
        continue;
      }
      // A policy without bindings is not one the dispatcher sees, even with a configuration error.
      const paramKindError = policy.bindings.length > 0 ? this.config.params.paramKindError(policy) : undefined;
      if (paramKindError) {
        this.error(policy, undefined, `failed to configure policy: ${paramKindError.message}`);
        continue;
      }
      for (const binding of policy.bindings) {
        try {
          if (binding.matchResources && !(await resourcesMatch(binding.matchResources, request, this.data.labels)))
            continue;
          const params = this.config.params.collect(policy, binding, request.namespace);
          for (const param of params)
            out.push({ policy, binding, param, key: `${policy.name}\u0000${binding.name}\u0000${paramKey(param)}` });
        } catch (error) {
          if (!(error instanceof UnknownNamespaceError) && !(error instanceof ParamError)) throw error;
          this.error(policy, binding, `failed to configure binding: ${error.message}`);
        }
      }
    }
    return out;
  }

  /** Runs one invocation on the current object; true when one of its mutations was applied. */
  async run(invocation: Invocation): Promise<{ ran: boolean; applied: boolean }> {
    if (this.object === null) return { ran: true, applied: false };
    const { policy, binding, param } = invocation;
    const namespaceObject = policy.usesNamespaceObject ? await this.data.namespaceObject() : null;
    const data = this.data;
    const outcome = mutate(policy, this.object, {
      get oldObject() {
        return data.oldObject;
      },
      get request() {
        return data.requestValue;
      },
      params: param,
      namespaceObject,
    });
    for (const message of outcome.errors) this.error(policy, binding, message);
    this.object = outcome.object;
    return { ran: outcome.ran, applied: outcome.applied };
  }
}

/** The generic dispatcher's refusal: the first policy error's message, every error a cause. */
function refusal(request: AdmissionRequest, errors: readonly PolicyError[]): Decision {
  const messages = errors.map((e) =>
    e.binding === undefined
      ? `policy ${JSON.stringify(e.policy)} denied request: ${e.message}`
      : `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}`,
  );
  return denied(messages[0], 403, 'Invalid', {
    name: resourceNameForMessage(request),
    group: request.resource.group,
    kind: request.resource.resource,
    causes: messages.map((message) => ({ message })),
  });
}

/**
 * The emitted mutating webhook follows the loaded policies: their rules, and IfNeeded if any asks.
 * Fail and Ignore policies on rules no request shares get a webhook each (failurePolicyGroups):
 * each request then reaches one webhook, which runs every policy. Where their rules overlap, one
 * webhook serves them all and fails closed, since a Fail policy may apply.
 */
export function mutatingPhaseFor(
  config: PluginConfig,
): Pick<PhaseMetadata, 'rules' | 'failurePolicy' | 'reinvocationPolicy' | 'failurePolicyGroups'> {
  const { policies } = config;
  const failing = webhookRulesFor(policies.filter((p) => p.failurePolicy === 'Fail'));
  const ignoring = webhookRulesFor(policies.filter((p) => p.failurePolicy === 'Ignore'));
  const disjoint = !failing.some((a) => ignoring.some((b) => webhookRulesOverlap(a, b)));
  return {
    rules: webhookRulesFor(policies),
    failurePolicy: failing.length > 0 ? 'Fail' : 'Ignore',
    reinvocationPolicy: policies.some((p) => p.reinvocationPolicy === 'IfNeeded') ? 'IfNeeded' : 'Never',
    ...(failing.length > 0 &&
      ignoring.length > 0 &&
      disjoint && {
        failurePolicyGroups: [
          { rules: failing, failurePolicy: 'Fail' as const },
          { rules: ignoring, failurePolicy: 'Ignore' as const },
        ],
      }),
  };
}

export default definePlugin<PluginConfig>({
  metadata: {
    upstreamName: 'MutatingAdmissionPolicy',
    name: 'mutating-admission-policy',
    summary:
      'Applies CEL MutatingAdmissionPolicies and their bindings from the AdmissionConfiguration (JSONPatch and ApplyConfiguration), as the apiserver does.',
    // The rules, failurePolicy and reinvocationPolicy come from the loaded policies: mutatingPhaseFor.
    mutating: {
      rules: [],
      failurePolicy: 'Fail',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
      reinvocationPolicy: 'Never',
    },
    writes: false,
    needs: ['namespaces'],
    systemNamespaces: 'exclude',
  },

  configure,
  mutatingPhaseFor,
  inactiveReason: (config) =>
    config.policies.length === 0
      ? 'no policies to apply: add MutatingAdmissionPolicy manifests (or paths) to its entry (example: config/examples/mutating-admission-policy.yaml)'
      : undefined,

  async admit(request, context) {
    try {
      return await dispatchAll(request, context);
    } catch (error) {
      if (!(error instanceof StrictDecodingError)) throw error;
      // apierrors.NewInternalError: the dispatcher returns it as it is, whatever the failurePolicy.
      return denied(`Internal error occurred: ${error.message}`, 500, 'InternalError', {
        causes: [{ message: error.message }],
      });
    }
  },
});

/** One request through every candidate policy: upstream's dispatchInvocations and its reinvocation. */
async function dispatchAll(
  request: AdmissionRequest,
  context: { config: PluginConfig; state: { learnedNamespaces: ConstructorParameters<typeof RequestData>[1] } },
): Promise<Decision> {
  if (request.operation === 'DELETE' || request.object === null) return allowed();
  const candidates = context.config.index.candidates(request);
  if (candidates.length === 0) return allowed();
  const dispatch = new Dispatch(request, context.config, context.state.learnedNamespaces);
  // First round: every invocation; an IfNeeded one that ran is remembered for the second.
  const reinvocable: string[] = [];
  let applied = false;
  for (const invocation of await dispatch.invocations(candidates)) {
    const outcome = await dispatch.run(invocation);
    applied ||= outcome.applied;
    if (outcome.ran && invocation.policy.reinvocationPolicy === 'IfNeeded') reinvocable.push(invocation.key);
  }
  // The apiserver reinvokes its mutating chain once when a mutation was applied (the versioned
  // object is dirty); MAP then runs the IfNeeded invocations again, on the current object. A
  // policy error under Fail has refused the request before that.
  if (dispatch.errors.length === 0 && applied && reinvocable.length > 0) {
    for (const invocation of await dispatch.invocations(candidates))
      if (reinvocable.includes(invocation.key)) await dispatch.run(invocation);
  }
  if (dispatch.errors.length > 0) return withWarnings(refusal(request, dispatch.errors), ...dispatch.warnings);
  const result = dispatch.result;
  if (result === null || isDeepStrictEqual(result, request.object))
    return withWarnings(allowed(), ...dispatch.warnings);
  return withWarnings(patched(result), ...dispatch.warnings);
}
