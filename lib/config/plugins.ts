// Which plugins are active under an AdmissionConfiguration, decided once for every command:
// `npm start` serves them, `emit` registers them, serverless.yml packages them, `check` and
// `audit` run them, `sync` loads what they learn, `npm run load` and `npm run bench` call them,
// and `check-config` lists them. The rule, the same everywhere:
// - a file that names any plugin activates exactly the named ones (a bare `- name: X` enables a
//   plugin that needs no configuration; one that cannot run without it fails the start);
// - a file that names none serves the default-on set, for a first trial: every plugin but those
//   whose metadata says `optIn` or `requiresConfiguration`.
// A named plugin can still have nothing to judge (a ValidatingAdmissionPolicy entry without
// policies): it is inactive, with one line telling the operator what to add.
import { requirementsOf } from '../admission/label-selector.js';
import type { AnyAdmissionPlugin } from '../admission/plugin.js';
import type { AdmissionConfiguration } from './admission-configuration.js';
import { configurePlugin, loadAdmissionConfiguration, pluginEnforcement } from './admission-configuration.js';
import type { Enforcement, Exemptions } from './enforcement.js';
import { ENFORCE } from './enforcement.js';
import { ConfigError } from './errors.js';
import { closestName } from './fields.js';
import { KNOWN_PLUGIN_NAMES, NATIVE_ONLY_PLUGIN_NAMES } from './known-plugins.js';

export interface ConfiguredPlugin {
  readonly plugin: AnyAdmissionPlugin;
  /** What the plugin's configure() returned (undefined for plugins without configuration). */
  readonly config: unknown;
  /** How its refusals are enforced (the entry's `enforcement`, Deny by default). */
  readonly enforcement: Enforcement;
  /** Requests it never judges (the entry's `exemptions`). */
  readonly exemptions: Exemptions;
  /** True when the AdmissionConfiguration has an entry for it. */
  readonly hasEntry: boolean;
  /** True when the file names other plugins but not this one: it is simply not chosen. */
  readonly notNamed?: true;
  /** Why it is inactive; undefined when it is served. */
  readonly inactive?: string;
}

export interface PluginSet {
  readonly configuration: AdmissionConfiguration;
  /** Every registered plugin, configured, in registry order. */
  readonly plugins: readonly ConfiguredPlugin[];
  /** Entries naming upstream or OpenShift plugins this project does not serve: ignored. */
  readonly ignored: readonly string[];
  /** True when the file names plugins (exactly those are active); false: the default-on set. */
  readonly explicit: boolean;
}

/**
 * Configures every plugin (throwing the first ConfigError, naming plugin and field) and checks
 * that every entry names a plugin: served, or known upstream; anything else is a typo.
 */
export function configurePlugins(
  registry: readonly AnyAdmissionPlugin[],
  configuration: AdmissionConfiguration,
): PluginSet {
  const served = registry.map((p) => p.metadata.upstreamName);
  const ignored: string[] = [];
  configuration.names.forEach((name, i) => {
    if (served.includes(name)) return;
    if (KNOWN_PLUGIN_NAMES.has(name)) {
      ignored.push(name);
      return;
    }
    const closest = closestName(name, [...served, ...KNOWN_PLUGIN_NAMES]);
    const hint =
      closest !== undefined ? `did you mean ${JSON.stringify(closest)}?` : `served plugins: ${served.join(', ')}`;
    throw new ConfigError(
      'AdmissionConfiguration',
      `plugins[${i}].name`,
      `unknown admission plugin ${JSON.stringify(name)} in ${configuration.source.file}; ${hint}`,
    );
  });
  const explicit = configuration.names.length > 0;
  const plugins = registry.map((plugin): ConfiguredPlugin => {
    const { metadata } = plugin;
    const hasEntry = configuration.names.includes(metadata.upstreamName);
    if (explicit && !hasEntry) {
      return {
        plugin,
        config: undefined,
        ...ENFORCE,
        hasEntry,
        notNamed: true,
        inactive: `not named in ${configuration.source.file} (add an entry "name: ${metadata.upstreamName}" to serve it)`,
      };
    }
    if (hasEntry && metadata.requiresConfiguration && !configuration.entries.has(metadata.upstreamName)) {
      const i = configuration.names.indexOf(metadata.upstreamName);
      throw new ConfigError(
        metadata.upstreamName,
        `plugins[${i}].configuration`,
        `${metadata.upstreamName} cannot run without its configuration: add configuration (or path) to its entry in ${configuration.source.file}; example: config/examples/${metadata.name}.yaml`,
      );
    }
    const config = configurePlugin(plugin, configuration);
    let inactive: string | undefined;
    if (!explicit && metadata.requiresConfiguration) {
      inactive = `off by default, it needs its configuration: add an entry "name: ${metadata.upstreamName}" with configuration (or path) to ${configuration.source.file} (example: config/examples/${metadata.name}.yaml)`;
    } else if (!explicit && metadata.optIn) {
      const why = metadata.optInReason ?? 'it answers from what it has learned: run npm run sync first';
      inactive = `off by default (${why}): add an entry "name: ${metadata.upstreamName}" to ${configuration.source.file}`;
    } else {
      inactive = plugin.inactiveReason?.(config);
    }
    const { enforcement, exemptions } = pluginEnforcement(plugin, configuration);
    // Only the emitted namespaceSelector can see a namespace's labels for a plugin that does not
    // learn namespaces, and a webhook selector can negate one requirement, not a conjunction.
    if (
      exemptions.namespaceSelector !== undefined &&
      requirementsOf(exemptions.namespaceSelector).length > 1 &&
      !metadata.needs.includes('namespaces')
    ) {
      const i = configuration.names.indexOf(metadata.upstreamName);
      throw new ConfigError(
        metadata.upstreamName,
        `plugins[${i}].exemptions.namespaceSelector`,
        `must have exactly one requirement: ${metadata.upstreamName} does not learn namespaces, so only the emitted webhook's namespaceSelector can exempt by namespace labels, and it can negate one requirement, not several`,
      );
    }
    return { plugin, config, enforcement, exemptions, hasEntry, ...(inactive !== undefined && { inactive }) };
  });
  return { configuration, plugins, ignored, explicit };
}

