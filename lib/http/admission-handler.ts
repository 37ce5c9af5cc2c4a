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
import { notFound, refusedCapability } from './errors.js';
import type { GatewayEvent, GatewayResult } from './event.js';
import { fleetPath, gatewayStage, requestPath } from './event.js';
import type { AdmissionContext, AdmissionMiddleware, AdmissionMiddyRequest } from './invocation.js';
import { admissionInvocation, established } from './invocation.js';
import type { Endpoint } from './webhook-path.js';
import { formatWebhookPath, parseWebhookPath, redactWebhookPath } from './webhook-path.js';
import { learningEndpointRules } from '../admission/learning.js';
import { packagedAdmissionConfiguration } from '../config/admission-configuration.js';
import type { PackagedConfiguration } from '../config/documents.js';
import { callerAuthModeFromEnv, clusterCallerAuth, packagedFleetFromEnv } from './fleet.js';
import { readsCluster } from '../config/cluster-reader.js';
import { httpErrors } from './http-errors.js';
import { requestLog } from './request-log.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { PluginState } from '../admission/ports.js';
import { NO_STATE, StoreUnavailableError } from '../admission/ports.js';
import type { Decision } from '../admission/decision.js';
import { allowed } from '../admission/decision.js';

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
   * The learning endpoint's work (lib/state learns here): what the request teaches, given whether
   * the plugin itself admits it. A store failure while learning loses the observation, not the
   * answer (the learning webhook always admits), and the request log says what was lost (warn).
   */
  readonly observe?: (request: AdmissionRequest, decision: Decision, state: PluginState) => Promise<void>;
  /** Where this plugin's counters go (lib/metrics); lib/state passes the one its store reports to. */
  readonly metrics?: PluginMetrics;
  /**
   * The entry's `enforcement` and `exemptions`. Read from the AdmissionConfiguration with the
   * configuration when `config` is not given; otherwise Deny and no exemptions unless given.
   */
  readonly enforcement?: Enforcement;
  readonly exemptions?: Exemptions;
  /**
   * The deployment reads the cluster (lib/config/cluster-reader; default: from the environment):
   * no request teaches, so the learning endpoint records nothing but what its phases observe.
   */
  readonly readsCluster?: boolean;
}

export type AdmissionHandler = (event: GatewayEvent, context: Context) => Promise<GatewayResult>;

/**
 * Reads the route from the path once, in two steps around the caller check (callerIdentity): the
 * route the path names first, then, for a caller already known, whether this function serves it.
 * So a path of another shape, plugin or endpoint is a 404 listing what is served only for a caller
 * with a valid capability (or certificate); anyone else gets the refusal every other caller gets.
 */
