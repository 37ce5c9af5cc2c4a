// The grammar of a webhook URL's path, `[/<cluster>][/<capability>]/<plugin>/<endpoint>`, in one place: the
// emitter formats it into clientConfig.url, serverless.yml into API Gateway routes, the local
// server and the handler parse it, and the logs print it with the capability taken out.
//
// Endpoints: `mutate` and `validate` judge (upstream's Admit and Validate); `learn` only records
// what the cluster teaches (learned state, side effects a plugin observes) and always admits. In
// url-secret mode (EKS, GKE, AKS) the first segment is a capability for exactly this plugin and
// endpoint (lib/http/capability.ts), so nothing but `format` ever writes it, and it is read as it
// was sent: never percent-decoded, so a capability has one spelling, and one URL one string.
//
// A fleet (one deployment serving many clusters, lib/config/fleet.ts) puts the cluster's name
// first: `/<cluster>[/<capability>]/<plugin>/<endpoint>`. Without a fleet there is no cluster
// segment, and the paths are exactly those of a single cluster. Deployed, the cluster segment is
// the cluster's own API Gateway stage (or the custom domain's base path mapped to it), so the
// API's routes are a single cluster's, and the handler reads the path as called (event.ts).

import type { Phase } from '../admission/response.js';
import { isClusterName } from '../config/fleet.js';

export type { Phase };

/** What a path can name after the plugin: a judging phase, or the learning endpoint. */
export type Endpoint = Phase | 'learn';

export interface WebhookRoute {
  readonly plugin: string;
  readonly endpoint: Endpoint;
  /** url-secret mode: the caller's capability, as the path spells it. */
  readonly capability?: string;
  /** A fleet: the cluster the path is for (a DNS label). */
  readonly cluster?: string;
}

/** How a deployment's paths are shaped: a capability segment (url-secret mode), a cluster segment (a fleet). */
export interface PathShape {
  readonly withCapability: boolean;
  readonly inFleet?: boolean;
}

/** API Gateway's path parameter standing for the capability segment in serverless.yml's routes. */
export const CAPABILITY_PATH_PARAMETER = '{capability}';

/** What a logged or answered path shows instead of a segment that may be a capability. */
export const REDACTED = '<redacted>';

export const ENDPOINTS: readonly Endpoint[] = ['mutate', 'validate', 'learn'];

export const isEndpoint = (segment: string | undefined): segment is Endpoint =>
  segment === 'mutate' || segment === 'validate' || segment === 'learn';

/**
 * `/<plugin>/<endpoint>`, or `/<capability>/<plugin>/<endpoint>` (base64url needs no encoding),
 * each after `/<cluster>` in a fleet.
 */
export function formatWebhookPath(route: WebhookRoute): string {
  const { capability, cluster } = route;
  const prefix = `${cluster === undefined ? '' : `/${cluster}`}${capability === undefined ? '' : `/${capability}`}`;
  return `${prefix}/${route.plugin}/${route.endpoint}`;
}

/** A fleet: the cluster a path names in its first segment, if that segment is a cluster name. */
export function clusterOfPath(path: string): string | undefined {
  const first = path.split('?')[0].split('/')[1];
  return first !== undefined && isClusterName(first) ? first : undefined;
}

function segmentsOf(path: string): string[] {
  return path.split('?')[0].split('/').filter(Boolean);
}

/**
 * The route a request path names (the apiserver appends `?timeout=10s`: ignored), or undefined
 * when the path does not have exactly the shape of the mode: two segments with mTLS, exactly
 * `/<capability>/<plugin>/<endpoint>` in url-secret mode (no empty segment, no trailing `/`: one
 * spelling). The capability is the segment as sent; percent-encoding in it grants nothing. API
 * Gateway's REST APIs pass the path with its percent-encoding, as the local server does (an HTTP
 * API would decode it first: the template serves REST only).
 */
export function parseWebhookPath(path: string, shape: boolean | PathShape): WebhookRoute | undefined {
  const { withCapability, inFleet } = typeof shape === 'boolean' ? { withCapability: shape, inFleet: false } : shape;
  if (inFleet) {
    const cluster = clusterOfPath(path);
    if (cluster === undefined) return undefined;
    const rest = parseWebhookPath(path.slice(cluster.length + 1), withCapability);
    return rest && { ...rest, cluster };
  }
  if (!withCapability) {
    const segments = segmentsOf(path);
    if (segments.length !== 2) return undefined;
    const [plugin, endpoint] = segments;
    return isEndpoint(endpoint) ? { plugin, endpoint } : undefined;
  }
  const segments = path.split('?')[0].split('/');
  if (segments.length !== 4 || segments[0] !== '') return undefined;
  const [, capability, plugin, endpoint] = segments;
  if (capability === '' || plugin === '' || !isEndpoint(endpoint)) return undefined;
  return { plugin, endpoint, capability };
}

/**
 * url-secret mode: the path before `[/<cluster>]/<capability>/<plugin>/<endpoint>` in the path as
 * the caller sent it (a single cluster's `/<stage>` on an execute-api name), which a capability's
 * deployment names. A fleet's cluster segment belongs to the route, whether it is a stage or not:
 * its capabilities name the cluster in a line of their own.
 */
export function basePathBeforeRoute(fullPath: string, inFleet = false): string {
  const segments = segmentsOf(fullPath);
  const route = inFleet ? 4 : 3;
  return segments.length > route ? `/${segments.slice(0, -route).join('/')}` : '';
}

/**
 * The path as it may be logged or echoed. In url-secret mode every segment that is not a known
 * plugin name or an endpoint becomes `<redacted>`, wherever it stands: a caller that puts its
 * capability in the wrong place must not find it in CloudWatch either. mTLS paths carry none.
 */
export function redactWebhookPath(path: string, withCapability: boolean, knownPlugins: ReadonlySet<string>): string {
  const clean = path.split('?')[0];
  if (!withCapability) return clean;
  const segments = segmentsOf(clean).map((s) => (isEndpoint(s) || knownPlugins.has(s) ? s : REDACTED));
  return `/${segments.join('/')}`;
}
