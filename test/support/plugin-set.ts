// The plugin set a start would build from an AdmissionConfiguration with these entries: the one
// rule of which plugins are active (lib/config/plugins.ts), without writing a file.
import { stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import type { PluginSet } from '../../lib/config/plugins.js';
import { activePlugins, configurePlugins } from '../../lib/config/plugins.js';

export function pluginSetOf(
  entries: readonly unknown[],
  file = 'admission.yaml',
  plugins: readonly AnyAdmissionPlugin[] = registry,
): PluginSet {
  const text = stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: entries,
  });
  return configurePlugins(plugins, parseAdmissionConfiguration(text, file));
}

/** The names (kebab-case) of the plugins these entries make active. */
export const activeNamesOf = (entries: readonly unknown[]): string[] =>
  activePlugins(pluginSetOf(entries)).map((p) => p.plugin.metadata.name);