function admissionRoute(
  plugin: string,
  endpoints: readonly Endpoint[],
  capabilityInPath: boolean,
  cluster: string | undefined,
): { requested: AdmissionMiddleware; served: AdmissionMiddleware } {
  // A cluster's name is no secret (a capability is 86 characters; a name at most 63): logged as is.
  const known = new Set(cluster === undefined ? [plugin] : [plugin, cluster]);
  const shape = { withCapability: capabilityInPath, inFleet: cluster !== undefined };
  // A fleet's cluster is the path's first segment as called (lib/http/event.ts's fleetPath).
  const pathOf = cluster === undefined ? requestPath : fleetPath;
  const requestedRouteBefore = (request: AdmissionMiddyRequest): void => {
    request.context.admission.requested = parseWebhookPath(pathOf(request.event), shape);
  };
  const servedRouteBefore = (request: AdmissionMiddyRequest): void => {
    const route = request.context.admission.requested;
    if (
      route === undefined ||
      route.plugin !== plugin ||
      route.cluster !== cluster ||
      !endpoints.includes(route.endpoint)
    ) {
      throw notFound(
        `no webhook at ${redactWebhookPath(pathOf(request.event), capabilityInPath, known)}: ${plugin} serves ${endpoints.map((e) => formatWebhookPath({ plugin, endpoint: e, ...(cluster !== undefined && { cluster }) })).join(', ')}`,
      );
    }
    request.context.admission.route = route;
  };
  return { requested: { before: requestedRouteBefore }, served: { before: servedRouteBefore } };
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
  const fleet = packagedFleetHandler(plugin, options, (clusterOptions) =>
    createAdmissionHandler(plugin, clusterOptions),
  );
  if (fleet !== undefined) return fleet;
  const fromFile = 'config' in options ? undefined : loadAdmissionConfiguration();
  const config = fromFile === undefined ? options.config : configurePlugin<Config>(plugin, fromFile);
  const entry = fromFile === undefined ? ENFORCE : pluginEnforcement(plugin, fromFile);
  const enforcement = options.enforcement ?? entry.enforcement;
  const exemptions = options.exemptions ?? entry.exemptions;
  const exempts = hasExemptions(exemptions);
  const learnsNamespaces = plugin.metadata.needs.includes('namespaces');
  // What each judging endpoint is sent, as the emitted webhook's rules say. A request outside them
  // never reaches the plugin: a judging URL shown in an error cannot be used to make the plugin
  // record what only its learning endpoint records (a release, a confirmation).
  const judgedRules: Record<Phase, readonly WebhookRule[]> = {
    mutate: plugin.mutatingPhaseFor ? plugin.mutatingPhaseFor(config).rules : (plugin.metadata.mutating?.rules ?? []),
    validate: plugin.validatingRulesFor ? plugin.validatingRulesFor(config) : (plugin.metadata.validating?.rules ?? []),
  };
  const callerAuth = options.callerAuth ?? callerAuthFromEnv();
  const phases: Record<Phase, PhaseFunction<Config> | undefined> = { mutate: plugin.admit, validate: plugin.validate };
  const judging = (Object.keys(phases) as Phase[]).filter((p) => phases[p] !== undefined);
  const reader = options.readsCluster ?? readsCluster();
  const learnedRules = learningEndpointRules(plugin.metadata, reader);
  const endpoints: Endpoint[] = [...judging, ...(learnedRules.length > 0 ? (['learn'] as const) : [])];
  const stateful = usesStore(plugin.metadata);
  if (stateful && !options.state) {
    throw new Error(
      `${plugin.metadata.upstreamName} needs the store: build its handler with createStatefulAdmissionHandler (lib/state)`,
    );
  }
  const stateFor = options.state ?? (() => NO_STATE);
  const { observe } = options;
  const capabilityInPath = callerAuth.mode === 'url-secret';
  const metrics = options.metrics ?? pluginMetrics(plugin.metadata.name, undefined, callerAuth.cluster);
  // The phase whose metadata names requests it only observes (ResourceQuota's validate), if any.
  const observer = (['validate', 'mutate'] as const)
    .map((phase) => ({
      phase: phases[phase],
      rules: (phase === 'validate' ? plugin.metadata.validating : plugin.metadata.mutating)?.observes ?? [],
    }))
    .find(
      (p): p is { phase: PhaseFunction<Config>; rules: readonly WebhookRule[] } =>
        p.phase !== undefined && p.rules.length > 0,
    );
  const sends = (rules: readonly WebhookRule[], request: AdmissionRequest) =>
    rules.some((rule) => ruleSends(rule, request));

  /** A judging endpoint: the plugin's decision, enforced, on what the phase's rules send. */
  async function judge(phase: Phase, request: AdmissionRequest): Promise<{ decision: Decision; exempt?: true }> {
    if (!sends(judgedRules[phase], request)) return { decision: allowed() };
    const state = stateFor(request);
    // An exempt request never reaches the plugin: admitted unchanged, nothing charged or counted.
    if (exempts && (await isExempt(request, exemptions, learnsNamespaces ? state.learnedNamespaces : undefined)))
      return { decision: exempt(), exempt: true };
    const decide = phases[phase] as PhaseFunction<Config>;
    return { decision: enforced(await decide(request, { config: config as Config, state }), enforcement) };
  }

  /**
   * The learning endpoint: records what the request teaches and always admits. The side effects a
   * plugin observes (ResourceQuota's releases and confirmations) run the plugin as usual; a request
   * the plugin also judges is judged once more without writing (a dry run's state), so a write the
   * plugin refuses teaches nothing, as the apiserver would never have stored it.
   */
  async function learn(request: AdmissionRequest): Promise<void> {
    if (!sends(learnedRules, request)) return;
    // Every judge the request reaches must admit it (a mutating phase and its validating twin);
    // an exempt request reaches none, and is stored whatever the plugin would say.
    const judgedIn = judging.filter((phase) => sends(judgedRules[phase], request));
    let decision: Decision = allowed();
    if (judgedIn.length > 0) {
      const readOnly = stateFor({ ...request, dryRun: true });
      const exemptHere =
        exempts && (await isExempt(request, exemptions, learnsNamespaces ? readOnly.learnedNamespaces : undefined));
      for (const phase of exemptHere ? [] : judgedIn) {
        const decide = phases[phase] as PhaseFunction<Config>;
        decision = enforced(await decide(request, { config: config as Config, state: readOnly }), enforcement);
        if (decision.kind === 'denied') break;
      }
    } else if (observer !== undefined && sends(observer.rules, request)) {
      await observer.phase(request, { config: config as Config, state: stateFor(request) });
    }
    // With a reader, the cluster's committed state is all the plugin knows: a request, which other
    // webhooks or storage may still refuse, teaches nothing.
    if (observe && !reader) await observe(request, decision, stateFor(request));
  }

  const route = admissionRoute(plugin.metadata.name, endpoints, capabilityInPath, callerAuth.cluster);
  const handler = middy<GatewayEvent, GatewayResult, Error, AdmissionContext>()
    .use(admissionInvocation())
    .use(requestLog(plugin.metadata.name, { secretInPath: capabilityInPath, cluster: callerAuth.cluster }))
    // Before httpErrors, so its onError runs after httpErrors answered and still sees the error.
    .use(admissionMetrics(metrics))
    .use(httpErrors())
    .use(route.requested)
    .use(callerIdentity(callerAuth))
    .use(route.served)
    .use(bodyLimit({ maxBytes: options.maxBodyBytes }))
    .use(admissionReviewParser())
    .handler(async function admissionReview(_event: GatewayEvent, context: AdmissionContext): Promise<GatewayResult> {
      const { endpoint } = established(context, 'route');
      const request = established(context, 'review');
      let answer: { decision: Decision; exempt?: true } = { decision: allowed() };
      if (endpoint === 'learn') {
        try {
          await learn(request);
        } catch (error) {
          if (!(error instanceof StoreUnavailableError)) throw error;
          context.admission.learningLost = error.message;
        }
      } else {
        answer = await judge(endpoint, request);
      }
      const { decision } = answer;
      // A learning answer is never a mutation: encoded as a validating one.
      const review = encodeAdmissionResponse(request, decision, endpoint === 'learn' ? 'validate' : endpoint);
      const { response } = review;
      if (response) {
        context.admission.outcome = {
          allowed: response.allowed,
          patched: response.patch !== undefined,
          warned: response.warnings !== undefined,
          audited: response.auditAnnotations !== undefined,
          ...(answer.exempt && { exempt: true }),
          ...(enforcement !== 'Deny' && endpoint !== 'learn' && { enforcement }),
          ...(response.status && { code: response.status.code }),
        };
      }
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(review) };
    });
  // middy's handler type carries the AdmissionContext it builds itself; callers pass Lambda's.
  return (event, context) => handler(event, context as AdmissionContext);
}

