// The grammar of a webhook URL's path, `[/<secret>]/<plugin>/<phase>`, in one place: the emitter
// formats it into clientConfig.url, serverless.yml into API Gateway routes, the local server and
// the handler parse it, and the logs print it with the secret taken out. In url-secret mode (EKS,
// GKE, AKS) the first segment is the cluster's credential, so nothing but `format` ever writes it.

import type { Phase } from '../admission/response.js';

export type { Phase };

export interface WebhookRoute {
  readonly plugin: string;
  readonly phase: Phase;
  /** url-secret mode: the caller's secret, decoded. */
  readonly secret?: string;
}

/** API Gateway's path parameter standing for the secret segment in serverless.yml's routes. */
export const SECRET_PATH_PARAMETER = '{secret}';

/** What a logged or answered path shows instead of a segment that may be the secret. */
export const REDACTED = '<redacted>';

export const isPhase = (segment: string | undefined): segment is Phase =>
  segment === 'mutate' || segment === 'validate';

/** `/<plugin>/<phase>`, or `/<secret>/<plugin>/<phase>` with the secret URL-encoded. */
export function formatWebhookPath(route: WebhookRoute): string {
  const { secret } = route;
  const prefix =
    secret === undefined ? '' : `/${secret === SECRET_PATH_PARAMETER ? secret : encodeURIComponent(secret)}`;
  return `${prefix}/${route.plugin}/${route.phase}`;
}

function segmentsOf(path: string): string[] {
  return path.split('?')[0].split('/').filter(Boolean);
}

/**
 * The route a request path names (the apiserver appends `?timeout=10s`: ignored), or undefined
 * when the path does not have exactly the shape of the mode: two segments with mTLS, three with a
 * secret first in url-secret mode. A secret that is not valid URL encoding reads as ''.
 */
export function parseWebhookPath(path: string, withSecret: boolean): WebhookRoute | undefined {
  const segments = segmentsOf(path);
  if (segments.length !== (withSecret ? 3 : 2)) return undefined;
  const [phase, plugin] = [segments[segments.length - 1], segments[segments.length - 2]];
  if (!isPhase(phase)) return undefined;
  if (!withSecret) return { plugin, phase };
  let secret = '';
  try {
    secret = decodeURIComponent(segments[0]);
  } catch {
    // Malformed percent-encoding: no secret, refused by the caller check.
  }
  return { plugin, phase, secret };
}

/**
 * The path as it may be logged or echoed. In url-secret mode every segment that is not a known
 * plugin name or a phase becomes `<redacted>`, wherever it stands: a caller that puts its secret
 * in the wrong place must not find it in CloudWatch either. mTLS paths carry no secret.
 */
export function redactWebhookPath(path: string, withSecret: boolean, knownPlugins: ReadonlySet<string>): string {
  const clean = path.split('?')[0];
  if (!withSecret) return clean;
  const segments = segmentsOf(clean).map((s) => (isPhase(s) || knownPlugins.has(s) ? s : REDACTED));
  return `/${segments.join('/')}`;
}
