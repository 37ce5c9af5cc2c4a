// The configuration a deployed function starts from: the AdmissionConfiguration and every file
// the active plugins read from it (an entry's `path`, ValidatingAdmissionPolicy's `paths`,
// ImagePolicyWebhook's kubeconfig), parsed here, at packaging, into one JSON file. A function
// then needs no YAML parser at cold start (lib/config/documents), which keeps a stateless bundle
// under 100 KB. Certificate files a kubeconfig names are read as they are, from `config/`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../lib/config/admission-configuration.js';
import { type PackagedConfiguration, packageConfiguration } from '../../lib/config/documents.js';
import { loadPluginSet, type PluginSet } from '../../lib/config/plugins.js';

/** Where packaging writes it; serverless.yml packages this file and names it in ADMISSION_CONFIG. */
export const PACKAGED_CONFIG_FILE = '.package/admission-configuration.json';

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
