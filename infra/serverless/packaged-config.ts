// The configuration a deployed function starts from: the AdmissionConfiguration and every file
// the active plugins read from it (an entry's `path`, ValidatingAdmissionPolicy's `paths`,
// ImagePolicyWebhook's kubeconfig), parsed here, at packaging, into one JSON file. A function
// then needs no YAML parser at cold start (lib/config/documents), which keeps a stateless bundle
// under 100 KB. Certificate files a kubeconfig names are read as they are, from `config/`.
//
// A fleet (config/clusters/<cluster>.yaml, lib/config/fleet.ts) is packaged per plugin instead:
// `.package/fleet/<plugin>.json` holds the configuration of every cluster that enables the plugin,
// and the callers of every cluster (their public keys or certificate subjects), so that the
// function proves a caller before it says the plugin is not enabled for its cluster. Each
// function's zip carries its own file only (infra/serverless/functions.ts).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../lib/config/admission-configuration.js';
import type { PackagedCluster } from '../../lib/config/documents.js';
import { type PackagedConfiguration, packageConfiguration } from '../../lib/config/documents.js';
import { ConfigError } from '../../lib/config/errors.js';
import type { FleetCluster } from '../../lib/config/fleet.js';
import { activePlugins, loadPluginSet, type PluginSet } from '../../lib/config/plugins.js';
import type { CallerAuthMode } from '../../lib/http/fleet.js';
import { clusterCallerAuth } from '../../lib/http/fleet.js';

/** Where packaging writes it; serverless.yml packages this file and names it in ADMISSION_CONFIG. */
export const PACKAGED_CONFIG_FILE = '.package/admission-configuration.json';

/** A fleet's packages, one per plugin: each function's zip holds its own and names it in ADMISSION_CONFIG. */
export const PACKAGED_FLEET_DIR = '.package/fleet';

export const packagedFleetFile = (plugin: string): string => `${PACKAGED_FLEET_DIR}/${plugin}.json`;

/** Every plugin configured from `admissionConfig` (a bad file throws), and the package of what was read. */
export function packagePluginSet(
  registry: readonly AnyAdmissionPlugin[],
  admissionConfig: string = DEFAULT_ADMISSION_CONFIG,
): { readonly set: PluginSet; readonly packaged: PackagedConfiguration } {
  let set: PluginSet | undefined;
  const packaged = packageConfiguration(admissionConfig, () => {
    set = loadPluginSet(registry, { ADMISSION_CONFIG: admissionConfig });
  });
  if (!set) throw new Error('packaging configured no plugin set');
  return { set, packaged };
}

export function writePackagedConfiguration(packaged: PackagedConfiguration, file = PACKAGED_CONFIG_FILE): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(packaged)}\n`);
  return file;
}

/** A fleet, packaged: the plugins of every cluster, and for each plugin its package and its clusters. */
export interface PackagedFleet {
  /** The union of the plugins the clusters enable, in registry order: one function each. */
  readonly plugins: readonly AnyAdmissionPlugin[];
  /** Plugin name → the clusters that enable it, by name. */
  readonly clustersOf: ReadonlyMap<string, readonly string[]>;
  /** Plugin name → the package its function starts from. */
  readonly packages: ReadonlyMap<string, PackagedConfiguration>;
}

/**
 * Every cluster's AdmissionConfiguration (a bad one throws, naming its file) and callers, checked
 * as npm start checks them; url-secret needs each cluster's `capabilityKeys` in its settings, as
 * the deployment holds no cluster's private key.
 */
export function packageFleet(
  registry: readonly AnyAdmissionPlugin[],
  clusters: readonly FleetCluster[],
  mode: CallerAuthMode,
): PackagedFleet {
  const enabled = new Map<string, { cluster: FleetCluster; packaged: PackagedConfiguration }[]>();
  const callers: PackagedCluster[] = [];
  for (const cluster of clusters) {
    const settingsFile = cluster.settingsFile ?? cluster.configFile.replace(/\.yaml$/, '.settings.yaml');
    const { allowedSubjects, capabilityKeys } = cluster.settings;
    if (mode === 'url-secret' && capabilityKeys.length === 0)
      throw new ConfigError(
        `cluster settings ${settingsFile}`,
        'capabilityKeys',
        `a packaged fleet holds every cluster's public key: add capabilityKeys: [KEY] with the key npm run -s emit -- --cluster ${cluster.name} --auth url-secret --public-key prints`,
      );
    clusterCallerAuth({ name: cluster.name, allowedSubjects, capabilityKeys }, mode, settingsFile);
    callers.push({ name: cluster.name, allowedSubjects, capabilityKeys });
    const { set, packaged } = packagePluginSet(registry, cluster.configFile);
    const served = activePlugins(set);
    if (served.length === 0)
      throw new ConfigError(
        'AdmissionConfiguration',
        'plugins',
        `${cluster.configFile} leaves no plugin to serve for cluster ${cluster.name}: name at least one served plugin`,
      );
    for (const { plugin } of served) {
      const list = enabled.get(plugin.metadata.name) ?? [];
      list.push({ cluster, packaged });
      enabled.set(plugin.metadata.name, list);
    }
  }
  const plugins = registry.filter((p) => enabled.has(p.metadata.name));
  const clustersOf = new Map<string, string[]>();
  const packages = new Map<string, PackagedConfiguration>();
  for (const plugin of plugins) {
    const enabling = enabled.get(plugin.metadata.name) ?? [];
    const byName = new Map(enabling.map(({ cluster, packaged }) => [cluster.name, packaged]));
    clustersOf.set(
      plugin.metadata.name,
      enabling.map(({ cluster }) => cluster.name),
    );
    packages.set(plugin.metadata.name, {
      apiVersion: 'serverless-admission/v1',
      kind: 'PackagedConfiguration',
      admissionConfiguration: '',
      // Only the files of the clusters that enable the plugin: no other cluster's configuration.
      files: Object.assign({}, ...enabling.map(({ packaged }) => packaged.files)),
      texts: Object.assign({}, ...enabling.map(({ packaged }) => packaged.texts)),
      fleet: {
        clusters: callers.map((c) => {
          const packaged = byName.get(c.name);
          return packaged === undefined ? c : { ...c, admissionConfiguration: packaged.admissionConfiguration };
        }),
      },
    });
  }
  return { plugins, clustersOf, packages };
}

/**
 * Writes a fleet's packages (or none, for a single cluster) where the functions' zips take them
 * from, and removes what an earlier packaging left: a single cluster's file must not travel in a
 * fleet's zips, nor a removed cluster's plugin's package.
 */
export function writePackagedFleet(fleet: PackagedFleet | undefined): void {
  rmSync(PACKAGED_FLEET_DIR, { recursive: true, force: true });
  if (fleet === undefined) return;
  rmSync(PACKAGED_CONFIG_FILE, { force: true });
  for (const [plugin, packaged] of fleet.packages) writePackagedConfiguration(packaged, packagedFleetFile(plugin));
}
