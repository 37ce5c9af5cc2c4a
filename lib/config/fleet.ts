// A fleet: one deployment serving many clusters (design item 13). A cluster is a file,
// `config/clusters/<cluster>.yaml`, the kube-apiserver's own AdmissionConfiguration for that
// cluster, and beside it, optionally, `config/clusters/<cluster>.settings.yaml`: what the project
// needs to know of the cluster that upstream's file has no place for (who may call for it, which
// kubeconfig reads it, its fair share). A directory without cluster files is no fleet: the one
// cluster of config/admission.yaml, with today's URLs and store keys.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readDocument } from './documents.js';
import { ConfigError } from './errors.js';
import { closestName } from './fields.js';

export const CLUSTERS_DIR = 'config/clusters';
const SETTINGS_SUFFIX = '.settings.yaml';

/** A cluster's name is a DNS label (RFC 1123): it stands in URLs, store keys and metric dimensions. */
const CLUSTER_NAME = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

export const isClusterName = (name: string): boolean => CLUSTER_NAME.test(name);

export function checkClusterName(name: string, where: string): string {
  if (!isClusterName(name)) {
    throw new ConfigError(
      'cluster',
      'name',
      `${JSON.stringify(name)} (${where}) is not a DNS label: lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit (e.g. ${JSON.stringify(suggestName(name))})`,
    );
  }
  return name;
}

function suggestName(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return cleaned || 'cluster-1';
}

/** Who may call for one cluster, how it is read, and its share of the deployment. */
export interface ClusterSettings {
  /** mTLS: the client certificate subjects (CN or DN) of this cluster's apiservers. */
  readonly allowedSubjects: readonly string[];
  /** url-secret: the cluster key's public half (one, or two during a rotation); else from its key file. */
  readonly capabilityKeys: readonly string[];
  /** The kubeconfig the cluster reader uses for this cluster (the fleet's CLUSTER_KUBECONFIG). */
  readonly readerKubeconfig?: string;
  /** Fair share: requests per second this cluster may send on average, and in a burst. */
  readonly throttle?: { readonly requestsPerSecond: number; readonly burst: number };
}

export interface FleetCluster {
  readonly name: string;
  /** Its AdmissionConfiguration: what ADMISSION_CONFIG names for this cluster. */
  readonly configFile: string;
  readonly settingsFile?: string;
  readonly settings: ClusterSettings;
}

/** The clusters whose files exist in `dir`, by name; empty when there is no fleet. */
export function clusterNames(dir = CLUSTERS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml') && !file.endsWith(SETTINGS_SUFFIX))
    .map((file) => checkClusterName(file.slice(0, -'.yaml'.length), join(dir, file)))
    .sort();
}

const SETTINGS_FIELDS = ['allowedSubjects', 'capabilityKeys', 'readerKubeconfig', 'throttle'] as const;

function stringList(value: unknown, file: string, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === ''))
    throw new ConfigError(`cluster settings ${file}`, field, 'must be a list of non-empty strings');
  return value as string[];
}

/**
 * A cluster's fair share when its settings name none: API Gateway's default for one webhook route
 * (infra/serverless/throttling.ts), so that the local server and a deployment refuse alike.
 */
export const DEFAULT_CLUSTER_THROTTLE: NonNullable<ClusterSettings['throttle']> = {
  requestsPerSecond: 200,
  burst: 400,
};

const THROTTLE_FIELDS = ['requestsPerSecond', 'burst'] as const;
const THROTTLE_EXAMPLE = `e.g. throttle: {requestsPerSecond: ${DEFAULT_CLUSTER_THROTTLE.requestsPerSecond}, burst: ${DEFAULT_CLUSTER_THROTTLE.burst}}`;

/** The fair share a cluster is held to: its settings', else the default. */
export function clusterThrottle(settings: ClusterSettings): NonNullable<ClusterSettings['throttle']> {
  return settings.throttle ?? DEFAULT_CLUSTER_THROTTLE;
}

