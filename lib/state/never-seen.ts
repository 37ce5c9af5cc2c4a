// What a plugin does with a namespace it has never seen (created before installation and not yet
// loaded by `npm run sync`, or whose Namespace writes never reached its webhook). Explicit and
// configurable per plugin, never an accident: env `<PLUGIN>_UNKNOWN_NAMESPACE` (for example
// POD_NODE_SELECTOR_UNKNOWN_NAMESPACE=reject), else `UNKNOWN_NAMESPACE`, else the plugin's default.
import { ConfigError } from '../config/errors.js';

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
