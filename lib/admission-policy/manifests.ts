// Where admission policies come from (ValidatingAdmissionPolicy and MutatingAdmissionPolicy alike):
// `configuration.manifests` (inline objects) and `configuration.paths`
// (multi-document YAML files relative to the AdmissionConfiguration's directory), read as
// `kubectl apply -f` reads them, `kind: List` included. Each object remembers where it came from,
// for error messages.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ConfigSource } from '../admission/plugin.js';
import { ConfigError } from '../config/errors.js';
import { isRecord, rejectUnknownFields } from '../config/fields.js';

import { DEFAULT_ENVIRONMENT, ENVIRONMENT_VERSIONS } from '../cel/cel-env.js';
import type { EnvironmentVersion } from '../cel/cel-env.js';
export const ADMISSION_REGISTRATION_VERSIONS = [
  'admissionregistration.k8s.io/v1',
  'admissionregistration.k8s.io/v1beta1',
  'admissionregistration.k8s.io/v1alpha1',
];

export interface Manifest {
  readonly object: Record<string, unknown>;
  /** `configuration.manifests[2]`, `policies.yaml document 3`... */
  readonly origin: string;
}

export { isRecord };

function expand(plugin: string, object: unknown, origin: string, out: Manifest[]): void {
  if (object === null || object === undefined) return; // an empty YAML document
  if (!isRecord(object)) throw new ConfigError(plugin, origin, 'must be a Kubernetes object');
  if (
    object.kind === 'List' ||
    (typeof object.kind === 'string' && object.kind.endsWith('List') && Array.isArray(object.items))
  ) {
    const items = Array.isArray(object.items) ? object.items : [];
    for (const [i, item] of items.entries()) expand(plugin, item, `${origin} items[${i}]`, out);
    return;
  }
  out.push({ object, origin });
}

function readFile(plugin: string, path: unknown, field: string, source: ConfigSource, out: Manifest[]): void {
  if (typeof path !== 'string' || path === '') throw new ConfigError(plugin, field, 'must be a non-empty string');
  const file = isAbsolute(path) ? path : resolve(source.baseDir, path);
  if (!existsSync(file)) throw new ConfigError(plugin, field, `file ${file} does not exist`);
  const documents = parseAllDocuments(readFileSync(file, 'utf8'));
  documents.forEach((document, i) => {
    if (document.errors.length > 0) {
      throw new ConfigError(
        plugin,
        field,
        `cannot parse ${file} document ${i + 1}: ${document.errors[0].message.split('\n')[0]}`,
      );
    }
    expand(plugin, document.toJS(), `${path} document ${i + 1}`, out);
  });
}

export interface PluginOptions {
  readonly manifests: readonly Manifest[];
  /** What a namespaceSelector sees for a namespace the webhook has never seen. */
  readonly unknownNamespace: 'NoLabels' | 'Fail';
  /** The apiserver version whose CEL environment compiles the policies (`celEnvironment`). */
  readonly celEnvironment: EnvironmentVersion;
}

const OPTION_KEYS = new Set(['apiVersion', 'kind', 'manifests', 'paths', 'unknownNamespace', 'celEnvironment']);

/**
 * Reads the AdmissionConfiguration entry of `plugin` (its upstream name, for errors); undefined:
 * no policies, every request admitted.
 */
export function readOptions(plugin: string, raw: unknown, source: ConfigSource): PluginOptions {
  if (raw === undefined || raw === null)
    return { manifests: [], unknownNamespace: 'NoLabels', celEnvironment: DEFAULT_ENVIRONMENT };
  if (!isRecord(raw)) throw new ConfigError(plugin, 'configuration', `must be an object in ${source.file}`);
  rejectUnknownFields(plugin, '', raw, [...OPTION_KEYS]);
  const unknownNamespace = raw.unknownNamespace ?? 'NoLabels';
  if (unknownNamespace !== 'NoLabels' && unknownNamespace !== 'Fail') {
    throw new ConfigError(
      plugin,
      'unknownNamespace',
      `Unsupported value: ${JSON.stringify(unknownNamespace)}: supported values: "Fail", "NoLabels"`,
    );
  }
  const celEnvironment = raw.celEnvironment ?? DEFAULT_ENVIRONMENT;
  if (!(ENVIRONMENT_VERSIONS as readonly unknown[]).includes(celEnvironment)) {
    throw new ConfigError(
      plugin,
      'celEnvironment',
      `Unsupported value: ${JSON.stringify(celEnvironment)}: supported values: ${ENVIRONMENT_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`,
    );
  }
  const manifests: Manifest[] = [];
  if (raw.manifests !== undefined && raw.manifests !== null) {
    if (!Array.isArray(raw.manifests)) throw new ConfigError(plugin, 'manifests', 'must be a list of objects');
    for (const [i, object] of raw.manifests.entries()) expand(plugin, object, `manifests[${i}]`, manifests);
  }
  if (raw.paths !== undefined && raw.paths !== null) {
    if (!Array.isArray(raw.paths)) throw new ConfigError(plugin, 'paths', 'must be a list of file paths');
    for (const [i, path] of raw.paths.entries()) readFile(plugin, path, `paths[${i}]`, source, manifests);
  }
  return { manifests, unknownNamespace, celEnvironment: celEnvironment as EnvironmentVersion };
}
