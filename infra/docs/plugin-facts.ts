// What the documentation says about each plugin that the code already knows: its metadata, whether
// it is on under a file that names no plugin, the webhooks `npm run emit` registers for it (with its
// example configuration from config/examples, so every plugin is active), the kinds it learns, the
// fields its configuration takes and what it does with a namespace it has never seen. Read from the
// registry and the emitter, never written down twice.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { plugins as registry } from '../../functions/index.js';
import type { AnyAdmissionPlugin, PluginMetadata } from '../../lib/admission/plugin.js';
import type { ConfiguredPlugin } from '../../lib/config/plugins.js';
import { configurePlugins } from '../../lib/config/plugins.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { ConfigError } from '../../lib/config/errors.js';
import { seedingPlan } from '../sync/plan.js';
import type { WebhookConfiguration } from '../emit/webhooks.js';
import { webhookConfigurations } from '../emit/webhooks.js';

/** The base URL the documented webhooks are emitted for; pages show paths only. */
const BASE_URL = 'https://admission.example.com';

export interface WebhookFacts {
  /** `pod-node-selector.mutate.serverless-admission.io`. */
  readonly name: string;
  readonly type: 'Mutating' | 'Validating';
  /** The URL path the webhook calls: `/pod-node-selector/mutate`. */
  readonly path: string;
  /** The rules, in words: `CREATE pods; UPDATE pods/ephemeralcontainers`. */
  readonly rules: string;
  readonly failurePolicy: string;
  readonly timeoutSeconds: number;
  readonly sideEffects: string;
  readonly reinvocationPolicy?: string;
  /** Names of its matchConditions. */
  readonly matchConditions: readonly string[];
  /** `all`, `all but kube-system, kube-node-lease`. */
  readonly namespaces: string;
}

export interface UnknownNamespaceRule {
  /** `POD_NODE_SELECTOR_UNKNOWN_NAMESPACE`. */
  readonly env: string;
  readonly choices: readonly string[];
  readonly fallback: string;
}

export interface PluginFacts {
  readonly plugin: AnyAdmissionPlugin;
  readonly metadata: PluginMetadata;
  /** Served under a file that names no plugin. */
  readonly defaultOn: boolean;
  /** Why not, as every command says it (check-config's line). */
  readonly offReason?: string;
  readonly webhooks: readonly WebhookFacts[];
  /** The kinds it learns, as kubectl names them (npm run sync loads them). */
  readonly learns: readonly string[];
  /** Top-level fields of its entry's `configuration`; [] when it reads none; undefined: no configuration at all. */
  readonly configurationFields?: readonly string[];
  /** Its example AdmissionConfiguration, relative to the project root. */
  readonly example?: string;
  readonly unknownNamespace?: UnknownNamespaceRule;
}

const ENV_RULE = /UNKNOWN_NAMESPACE$/;

/**
 * Runs `fn` with no `*_UNKNOWN_NAMESPACE` variable set, so the facts are the plugins' defaults
 * whatever the generating shell exports.
 */
function withDefaultEnvironment<T>(fn: () => T): T {
  const saved = Object.entries(process.env).filter(([key]) => ENV_RULE.test(key));
  for (const [key] of saved) delete process.env[key];
  try {
    return fn();
  } finally {
    for (const [key, value] of saved) process.env[key] = value;
  }
}

/** config/examples/<plugin>.yaml, or config/examples/<plugin>/admission.yaml, when it has an entry for the plugin. */
export function exampleFile(root: string, metadata: Pick<PluginMetadata, 'name' | 'upstreamName'>): string | undefined {
  const candidates = [`config/examples/${metadata.name}.yaml`, `config/examples/${metadata.name}/admission.yaml`];
  return candidates.find(
    (file) =>
      existsSync(join(root, file)) &&
      parseAdmissionConfiguration(readFileSync(join(root, file), 'utf8'), join(root, file)).names.includes(
        metadata.upstreamName,
      ),
  );
}

/** The plugin configured by its example's entry (a bare entry when the example has none). */
function configuredByExample(root: string, plugin: AnyAdmissionPlugin): ConfiguredPlugin {
  const { upstreamName } = plugin.metadata;
  const example = exampleFile(root, plugin.metadata);
  let configuration = example
    ? parseAdmissionConfiguration(readFileSync(join(root, example), 'utf8'), join(root, example))
    : undefined;
  if (!configuration?.names.includes(upstreamName)) {
    const text = `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ${JSON.stringify(upstreamName)}\n`;
    configuration = parseAdmissionConfiguration(text, join(root, 'config/examples/(bare entry).yaml'));
  }
  const configured = configurePlugins(registry, configuration).plugins.find((p) => p.plugin === plugin);
  if (!configured || configured.inactive !== undefined)
    throw new Error(`${upstreamName}: its example ${example ?? '(bare entry)'} does not make it active`);
  return configured;
}

const SOURCE = { file: 'the documentation generator', baseDir: '.' };

