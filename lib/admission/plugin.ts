import type { Decision } from './decision.js';
import { allowed } from './decision.js';
import type { AdmissionRequest } from './request.js';
import { isMainResource } from './request.js';
import type { KubeObject, Operation } from './types.js';
import type { LearnedObjectKind, PluginState } from './ports.js';

/** One admissionregistration.k8s.io/v1 rule, as it will be emitted. */
export interface WebhookRule {
  readonly operations: readonly (Operation | '*')[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  /** `pods`, `pods/ephemeralcontainers`, `*`... exactly as in a webhook rule. */
  readonly resources: readonly string[];
  readonly scope?: 'Cluster' | 'Namespaced' | '*';
}

export interface PhaseMetadata {
  readonly rules: readonly WebhookRule[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
  /** Mutations that other webhooks may undo ask to be called again. */
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
  readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
  /**
   * Requests this phase only records (side effects it never refuses: ResourceQuota's confirmations
   * and releases). They go, with the `needs` learning rules, to the fail-open learning webhook and
   * its `learn` endpoint, which runs this phase for them; its judging endpoint never sees them.
   */
  readonly observes?: readonly WebhookRule[];
  /**
   * The judged requests split by failurePolicy, on rules no two groups share (MutatingAdmission-
   * Policy's Fail and Ignore policies): one webhook per group, on the same URL, so an outage fails
   * closed only where a Fail policy applies. `rules` stays their union.
   */
  readonly failurePolicyGroups?: readonly {
    readonly rules: readonly WebhookRule[];
    readonly failurePolicy: 'Fail' | 'Ignore';
  }[];
}

/**
 * Cluster state a plugin reads; the emitted configuration subscribes to its writes. `placements`:
 * pods' nodes and Nodes' UIDs (lib/state/placements). A LearnedObjectKind (`storageclasses`,
 * `priorityclasses`, `limitranges`...): every object of that kind (lib/state/learned-objects).
 */
/** A side-effect ledger a plugin writes: the PluginState port it records through. */
export type SideEffectLedger = 'quotaLedger' | 'clusterQuotaLedger' | 'tokenBuckets' | 'decisionCache';

export type ClusterStateNeed = 'namespaces' | 'resourcequotas' | 'placements' | LearnedObjectKind;

/**
 * Everything the handler, the emitted webhook configuration and serverless.yml need to know about
 * a plugin, declared once, next to its logic.
 */
export interface PluginMetadata {
  /** The kube-apiserver's name: `AlwaysPullImages`. Also the AdmissionConfiguration entry name. */
  readonly upstreamName: string;
  /** kebab-case of upstreamName: the URL path segment, the Lambda name, the webhook name prefix. */
  readonly name: string;
  /** One sentence, for --help, the plugin tables (README.md, docs/) and webhook descriptions. */
  readonly summary: string;
  /** Present when upstream mutates (Admit). */
  readonly mutating?: PhaseMetadata;
  /** Present when upstream validates (Validate), including the twin that checks a mutation held. */
  readonly validating?: PhaseMetadata;
  /**
   * True when the plugin records side effects of its own (quota charges, rate-limit tokens, cached
   * backend answers). Learning what `needs` names is not counted here; both make the learning or
   * writing webhook NoneOnDryRun and give the Lambda access to the state table.
   */
  readonly writes: boolean;
  /**
   * Which side-effect ledgers a plugin that `writes` keeps (its state ports): its function's role
   * may touch their partitions of the state table and no others (lib/state/partitions).
   */
  readonly ledgers?: readonly SideEffectLedger[];
  readonly needs: readonly ClusterStateNeed[];
  /**
   * Whether requests in kube-system, kube-node-lease and the webhook's own namespace are sent.
   * Upstream plugins see every namespace; most of ours skip these to keep the cluster recoverable.
   */
  readonly systemNamespaces: 'exclude' | 'include';
  /**
   * Upstream refuses to start without the plugin's configuration; here the plugin is *inactive*
   * without its AdmissionConfiguration entry: not served, not emitted, not packaged (lib/config
   * says so once, for every command).
   */
  readonly requiresConfiguration?: true;
  /**
   * Off by default, as upstream's plugin is until --enable-admission-plugins names it: inactive
   * unless the AdmissionConfiguration has an entry for it (with or without configuration).
   */
  readonly optIn?: true;
  /** Why an opt-in plugin is off until enabled, for check-config (default: it refuses what it has not learned). */
  readonly optInReason?: string;
}

export interface PluginContext<Config> {
  readonly config: Config;
  /** Learned cluster state and side effects, scoped to the request (dry runs never write). */
  readonly state: PluginState;
}

export type PhaseFunction<Config> = (
  request: AdmissionRequest,
  context: PluginContext<Config>,
) => Decision | Promise<Decision>;

/**
 * How most upstream plugins open both Admit and Validate: `shouldIgnore`, then a type assertion on
 * the object (`a.GetObject().(*api.Pod)`) that answers in the plugin's own words when it fails.
 */
export interface ObjectGuard<T extends KubeObject> {
  /** Other resources, subresources and operations: allowed untouched. */
  readonly ignore: (request: AdmissionRequest) => boolean;
  /** The type assertion. */
  readonly accepts: (object: unknown) => object is T;
  /** Upstream's answer when the assertion fails. */
  readonly otherwise: (request: AdmissionRequest) => Decision;
}

/** The one resource a plugin judges: its webhook rule and its `shouldIgnore`, from one statement. */
export interface JudgedResource {
  readonly rules: readonly WebhookRule[];
  /**
   * Everything the rule does not send: other operations, resources, groups, every subresource.
   * Upstream checks it again because an operator may widen the emitted rules.
   */
  readonly ignore: (request: AdmissionRequest) => boolean;
}

/** `operations` on the v1 `resource` of `group` itself. */
export function judgedResource(
  operations: readonly Operation[],
  group: string,
  resource: string,
  scope: 'Namespaced' | 'Cluster',
): JudgedResource {
  return {
    rules: [{ operations, apiGroups: [group], apiVersions: ['v1'], resources: [resource], scope }],
    ignore: function shouldIgnore(request) {
      return !operations.includes(request.operation) || !isMainResource(request, group, resource);
    },
  };
}

/** A phase that allows what `guard` ignores, answers a mistyped object as upstream, and judges the rest. */
export function guardedPhase<T extends KubeObject, Config = undefined>(
  guard: ObjectGuard<T>,
  judge: (object: T, request: AdmissionRequest, context: PluginContext<Config>) => Decision | Promise<Decision>,
): PhaseFunction<Config> {
  return function guardedObjectPhase(request, context) {
    if (guard.ignore(request)) return allowed();
    const object = request.object;
    if (!guard.accepts(object)) return guard.otherwise(request);
    return judge(object, request, context);
  };
}

/** Where a plugin's configuration came from, for error messages. */
export interface ConfigSource {
  /** The AdmissionConfiguration file, or a description of where the configuration came from. */
  readonly file: string;
  /** The directory relative paths in the configuration resolve against. */
  readonly baseDir: string;
}

export interface AdmissionPlugin<Config = undefined> {
  readonly metadata: PluginMetadata;
  /**
   * Turns the plugin's AdmissionConfiguration entry (undefined when there is none) into its
   * configuration. Throws a ConfigError naming the field; called once, at start.
   */
  readonly configure?: (raw: unknown, source: ConfigSource) => Config;
  /** Upstream's Admit: may mutate. */
  readonly admit?: PhaseFunction<Config>;
  /** Upstream's Validate: may only allow or deny. */
  readonly validate?: PhaseFunction<Config>;
  /**
   * For plugins whose matching depends on configuration (ValidatingAdmissionPolicy): the
   * validating rules to emit for this configuration, replacing metadata.validating.rules.
   */
  readonly validatingRulesFor?: (config: Config) => readonly WebhookRule[];
  /**
   * For plugins whose mutating webhook depends on configuration (MutatingAdmissionPolicy): its
   * rules, failurePolicy and reinvocationPolicy for this configuration, replacing metadata.mutating's.
   */
  readonly mutatingPhaseFor?: (config: Config) => Pick<PhaseMetadata, 'rules' | 'failurePolicy' | 'reinvocationPolicy'>;
  /**
   * Why this configuration leaves the plugin nothing to judge (ValidatingAdmissionPolicy without
   * policies), or undefined when it is active. An inactive plugin is not served, emitted or packaged.
   */
  readonly inactiveReason?: (config: Config) => string | undefined;
}

/**
 * How long the apiserver waits for a judging webhook (docs/webhooks.md, "Timeouts"). A warm answer takes
 * milliseconds (npm run load: p99 in the tens of ms, store calls included); a Lambda cold start
 * adds well under a second. 3 s covers a cold start plus a store round trip with margin, while a
 * stuck call holds a user's write for 3 s at most.
 */
export const DEFAULT_TIMEOUT_SECONDS = 3;

/**
 * Learning webhooks fail open and only record: the shortest timeout that still lets a cold
 * start through, so an outage delays the writes they see by 2 s at most. Also used by judging
 * webhooks that see every write in the cluster (NamespaceLifecycle).
 */
export const LEARNING_TIMEOUT_SECONDS = 2;

/**
 * Upstream's Admit + Validate as webhooks: the mutation fails open (Ignore) and asks to be called
 * again when a later webhook undoes it; the validating twin checks the final object and fails
 * closed where the plugin is a security boundary. A twin of our own (upstream only mutates)
 * refuses only what its mutation would have fixed, on the operations it fixes (`twinRules`), and
 * fails open (`twinFailurePolicy: 'Ignore'`) where nothing but convenience is at stake.
 */
export function mutatingWithTwin(
  rules: readonly WebhookRule[],
  options: { twinFailurePolicy?: 'Fail' | 'Ignore'; twinRules?: readonly WebhookRule[] } = {},
): Pick<PluginMetadata, 'mutating' | 'validating'> {
  return {
    mutating: {
      rules,
      failurePolicy: 'Ignore',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
      reinvocationPolicy: 'IfNeeded',
    },
    validating: {
      rules: options.twinRules ?? rules,
      failurePolicy: options.twinFailurePolicy ?? 'Fail',
      timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
    },
  };
}

/** Upstream's Validate alone: a validating webhook that fails closed. */
export function validatingOnly(rules: readonly WebhookRule[]): Pick<PluginMetadata, 'validating'> {
  return { validating: { rules, failurePolicy: 'Fail', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS } };
}

/** A plugin that records side effects or learns cluster state: its Lambda needs the state table. */
export function usesStore(metadata: Pick<PluginMetadata, 'writes' | 'needs'>): boolean {
  return metadata.writes || metadata.needs.length > 0;
}

/** Keeps the Config type parameter inferred from `configure`. */
export function definePlugin<Config = undefined>(plugin: AdmissionPlugin<Config>): AdmissionPlugin<Config> {
  return plugin;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds plugins of different configuration types side by side; no other type accepts them all (configure returns Config, the phases take it).
export type AnyAdmissionPlugin = AdmissionPlugin<any>;

/** `AlwaysPullImages` → `always-pull-images`, `DenyServiceExternalIPs` → `deny-service-external-ips`. */
export function kebabCase(upstreamName: string): string {
  return upstreamName
    .replace(/([A-Z]{2,})s(?=[A-Z]|$)/g, (_, acronym: string) => `${acronym[0]}${acronym.slice(1).toLowerCase()}s`)
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}
