import { usesStore } from '../admission/plugin.js';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { AnyAdmissionPlugin, PhaseFunction, WebhookRule } from '../admission/plugin.js';
import type { Phase } from '../admission/response.js';
import { encodeAdmissionResponse } from '../admission/response.js';
import { configurePlugin, loadAdmissionConfiguration, pluginEnforcement } from '../config/admission-configuration.js';
import type { Enforcement, Exemptions } from '../config/enforcement.js';
import { ENFORCE, hasExemptions } from '../config/enforcement.js';
import { enforced, exempt, isExempt } from './enforcement.js';
import { ruleSends } from '../admission/webhook-rules.js';
import type { PluginMetrics } from '../metrics/index.js';
import { pluginMetrics } from '../metrics/index.js';
import { admissionMetrics } from './admission-metrics.js';
import { admissionReviewParser } from './admission-review-parser.js';
import { bodyLimit } from './body-limit.js';
import type { CallerAuth } from './caller-identity.js';
import { callerAuthFromEnv, callerIdentity } from './caller-identity.js';
import { notFound } from './errors.js';
import type { GatewayEvent, GatewayResult } from './event.js';
import { requestPath } from './event.js';
import type { AdmissionContext, AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';
import { admissionInvocation, established } from './invocation.js';
import { formatWebhookPath, parseWebhookPath, redactWebhookPath } from './webhook-path.js';
import { httpErrors } from './http-errors.js';
import { requestLog } from './request-log.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { PluginState } from '../admission/ports.js';
import { NO_STATE, StoreUnavailableError } from '../admission/ports.js';
import type { Decision } from '../admission/decision.js';

export interface AdmissionHandlerOptions<Config> {
  /** Already validated configuration (the local server loads every plugin's at start). */
  readonly config?: Config;
  readonly callerAuth?: CallerAuth;
  readonly maxBodyBytes?: number;
  /**
   * The request-scoped state ports. Stateless plugins get NO_STATE; stateful ones are built with
   * lib/state's createStatefulAdmissionHandler, so that only their bundles carry the AWS SDK.
   */
  readonly state?: (request: AdmissionRequest) => PluginState;
  /**
   * Runs after the plugin decided and before the answer is encoded (lib/state learns here). A
   * store failure while learning loses the observation, not the answer: the decision was made
   * without it, so it stands, and the request log says what was lost (level warn).
   */
  readonly observe?: (request: AdmissionRequest, phase: Phase, decision: Decision, state: PluginState) => Promise<void>;
  /** Where this plugin's counters go (lib/metrics); lib/state passes the one its store reports to. */
  readonly metrics?: PluginMetrics;
  /**
   * The entry's `enforcement` and `exemptions`. Read from the AdmissionConfiguration with the
   * configuration when `config` is not given; otherwise Deny and no exemptions unless given.
   */
  readonly enforcement?: Enforcement;
  readonly exemptions?: Exemptions;
}

export type AdmissionHandler = (event: GatewayEvent, context: Context) => Promise<GatewayResult>;

/** Reads the route from the path once; a path of another shape, plugin or phase is a 404. */
function admissionRoute(plugin: string, phases: readonly Phase[], secretInPath: boolean): AdmissionMiddleware {
  const known = new Set([plugin]);
  const admissionRouteBefore = (request: AdmissionMiddyRequest): void => {
    const path = requestPath(request.event);
    const route = parseWebhookPath(path, secretInPath);
    if (route === undefined || route.plugin !== plugin || !phases.includes(route.phase)) {
      throw notFound(
        `no webhook at ${redactWebhookPath(path, secretInPath, known)}: ${plugin} serves ${phases.map((p) => formatWebhookPath({ plugin, phase: p })).join(' and ')}`,
      );
    }
    request.context.admission.route = route;
  };
  return { before: admissionRouteBefore };
}

/**
 * The Lambda entry of one plugin: the lib's middlewares around the plugin's pure functions.
 * Configuration and caller policy are read once, when the module loads (Lambda's init phase), so
 * a bad configuration fails the cold start instead of a request.
 */
export function createAdmissionHandler<Config>(
  plugin: AnyAdmissionPlugin,
  options: AdmissionHandlerOptions<Config> = {},
): AdmissionHandler {
  const fromFile = 'config' in options ? undefined : loadAdmissionConfiguration();
  const config = fromFile === undefined ? options.config : configurePlugin<Config>(plugin, fromFile);
  const entry = fromFile === undefined ? ENFORCE : pluginEnforcement(plugin, fromFile);
  const enforcement = options.enforcement ?? entry.enforcement;
  const exemptions = options.exemptions ?? entry.exemptions;
  const exempts = hasExemptions(exemptions);
  const learnsNamespaces = plugin.metadata.needs.includes('namespaces');
  // Exemptions cover what the plugin judges. Requests it only records (a ResourceQuota write, a
  // pod's DELETE that releases its charge) are recorded whoever sends them: state stays true.
  const judgedRules: Record<Phase, readonly WebhookRule[]> = {
    mutate:
      exempts && plugin.mutatingPhaseFor
        ? plugin.mutatingPhaseFor(config).rules
        : (plugin.metadata.mutating?.rules ?? []),
    validate:
      exempts && plugin.validatingRulesFor
        ? plugin.validatingRulesFor(config)
        : (plugin.metadata.validating?.rules ?? []),
  };
  const callerAuth = options.callerAuth ?? callerAuthFromEnv();
  const phases: Record<Phase, PhaseFunction<Config> | undefined> = { mutate: plugin.admit, validate: plugin.validate };
  const served = (Object.keys(phases) as Phase[]).filter((p) => phases[p] !== undefined);
  const stateful = usesStore(plugin.metadata);
  if (stateful && !options.state) {
    throw new Error(
      `${plugin.metadata.upstreamName} needs the store: build its handler with createStatefulAdmissionHandler (lib/state)`,
    );
  }
  const stateFor = options.state ?? (() => NO_STATE);
  const { observe } = options;
  const secretInPath = callerAuth.mode === 'url-secret';
  const metrics = options.metrics ?? pluginMetrics(plugin.metadata.name);

  const handler = middy<GatewayEvent, GatewayResult, Error, AdmissionContext>()
    .use(admissionInvocation())
    .use(requestLog(plugin.metadata.name, { secretInPath }))
    // Before httpErrors, so its onError runs after httpErrors answered and still sees the error.
    .use(admissionMetrics(metrics))
    .use(httpErrors())
    .use(admissionRoute(plugin.metadata.name, served, secretInPath))
    .use(callerIdentity(callerAuth))
    .use(bodyLimit({ maxBytes: options.maxBodyBytes }))
    .use(admissionReviewParser())
    .handler(async function admissionReview(_event: GatewayEvent, context: AdmissionContext): Promise<GatewayResult> {
      const { phase } = established(context, 'route');
      const request = established(context, 'review');
      const decide = phases[phase] as PhaseFunction<Config>;
      const state = stateFor(request);
      // An exempt request never reaches the plugin: admitted unchanged, nothing charged or counted.
      // What the handler learns (observe) is cluster state, not a side effect: it still learns.
      const isExemptRequest =
        exempts &&
        judgedRules[phase].some((rule) => ruleSends(rule, request)) &&
        (await isExempt(request, exemptions, learnsNamespaces ? state.learnedNamespaces : undefined));
      // Softened before anything learns from it: a warned request is admitted, and learned as one.
      const decision = isExemptRequest
        ? exempt()
        : enforced(await decide(request, { config: config as Config, state }), enforcement);
      if (observe) {
        try {
          await observe(request, phase, decision, state);
        } catch (error) {
          if (!(error instanceof StoreUnavailableError)) throw error;
          context.admission.learningLost = error.message;
        }
      }
      const review = encodeAdmissionResponse(request, decision, phase);
      const { response } = review;
      if (response) {
        context.admission.outcome = {
          allowed: response.allowed,
          patched: response.patch !== undefined,
          warned: response.warnings !== undefined,
          audited: response.auditAnnotations !== undefined,
          ...(isExemptRequest && { exempt: true }),
          ...(enforcement !== 'Deny' && { enforcement }),
          ...(response.status && { code: response.status.code }),
        };
      }
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(review) };
    });
  // middy's handler type carries the AdmissionContext it builds itself; callers pass Lambda's.
  return (event, context) => handler(event, context as AdmissionContext);
}
