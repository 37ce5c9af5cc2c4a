// What a plugin does with a namespace it has never seen (created before installation and not yet
// loaded by `npm run sync`, or whose Namespace writes never reached its learning webhook). The
// default of every plugin is `warn`: the answer that cannot be wrong (nothing the namespace's
// learned labels or annotations would decide is applied or refused) plus one warning, which the
// user sees in kubectl, naming the fix. Another answer is a deliberate choice of the operator:
// env `<PLUGIN>_UNKNOWN_NAMESPACE` (for example POD_NODE_SELECTOR_UNKNOWN_NAMESPACE=default), else
// `UNKNOWN_NAMESPACE`, else the plugin's default.
import { ConfigError } from '../config/errors.js';

/** The page that tells an operator how to load objects that existed before installation. */
export const SEED_STATE_DOC = 'docs/seed-state.md';

export function unknownNamespaceRule<Rule extends string>(
  upstreamName: string,
  pluginName: string,
  allowed: readonly Rule[],
  fallback: Rule,
  env: NodeJS.ProcessEnv = process.env,
): Rule {
  const specific = `${pluginName.toUpperCase().replace(/-/g, '_')}_UNKNOWN_NAMESPACE`;
  const value = env[specific] ?? env.UNKNOWN_NAMESPACE;
  if (value === undefined || value === '') return fallback;
  if (!allowed.includes(value as Rule)) {
    throw new ConfigError(
      upstreamName,
      env[specific] !== undefined ? specific : 'UNKNOWN_NAMESPACE',
      `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as Rule;
}

/**
 * The one warning a plugin returns when it answered a request without the namespace's learned
 * metadata: `consequence` says what it therefore did not do ("its node selector was not applied").
 */
export function neverSeenWarning(upstreamName: string, namespace: string, consequence: string): string {
  return neverSeenObjectWarning(upstreamName, 'namespace', namespace, consequence);
}

/** The same warning for another learned object a request names (a pod's Node). */
export function neverSeenObjectWarning(
  upstreamName: string,
  kind: 'namespace' | 'node',
  name: string,
  consequence: string,
): string {
  return `${upstreamName}: ${kind} ${JSON.stringify(name)} is not learned yet, so ${consequence}; load the cluster's existing ${kind}s with npm run sync (${SEED_STATE_DOC})`;
}