function parseThrottle(value: unknown, file: string): NonNullable<ClusterSettings['throttle']> {
  const where = `cluster settings ${file}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(where, 'throttle', `must be a mapping (${THROTTLE_EXAMPLE})`);
  const t = value as Record<string, unknown>;
  for (const field of Object.keys(t))
    if (!(THROTTLE_FIELDS as readonly string[]).includes(field))
      throw new ConfigError(where, `throttle.${field}`, `unknown field; known fields: ${THROTTLE_FIELDS.join(', ')}`);
  const rate = t.requestsPerSecond;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0)
    throw new ConfigError(
      where,
      'throttle.requestsPerSecond',
      `must be a number > 0 (requests per second this cluster may send on average), got ${JSON.stringify(rate)}; ${THROTTLE_EXAMPLE}`,
    );
  // A bucket holds whole requests: a burst below 1 would refuse every request.
  const burst = t.burst ?? Math.max(1, Math.ceil(rate));
  if (typeof burst !== 'number' || !Number.isInteger(burst) || burst < 1)
    throw new ConfigError(
      where,
      'throttle.burst',
      `must be a whole number >= 1 (requests this cluster may send at once), got ${JSON.stringify(t.burst)}; ${THROTTLE_EXAMPLE}`,
    );
  return { requestsPerSecond: rate, burst };
}

export function parseClusterSettings(document: unknown, file: string): ClusterSettings {
  const doc = (document ?? {}) as Record<string, unknown>;
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new ConfigError(`cluster settings ${file}`, '', 'must be a mapping');
  for (const field of Object.keys(doc)) {
    if (!(SETTINGS_FIELDS as readonly string[]).includes(field))
      throw new ConfigError(
        `cluster settings ${file}`,
        field,
        `unknown field; known fields: ${SETTINGS_FIELDS.join(', ')}`,
      );
  }
  const capabilityKeys = stringList(doc.capabilityKeys, file, 'capabilityKeys');
  if (capabilityKeys.length > 2)
    throw new ConfigError(`cluster settings ${file}`, 'capabilityKeys', 'one or two keys are live at once');
  const throttle = doc.throttle === undefined ? undefined : parseThrottle(doc.throttle, file);
  if (doc.readerKubeconfig !== undefined && typeof doc.readerKubeconfig !== 'string')
    throw new ConfigError(`cluster settings ${file}`, 'readerKubeconfig', 'must be a file name');
  return {
    allowedSubjects: stringList(doc.allowedSubjects, file, 'allowedSubjects'),
    capabilityKeys,
    ...(typeof doc.readerKubeconfig === 'string' && { readerKubeconfig: doc.readerKubeconfig }),
    ...(throttle && { throttle }),
  };
}

/** One cluster of the fleet in `dir`: a ConfigError naming the file when it has none. */
export function fleetCluster(name: string, dir = CLUSTERS_DIR): FleetCluster {
  checkClusterName(name, '--cluster');
  const configFile = join(dir, `${name}.yaml`);
  if (!existsSync(configFile)) {
    const known = clusterNames(dir);
    const closest = closestName(name, known);
    throw new ConfigError(
      'cluster',
      name,
      `no file ${configFile}${known.length > 0 ? `;${closest !== undefined ? ` did you mean ${JSON.stringify(closest)}?` : ''} clusters: ${known.join(', ')}` : `: create it (an AdmissionConfiguration) to add the cluster`}`,
    );
  }
  const settingsFile = join(dir, `${name}${SETTINGS_SUFFIX}`);
  const hasSettings = existsSync(settingsFile);
  return {
    name,
    configFile,
    ...(hasSettings && { settingsFile }),
    settings: hasSettings
      ? parseClusterSettings(readDocument(settingsFile), settingsFile)
      : { allowedSubjects: [], capabilityKeys: [] },
  };
}

/** Every cluster of the fleet in `dir`, settings read and checked; empty when there is no fleet. */
export function loadFleet(dir = CLUSTERS_DIR): FleetCluster[] {
  const clusters = clusterNames(dir).map((name) => fleetCluster(name, dir));
  // mTLS: a certificate names one cluster, or the server could not say whose it is.
  const owner = new Map<string, string>();
  for (const cluster of clusters) {
    for (const subject of cluster.settings.allowedSubjects) {
      const other = owner.get(subject);
      if (other !== undefined)
        throw new ConfigError(
          `cluster settings ${cluster.settingsFile}`,
          'allowedSubjects',
          `${JSON.stringify(subject)} is also allowed for cluster ${other}: give each cluster's apiservers a certificate of their own`,
        );
      owner.set(subject, cluster.name);
    }
  }
  return clusters;
}

/** The environment a command runs with for one cluster: its AdmissionConfiguration. */
export function clusterEnv(cluster: FleetCluster, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, ADMISSION_CONFIG: cluster.configFile };
}
