import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { AnyAdmissionPlugin, PhaseFunction } from '../admission/plugin.js';
import type { Phase } from '../admission/response.js';
import { encodeAdmissionResponse } from '../admission/response.js';
import { configurePlugin, loadAdmissionConfiguration } from '../config/admission-configuration.js';
import type { PluginMetrics } from '../metrics/index.js';
import { pluginMetrics } from '../metrics/index.js';
import { admissionMetrics } from './admission-metrics.js';
import { admissionReviewParser } from './admission-review-parser.js';
import { bodyLimit } from './body-limit.js';
import type { CallerAuth } from './caller-identity.js';
import { callerAuthFromEnv, callerIdentity } from './caller-identity.js';
import { notFound } from './errors.js';
import type { GatewayEvent, GatewayResult } from './event.js';
import { requestPhase } from './event.js';
import { httpErrors } from './http-errors.js';
import { requestLog } from './request-log.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { PluginState } from '../state/ports.js';
import { NO_STATE, StoreUnavailableError } from '../state/ports.js';
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
}

export type AdmissionHandler = (event: GatewayEvent, context: Context) => Promise<GatewayResult>;

/**
 * The Lambda entry of one plugin: the lib's middlewares around the plugin's pure functions.
 * Configuration and caller policy are read once, when the module loads (Lambda's init phase), so
 * a bad configuration fails the cold start instead of a request.
 */
export function createAdmissionHandler<Config>(plugin: AnyAdmissionPlugin, options: AdmissionHandlerOptions<Config> = {}): AdmissionHandler {
  const config = 'config' in options ? options.config : configurePlugin<Config>(plugin, loadAdmissionConfiguration());
  const callerAuth = options.callerAuth ?? callerAuthFromEnv();
  const phases: Record<Phase, PhaseFunction<Config> | undefined> = { mutate: plugin.admit, validate: plugin.validate };
  const stateful = plugin.metadata.writes || plugin.metadata.needs.length > 0;
  if (stateful && !options.state) {
    throw new Error(`${plugin.metadata.upstreamName} needs the store: build its handler with createStatefulAdmissionHandler (lib/state)`);
  }
  const stateFor = options.state ?? (() => NO_STATE);
  const { observe } = options;
  const metrics = options.metrics ?? pluginMetrics(plugin.metadata.name);

  // The phase is read from the path once, here; the handler below trusts it.
  const phaseOf = new WeakMap<GatewayEvent, Phase>();
  const admissionRoute = {
    before: function admissionRouteBefore(request: { event: GatewayEvent }): void {
      const phase = requestPhase(request.event);
      if (phase === undefined || phases[phase] === undefined) {
        throw notFound(`${plugin.metadata.name} serves ${Object.keys(phases).filter((p) => phases[p as Phase]).join(' and ')} only`);
      }
      phaseOf.set(request.event, phase);
    },
  };

  return middy<GatewayEvent, GatewayResult>()
    .use(requestLog(plugin.metadata.name))
    .use(admissionMetrics(metrics))
    .use(httpErrors())
    .use(admissionRoute)
    .use(callerIdentity(callerAuth))
    .use(bodyLimit({ maxBytes: options.maxBodyBytes }))
    .use(admissionReviewParser())
    .handler(async function admissionReview(event: GatewayEvent): Promise<GatewayResult> {
      const phase = phaseOf.get(event)!;
      const request = event.admissionRequest!;
      const state = stateFor(request);
      const decision = await phases[phase]!(request, { config: config as Config, state });
      if (observe) {
        try {
          await observe(request, phase, decision, state);
        } catch (error) {
          if (!(error instanceof StoreUnavailableError)) throw error;
          event.learningLost = error.message;
        }
      }
      const review = encodeAdmissionResponse(request, decision, phase);
      const { response } = review;
      event.outcome = {
        allowed: response!.allowed,
        patched: response!.patch !== undefined,
        warned: response!.warnings !== undefined,
        audited: response!.auditAnnotations !== undefined,
        ...(response!.status && { code: response!.status.code }),
      };
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(review) };
    }) as unknown as AdmissionHandler;
}