/**
 * A packaged function of a fleet (ADMISSION_CONFIG names a fleet's package): the handler of each
 * cluster that enables the plugin, built by `build` with that cluster's configuration, callers and
 * (lib/state) partitions; undefined when the options already say what to serve (npm start, tests)
 * or the package is a single cluster's. lib/state's stateful entry asks first, with its own build.
 */
export function packagedFleetHandler<Config>(
  plugin: AnyAdmissionPlugin,
  options: AdmissionHandlerOptions<Config>,
  build: (clusterOptions: AdmissionHandlerOptions<Config>) => AdmissionHandler,
): AdmissionHandler | undefined {
  if ('config' in options || options.callerAuth !== undefined) return undefined;
  const packaged = packagedFleetFromEnv();
  if (packaged === undefined) return undefined;
  const metrics = options.metrics ?? pluginMetrics(plugin.metadata.name);
  return fleetHandler(plugin, packaged, callerAuthModeFromEnv(), metrics, (cluster, callerAuth) => {
    const configuration = packagedAdmissionConfiguration(cluster);
    return build({
      ...options,
      metrics,
      callerAuth,
      config: configurePlugin<Config>(plugin, configuration),
      ...pluginEnforcement(plugin, configuration),
    });
  });
}

/**
 * One plugin's function for every cluster of a fleet, as `npm start` serves them. Each cluster has
 * its own API Gateway stage, named after it and throttled at its share (infra/serverless/
 * cluster-stages.ts), so the stage a request came through names its cluster: a request through a
 * cluster's stage goes to that cluster's handler, which also requires the called path to begin with
 * the cluster (the stage on the execute-api name, the base path mapped to it on the custom domain).
 * A cluster that does not enable the plugin gets 404 once its caller has proved it is that cluster
 * (its key, its certificate); a stage naming no cluster of the deployment is refused as any
 * unproved caller is (url-secret), or 404 (mTLS, where API Gateway has checked the certificate).
 */
