import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { AnyAdmissionPlugin, ConfigSource } from '../admission/plugin.js';
import {
  DocumentError,
  isPackagedConfiguration,
  NO_SUCH_FILE,
  parseDocumentText,
  readDocument,
  usePackagedConfiguration,
} from './documents.js';
import type { PluginEnforcement } from './enforcement.js';
import { ENFORCE, parsePluginEnforcement } from './enforcement.js';
import { ConfigError } from './errors.js';
import { isRecord, rejectUnknownFields, unknownField } from './fields.js';

/**
 * The kube-apiserver's --admission-control-config-file, read as the apiserver reads it, so an
 * operator's file from a self-managed cluster works unchanged. Each entry's `path` wins over its
 * inline `configuration` (as upstream), and relative paths resolve against the file's directory.
 */
export const ADMISSION_CONFIGURATION_VERSIONS = [
  'apiserver.config.k8s.io/v1',
  'apiserver.config.k8s.io/v1alpha1',
  'apiserver.k8s.io/v1alpha1',
] as const;

export const DEFAULT_ADMISSION_CONFIG = 'config/admission.yaml';

export interface AdmissionConfiguration {
  readonly source: ConfigSource;
  /** Raw configuration per upstream plugin name, for entries that carry one. */
  readonly entries: ReadonlyMap<string, unknown>;
  /** Every entry's name, in file order, with or without configuration. */
  readonly names: readonly string[];
  /** The project's `enforcement` and `exemptions` per upstream plugin name, for entries that set one. */
  readonly enforcement: ReadonlyMap<string, PluginEnforcement>;
}

const EMPTY: AdmissionConfiguration = {
  source: { file: '(no AdmissionConfiguration)', baseDir: process.cwd() },
  entries: new Map(),
  names: [],
  enforcement: new Map(),
};

/** The fields of one `plugins[]` entry: upstream's three, plus this project's two (lib/config/enforcement). */
const ENTRY_FIELDS = ['name', 'path', 'configuration', 'enforcement', 'exemptions'];

/** A file's one document; a file that cannot be read or parsed fails the start, naming it. */
function document(read: () => unknown, plugin: string, file: string): unknown {
  try {
    return read();
  } catch (error) {
    if (error instanceof DocumentError) throw new ConfigError(plugin, file, error.reason);
    throw error;
  }
}

/** An entry's `path`: a file that is missing names the entry's field; one that does not parse, the file. */
function pathEntry(target: string, plugin: string, field: string): unknown {
  try {
    return readDocument(target);
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    if (error.reason === NO_SUCH_FILE) throw new ConfigError(plugin, field, `file ${target} does not exist`);
    throw new ConfigError('AdmissionConfiguration', target, error.reason);
  }
}

export function parseAdmissionConfiguration(text: string, file: string): AdmissionConfiguration {
  return readAdmissionConfiguration(
    document(() => parseDocumentText(text, file), 'AdmissionConfiguration', file),
    file,
  );
}

