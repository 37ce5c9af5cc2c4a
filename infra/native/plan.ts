// Which active plugins a cluster of a given Kubernetes version can run itself, as native
// admission policies, and which stay webhooks, with one line each saying which and why.
import type { ConfiguredPlugin } from '../../lib/config/plugins.js';
import type { EnvironmentVersion } from '../../lib/cel/cel-env.js';
import type { Deployment, NativeObject } from './objects.js';
import { nativeObjects } from './objects.js';
import type { Compilation, NativePolicy } from './policy.js';
import { compilers } from './registry.js';
import { webhookOnly } from './why.js';

export interface PluginPlan {
  readonly configured: ConfiguredPlugin;
  /** The native objects, when the plugin is native on this version. */
  readonly objects?: readonly NativeObject[];
  /** The one line for stderr: `native: ...` or `webhook: ...`. */
  readonly line: string;
  /** Further stderr lines: `warning: ...`, a configured choice that cannot take effect. */
  readonly warnings?: readonly string[];
}

const kinds = (policies: readonly NativePolicy[]) =>
  [...new Set(policies.map((p) => p.kind))].sort((a, b) => (a === b ? 0 : a.startsWith('Mutating') ? -1 : 1));

/** The plugin compiled for `version`, or why it stays a webhook there. */
export function compilePlugin(configured: ConfiguredPlugin, version: EnvironmentVersion): Compilation {
  const compiler = compilers.get(configured.plugin.metadata.name);
  if (compiler === undefined) return { webhook: webhookOnly(configured.plugin.metadata.name) };
  return compiler.compile(configured.config, version);
}

export function planPlugin(
  configured: ConfiguredPlugin,
  version: EnvironmentVersion,
  options: Pick<Deployment, 'webhookNamespace' | 'stagedNamespace'> = {},
): PluginPlan {
  const { metadata } = configured.plugin;
  const who = `${metadata.upstreamName} (${metadata.name})`;
  const compiled = compilePlugin(configured, version);
  if ('webhook' in compiled) return { configured, line: `webhook: ${who}: ${compiled.webhook}` };
  const deployment: Deployment = {
    enforcement: configured.enforcement,
    exemptions: configured.exemptions,
    ...options,
  };
  const differences = compiled.differences?.length ? `; differs: ${compiled.differences.join('; ')}` : '';
  return {
    configured,
    objects: nativeObjects(metadata, compiled.policies, deployment),
    line: `native: ${who}: ${kinds(compiled.policies).join(' + ')}${differences}`,
    ...(compiled.warnings?.length && { warnings: compiled.warnings.map((w) => `warning: ${who}: ${w}`) }),
  };
}