function fleetHandler(
  plugin: AnyAdmissionPlugin,
  packaged: PackagedConfiguration,
  mode: CallerAuth['mode'],
  metrics: PluginMetrics,
  build: (admissionConfiguration: string, callerAuth: CallerAuth) => AdmissionHandler,
): AdmissionHandler {
  const { name } = plugin.metadata;
  const capabilityInPath = mode === 'url-secret';
  const handlers = new Map<string, AdmissionHandler>();
  for (const cluster of packaged.fleet?.clusters ?? []) {
    const callerAuth = clusterCallerAuth(cluster, mode, `the package's cluster ${cluster.name}`);
    handlers.set(
      cluster.name,
      cluster.admissionConfiguration === undefined
        ? refusingHandler(name, callerAuth, capabilityInPath, metrics, (path) =>
            notFound(
              `no webhook at ${redactWebhookPath(path, capabilityInPath, new Set([name, cluster.name]))}: cluster ${cluster.name} does not enable ${name}`,
            ),
          )
        : build(cluster.admissionConfiguration, callerAuth),
    );
  }
  const noCluster = refusingHandler(name, undefined, capabilityInPath, metrics, (path) =>
    capabilityInPath ? refusedCapability() : notFound(`no cluster at ${redactWebhookPath(path, false, new Set())}`),
  );
  return (event, context) => {
    const stage = gatewayStage(event);
    return ((stage !== undefined && handlers.get(stage)) || noCluster)(event, context);
  };
}

/**
 * What a function answers for a cluster it does not serve: logged, counted and answered as its own
 * requests are, the caller checked first when `callerAuth` is given (so only that cluster's caller
 * learns that the plugin is not enabled for it), then `refusal`.
 */
function refusingHandler(
  plugin: string,
  callerAuth: CallerAuth | undefined,
  capabilityInPath: boolean,
  metrics: PluginMetrics,
  refusal: (path: string) => Error,
): AdmissionHandler {
  const route = admissionRoute(plugin, [], capabilityInPath, callerAuth?.cluster);
  let chain = middy<GatewayEvent, GatewayResult, Error, AdmissionContext>()
    .use(admissionInvocation())
    .use(requestLog(plugin, { secretInPath: capabilityInPath, cluster: callerAuth?.cluster }))
    .use(admissionMetrics(metrics))
    .use(httpErrors())
    .use(route.requested);
  if (callerAuth !== undefined) chain = chain.use(callerIdentity(callerAuth));
  const handler = chain.handler(async function refused(event: GatewayEvent): Promise<GatewayResult> {
    throw refusal(fleetPath(event));
  });
  return (event, context) => handler(event, context as AdmissionContext);
}