export const activePlugins = (set: PluginSet): ConfiguredPlugin[] =>
  set.plugins.filter((p) => p.inactive === undefined);
/** Plugins that are off for a reason worth a line: not those a file with names simply leaves out. */
export const inactivePlugins = (set: PluginSet): ConfiguredPlugin[] =>
  set.plugins.filter((p) => p.inactive !== undefined && p.notNamed === undefined);
/** Plugins a file that names others leaves out: listed in one line, not one each. */
export const unnamedPlugins = (set: PluginSet): ConfiguredPlugin[] => set.plugins.filter((p) => p.notNamed);

/** ADMISSION_CONFIG (else config/admission.yaml) read and every plugin configured: what a start does. */
export function loadPluginSet(
  registry: readonly AnyAdmissionPlugin[],
  env: NodeJS.ProcessEnv = process.env,
): PluginSet {
  return configurePlugins(registry, loadAdmissionConfiguration(env));
}

/** The one line every command prints for a plugin that is not served. */
export function inactiveLine(configured: ConfiguredPlugin): string {
  return `${configured.plugin.metadata.upstreamName} (${configured.plugin.metadata.name}) is inactive: ${configured.inactive}`;
}

/** The one line every command prints about the selection: which rule chose the active plugins. */
export function selectionLine(set: PluginSet): string {
  const active = activePlugins(set).length;
  const file = set.configuration.source.file;
  if (!set.explicit)
    return `${file} names no plugin: serving the default-on set (${active} plugins); name plugins in it to serve exactly those`;
  const named = set.plugins.filter((p) => p.hasEntry).length;
  return `${file} names ${named} of the served plugins: serving exactly those (${active} active)`;
}

/**
 * What a start or emit says about inactive plugins: a full line for each one the file names (the
 * operator asked for it and must learn why it is not served), and one line for the plugins a file
 * that names none leaves off by default (`npm run check-config` says what each needs).
 */
export function inactiveSummary(set: PluginSet): string[] {
  const inactive = inactivePlugins(set);
  const named = inactive.filter((p) => p.hasEntry).map(inactiveLine);
  const byDefault = inactive.filter((p) => !p.hasEntry).map((p) => p.plugin.metadata.upstreamName);
  if (byDefault.length === 0) return named;
  return [
    ...named,
    `off by default: ${byDefault.join(', ')} (npm run check-config says what each needs; name plugins in ${set.configuration.source.file} to choose)`,
  ];
}

/**
 * The one line every command prints for an entry that names a plugin no webhook of this project
 * serves: one served only as a native policy, or one not served at all.
 */
export function ignoredLine(name: string): string {
  if (NATIVE_ONLY_PLUGIN_NAMES.has(name))
    return `${name}: served only as a native policy: npm run emit -- --native --kubernetes-version X.Y (1.30 or later)`;
  return `${name}: not served by this project, entry ignored (as the apiserver ignores entries of disabled plugins)`;
}
