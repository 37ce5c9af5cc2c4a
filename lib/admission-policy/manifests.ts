// Where admission policies come from (ValidatingAdmissionPolicy and MutatingAdmissionPolicy alike):
// `configuration.manifests` (inline objects) and `configuration.paths`
// (multi-document YAML files relative to the AdmissionConfiguration's directory), read as
// `kubectl apply -f` reads them, `kind: List` included. Each object remembers where it came from,
// for error messages.
import { isAbsolute, resolve } from 'node:path';
import type { ConfigSource } from '../admission/plugin.js';
import { DocumentError, NO_SUCH_FILE, readDocuments } from '../config/documents.js';
import { ConfigError } from '../config/errors.js';
import { ConfigFields, isRecord } from '../config/fields.js';

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

function readFile(plugin: string, path: string, field: string, source: ConfigSource, out: Manifest[]): void {
  const file = isAbsolute(path) ? path : resolve(source.baseDir, path);
  let documents: readonly unknown[];
  try {
    documents = readDocuments(file);
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    const reason = error.reason === NO_SUCH_FILE ? 'does not exist' : error.reason;
    throw new ConfigError(plugin, field, `file ${file} ${reason}`);
  }
  documents.forEach((document, i) => {
    expand(plugin, document, `${path} document ${i + 1}`, out);
  });
}

/**
 * What a namespaceSelector does with a namespace the webhook has never seen (created before
 * installation and not yet loaded by `npm run sync`): its labels are unknown, so whether the policy
 * or binding matches is unknown too. Applying it could change or refuse what the apiserver's own
 * policy would leave alone, and judging it against no labels can do the same for a NotIn or
 * DoesNotExist selector; silently skipping it hides that it was not applied. So the default, Skip,
 * does not apply it and adds one warning to the answer naming the missing sync (neverSeenWarning).
 * NoLabels judges the selector against no labels (the earlier default); Fail answers a policy error
 * under the policy's failurePolicy.
 */
export type UnknownNamespaceRule = 'Skip' | 'NoLabels' | 'Fail';

export interface PluginOptions {
  readonly manifests: readonly Manifest[];
  /** What a namespaceSelector does for a namespace the webhook has never seen. */
  readonly unknownNamespace: UnknownNamespaceRule;
  /** The apiserver version whose CEL environment compiles the policies (`celEnvironment`). */
  readonly celEnvironment: EnvironmentVersion;
}

const OPTION_KEYS = ['apiVersion', 'kind', 'manifests', 'paths', 'unknownNamespace', 'celEnvironment'];

/**
 * Reads the AdmissionConfiguration entry of `plugin` (its upstream name, for errors); undefined:
 * no policies, every request admitted.
 */
export function readOptions(plugin: string, raw: unknown, source: ConfigSource): PluginOptions {
  if (raw === undefined || raw === null)
    return { manifests: [], unknownNamespace: 'Skip', celEnvironment: DEFAULT_ENVIRONMENT };
  const entry = ConfigFields.of(plugin, raw, `an object in ${source.file}`).allow(...OPTION_KEYS);
  const unknownNamespace = entry.oneOf('unknownNamespace', ['Skip', 'NoLabels', 'Fail'] as const, 'Skip');
  const celEnvironment = entry.oneOf('celEnvironment', ENVIRONMENT_VERSIONS, DEFAULT_ENVIRONMENT);
  const manifests: Manifest[] = [];
  for (const [i, object] of entry.array('manifests', 'a list of objects').entries())
    expand(plugin, object, `manifests[${i}]`, manifests);
  for (const [i, path] of entry.strings('paths', { nonEmpty: true }).entries())
    readFile(plugin, path, `paths[${i}]`, source, manifests);
  return { manifests, unknownNamespace, celEnvironment };
}