function readAdmissionConfiguration(doc: unknown, file: string): AdmissionConfiguration {
  const baseDir = dirname(resolve(file));
  const where = (field: string) => new ConfigError('AdmissionConfiguration', field, `in ${file}`);
  if (!isRecord(doc)) throw new ConfigError('AdmissionConfiguration', '', `${file} is not a YAML object`);
  rejectUnknownFields('AdmissionConfiguration', '', doc, ['apiVersion', 'kind', 'plugins']);
  if (doc.kind !== 'AdmissionConfiguration') {
    throw new ConfigError(
      'AdmissionConfiguration',
      'kind',
      `must be AdmissionConfiguration in ${file}, got ${JSON.stringify(doc.kind ?? null)}`,
    );
  }
  if (!ADMISSION_CONFIGURATION_VERSIONS.includes(doc.apiVersion as never)) {
    throw new ConfigError(
      'AdmissionConfiguration',
      'apiVersion',
      `must be one of ${ADMISSION_CONFIGURATION_VERSIONS.join(', ')} in ${file}`,
    );
  }
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw where('plugins');
  const entries = new Map<string, unknown>();
  const names: string[] = [];
  const enforcement = new Map<string, PluginEnforcement>();
  plugins.forEach((entry: unknown, i: number) => {
    const field = `plugins[${i}]`;
    if (!isRecord(entry)) throw new ConfigError('AdmissionConfiguration', field, `must be an object in ${file}`);
    const { name, path, configuration } = entry;
    if (typeof name !== 'string' || name === '')
      throw new ConfigError('AdmissionConfiguration', `${field}.name`, `required in ${file}`);
    for (const key of Object.keys(entry)) {
      if (!ENTRY_FIELDS.includes(key)) throw unknownField(name, field, key, ENTRY_FIELDS);
    }
    names.push(name);
    if (entry.enforcement !== undefined || entry.exemptions !== undefined)
      enforcement.set(name, parsePluginEnforcement(name, i, entry));
    if (path !== undefined && path !== '') {
      if (typeof path !== 'string') throw new ConfigError(name, `${field}.path`, `must be a string in ${file}`);
      const target = isAbsolute(path) ? path : resolve(baseDir, path);
      entries.set(name, pathEntry(target, name, `${field}.path`));
    } else if (configuration !== undefined && configuration !== null) {
      entries.set(name, configuration);
    }
  });
  return { source: { file, baseDir }, entries, names, enforcement };
}

/**
 * One cluster's AdmissionConfiguration in a fleet's package (lib/config/documents), once
 * usePackagedConfiguration has made the package what every file is read from.
 */
export function packagedAdmissionConfiguration(file: string): AdmissionConfiguration {
  return readAdmissionConfiguration(
    document(() => readDocument(file), 'AdmissionConfiguration', file),
    file,
  );
}

/**
 * ADMISSION_CONFIG names the file; without it, config/admission.yaml when present, else no plugin
 * configuration at all (every plugin on upstream's defaults). A named file that is missing fails.
 * A packaged configuration (lib/config/documents) is what a deployed function reads: the same
 * AdmissionConfiguration, with every file it refers to already parsed.
 */
export function loadAdmissionConfiguration(env: NodeJS.ProcessEnv = process.env): AdmissionConfiguration {
  const named = env.ADMISSION_CONFIG || undefined; // ADMISSION_CONFIG= means unset, as in a shell
  const file = named ?? DEFAULT_ADMISSION_CONFIG;
  if (!existsSync(file)) {
    if (named !== undefined)
      throw new ConfigError('AdmissionConfiguration', 'ADMISSION_CONFIG', `file ${file} does not exist`);
    return EMPTY;
  }
  const doc = document(() => readDocument(file), 'AdmissionConfiguration', file);
  if (!isPackagedConfiguration(doc)) return readAdmissionConfiguration(doc, file);
  if (doc.fleet !== undefined)
    throw new ConfigError('AdmissionConfiguration', file, "a fleet's package: each cluster's is read on its own");
  usePackagedConfiguration(doc);
  const packaged = doc.admissionConfiguration;
  return readAdmissionConfiguration(
    document(() => readDocument(packaged), 'AdmissionConfiguration', packaged),
    packaged,
  );
}

/** A plugin's configuration, validated by the plugin itself; throws ConfigError naming the field. */
export function configurePlugin<Config>(plugin: AnyAdmissionPlugin, configuration: AdmissionConfiguration): Config {
  // Upstream plugins that take no configuration ignore their entry; so do ours.
  if (!plugin.configure) return undefined as Config;
  return plugin.configure(configuration.entries.get(plugin.metadata.upstreamName), configuration.source) as Config;
}

/** A plugin's `enforcement` and `exemptions`: Deny and none unless its entry sets them. */
export function pluginEnforcement(
  plugin: AnyAdmissionPlugin,
  configuration: AdmissionConfiguration,
): PluginEnforcement {
  return configuration.enforcement.get(plugin.metadata.upstreamName) ?? ENFORCE;
}