/** The configure() error for `raw`, or undefined when it is accepted. */
function configureError(plugin: AnyAdmissionPlugin, raw: unknown): ConfigError | undefined {
  try {
    plugin.configure?.(raw, SOURCE);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

const PROBE_FIELD = 'zzDocumentationProbe';

/**
 * The fields configure() accepts at the top of the entry, as its own unknown-field error lists them
 * (`supported fields: a, b`): the example's configuration plus one field nobody declares.
 */
function configurationFields(plugin: AnyAdmissionPlugin, exampleConfig: unknown): readonly string[] | undefined {
  if (!plugin.configure) return undefined;
  const base = exampleConfig !== null && typeof exampleConfig === 'object' ? exampleConfig : {};
  const error = configureError(plugin, { ...base, [PROBE_FIELD]: true });
  if (error === undefined || !error.message.includes(PROBE_FIELD)) return [];
  const listed = /supported fields: (.*)$/.exec(error.message);
  return listed ? listed[1].split(', ') : [];
}

/** `<PLUGIN>_UNKNOWN_NAMESPACE`'s choices, as configure() refuses a value outside them, and its default. */
function unknownNamespaceRule(plugin: AnyAdmissionPlugin, config: unknown): UnknownNamespaceRule | undefined {
  if (!plugin.configure) return undefined;
  const env = `${plugin.metadata.name.toUpperCase().replace(/-/g, '_')}_UNKNOWN_NAMESPACE`;
  process.env[env] = PROBE_FIELD;
  let error: ConfigError | undefined;
  try {
    error = configureError(plugin, undefined);
  } finally {
    delete process.env[env];
  }
  const choices = error?.field === env ? /must be one of (.*), got /.exec(error.message)?.[1].split(', ') : undefined;
  if (choices === undefined) return undefined;
  const fallback = (config as { unknownNamespace?: unknown } | undefined)?.unknownNamespace;
  if (typeof fallback !== 'string' || !choices.includes(fallback))
    throw new Error(`${plugin.metadata.upstreamName}: ${env} has choices but its configuration shows no default`);
  return { env, choices, fallback };
}

type EmittedRule = {
  readonly operations?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly scope?: string;
};

function describeRule(rule: EmittedRule): string {
  const operations = rule.operations?.includes('*') ? 'every operation on' : (rule.operations ?? []).join(', ');
  const all = rule.resources ?? [];
  const scoped = rule.scope === 'Namespaced' ? 'namespaced ' : rule.scope === 'Cluster' ? 'cluster-scoped ' : '';
  if (all.includes('*') || all.includes('*/*'))
    return `${operations} every ${scoped}resource${all.includes('*/*') ? ' and subresource' : ''}`;
  const groups = rule.apiGroups ?? [];
  const group = groups.length === 1 && groups[0] !== '' && groups[0] !== '*' ? `${groups[0]}/` : '';
  return `${operations} ${all.map((resource) => `${group}${resource}`).join(', ')}`;
}

function describeNamespaces(selector: { matchExpressions?: { operator: string; values?: string[] }[] } | undefined) {
  const excluded = selector?.matchExpressions?.find((e) => e.operator === 'NotIn')?.values;
  return excluded && excluded.length > 0 ? `all but ${excluded.join(', ')}` : 'all';
}

function webhookFacts(configuration: WebhookConfiguration): WebhookFacts[] {
  const type = configuration.kind === 'MutatingWebhookConfiguration' ? 'Mutating' : 'Validating';
  return (configuration.webhooks ?? []).map((webhook) => ({
    name: webhook.name,
    type,
    path: (webhook.clientConfig.url ?? '').slice(BASE_URL.length),
    rules: (webhook.rules as readonly EmittedRule[] | undefined)?.map(describeRule).join('; ') ?? '',
    failurePolicy: webhook.failurePolicy ?? 'Fail',
    timeoutSeconds: webhook.timeoutSeconds ?? 10,
    sideEffects: webhook.sideEffects,
    ...('reinvocationPolicy' in webhook && { reinvocationPolicy: String(webhook.reinvocationPolicy ?? 'Never') }),
    matchConditions: webhook.matchConditions?.map((c) => c.name) ?? [],
    namespaces: describeNamespaces(webhook.namespaceSelector as never),
  }));
}

/** What the registry, the emitter and config/examples say about every plugin, in registry order. */
export function pluginFacts(root: string): PluginFacts[] {
  return withDefaultEnvironment(() => {
    const bare = parseAdmissionConfiguration(
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n',
      'config/admission.yaml',
    );
    const byDefault = configurePlugins(registry, bare).plugins;
    return registry.map((plugin): PluginFacts => {
      const { metadata } = plugin;
      const configured = configuredByExample(root, plugin);
      const docs = webhookConfigurations([plugin], {
        baseUrl: BASE_URL,
        auth: { mode: 'mtls' },
        configs: new Map([[metadata.name, configured.config]]),
      });
      const off = byDefault.find((p) => p.plugin === plugin)?.inactive;
      const example = exampleFile(root, metadata);
      const exampleEntry = example
        ? parseAdmissionConfiguration(readFileSync(join(root, example), 'utf8'), join(root, example)).entries.get(
            metadata.upstreamName,
          )
        : undefined;
      const fields = configurationFields(plugin, exampleEntry);
      const rule = unknownNamespaceRule(plugin, configured.config);
      return {
        plugin,
        metadata,
        defaultOn: off === undefined,
        ...(off !== undefined && { offReason: off }),
        webhooks: docs.flatMap(webhookFacts),
        learns: seedingPlan([metadata]).byPlugin.get(metadata.upstreamName) ?? [],
        ...(fields !== undefined && { configurationFields: fields }),
        ...(example !== undefined && { example: relative(root, join(root, example)) }),
        ...(rule !== undefined && { unknownNamespace: rule }),
      };
    });
  });
}
