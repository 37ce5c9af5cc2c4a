// Who may call for one cluster of a fleet (lib/config/fleet.ts), in one place for `npm start` and
// the packaged functions: with mTLS, the certificate subjects of its apiservers (never empty: an
// empty list would let any cluster's certificate in); with capability URLs, its own public keys.
// And the fleet a packaged function starts from: its package names every cluster of the
// deployment (infra/serverless/packaged-config.ts).
import { existsSync, readFileSync } from 'node:fs';
import type { PackagedCluster, PackagedConfiguration } from '../config/documents.js';
import { isPackagedConfiguration, parseDocumentText, usePackagedConfiguration } from '../config/documents.js';
import { ConfigError } from '../config/errors.js';
import type { CallerAuth } from './caller-identity.js';
import { CapabilityVerifier } from './capability.js';

export type CallerAuthMode = CallerAuth['mode'];

/** What a cluster's callers are checked against: its settings, or what a package holds of them. */
export type ClusterCallers = Pick<PackagedCluster, 'name' | 'allowedSubjects' | 'capabilityKeys'>;

/**
 * The caller check of one cluster; a ConfigError naming `settingsFile` when the cluster cannot be
 * told from the others (mTLS without subjects) or its keys are not keys.
 */
export function clusterCallerAuth(cluster: ClusterCallers, mode: CallerAuthMode, settingsFile: string): CallerAuth {
  if (mode === 'mtls') {
    if (cluster.allowedSubjects.length === 0)
      throw new ConfigError(
        `cluster ${cluster.name}`,
        'allowedSubjects',
        `mTLS in a fleet needs the client certificate subjects of this cluster's apiservers in ${settingsFile} (allowedSubjects: [CN]), so that no other cluster's certificate is let in`,
      );
    return { mode, allowedSubjects: cluster.allowedSubjects, cluster: cluster.name };
  }
  try {
    return { mode, capabilities: new CapabilityVerifier(cluster.capabilityKeys), cluster: cluster.name };
  } catch (error) {
    throw new ConfigError(`cluster settings ${settingsFile}`, 'capabilityKeys', (error as Error).message);
  }
}

/**
 * A packaged function's fleet: the package ADMISSION_CONFIG names, when it is a fleet's (made the
 * source of every configuration file read from now on); undefined for a single cluster.
 */
export function packagedFleetFromEnv(env: NodeJS.ProcessEnv = process.env): PackagedConfiguration | undefined {
  const file = env.ADMISSION_CONFIG;
  // A package is JSON; the YAML of npm start and the CLIs is never a fleet's package.
  if (!file?.endsWith('.json') || !existsSync(file)) return undefined;
  // Read from disk, not through the package: the package is what it is about to become.
  const doc = parseDocumentText(readFileSync(file, 'utf8'), file);
  if (!isPackagedConfiguration(doc) || doc.fleet === undefined) return undefined;
  usePackagedConfiguration(doc);
  return doc;
}

/** CALLER_AUTH: the mode every cluster of a packaged fleet is called in (their keys are in the package). */
export function callerAuthModeFromEnv(env: NodeJS.ProcessEnv = process.env): CallerAuthMode {
  const mode = env.CALLER_AUTH ?? 'mtls';
  if (mode !== 'mtls' && mode !== 'url-secret')
    throw new Error(`CALLER_AUTH must be mtls or url-secret, got ${JSON.stringify(mode)}`);
  return mode;
}
