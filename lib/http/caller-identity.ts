import { CapabilityVerifier, deploymentName } from './capability.js';
import { forbiddenCaller, refusedCapability } from './errors.js';
import type { GatewayEvent } from './event.js';
import { calledPath, clientCertificate, reachedDomain } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest, CallerIdentity } from './invocation.js';
import type { WebhookRoute } from './webhook-path.js';
import { basePathBeforeRoute } from './webhook-path.js';

/**
 * Who may call (design item 8). In `mtls` mode API Gateway has already verified the client
 * certificate against the truststore; we refuse requests that arrive without one (a mis-wired
 * endpoint) and, when a subject allowlist is set, certificates of other subjects. In `url-secret`
 * mode (EKS, GKE, AKS cannot present client certificates) the path carries a capability for
 * exactly the plugin and endpoint it names, `/<capability>/<plugin>/<endpoint>`, at the deployment
 * the request reached, checked against the deployment's public keys (lib/http/capability.ts); two
 * keys may be live at once so the deployment key rotates without downtime. The caller is checked
 * before the route is: every refusal reads the same, whatever the path names, so a caller without
 * a capability learns nothing of which plugins or endpoints are served.
 */
export type CallerAuth = (
  | { readonly mode: 'mtls'; readonly allowedSubjects: readonly string[] }
  | { readonly mode: 'url-secret'; readonly capabilities: CapabilityVerifier }
) & {
  /**
   * A fleet's cluster (lib/config/fleet.ts) whose requests these are: its paths begin with
   * `/<cluster>`, its capabilities name it and are checked against its own keys only, and with mTLS
   * only its own certificate subjects (allowedSubjects, never empty in a fleet) are let in.
   */
  readonly cluster?: string;
};

function splitList(value: string | undefined, separator: RegExp): string[] {
  return (value ?? '')
    .split(separator)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** CALLER_AUTH=mtls|url-secret, ALLOWED_CLIENT_SUBJECTS=cn1;cn2, URL_CAPABILITY_KEYS=key[,key]. */
export function callerAuthFromEnv(env: NodeJS.ProcessEnv = process.env): CallerAuth {
  const mode = env.CALLER_AUTH ?? 'mtls';
  if (mode === 'mtls') return { mode, allowedSubjects: splitList(env.ALLOWED_CLIENT_SUBJECTS, /;/) };
  if (mode === 'url-secret') {
    const keys = splitList(env.URL_CAPABILITY_KEYS, /,/);
    try {
      return { mode, capabilities: new CapabilityVerifier(keys) };
    } catch (error) {
      throw new Error(
        `CALLER_AUTH=url-secret needs URL_CAPABILITY_KEYS: one or two deployment public keys, comma-separated (npm run emit -- --auth url-secret --public-key prints one): ${(error as Error).message}`,
      );
    }
  }
  throw new Error(`CALLER_AUTH must be mtls or url-secret, got ${JSON.stringify(mode)}`);
}

/** The CN of a subject DN in either order API Gateway or Node prints it. */
export function commonName(subjectDN: string): string | undefined {
  const match = /(?:^|[,/]\s*)CN=((?:\\.|[^,/+])*)/.exec(subjectDN);
  return match?.[1].replace(/\\(.)/g, '$1').trim();
}

/** Whether an allowlist entry names the certificate: its whole subject DN, or its CN. */
export function subjectAllowed(allowedSubjects: readonly string[], subjectDN: string): boolean {
  const cn = commonName(subjectDN);
  return allowedSubjects.some((s) => s === subjectDN || s === cn);
}

/** Whether the mode puts a capability segment first in webhook paths. */
export const capabilityInPath = (auth: CallerAuth): boolean => auth.mode === 'url-secret';

/**
 * The deployment the request reached (lib/http/capability.ts): the name API Gateway saw, and the
 * path before the route as the caller sent it (an execute-api name's stage).
 */
export function reachedDeployment(event: GatewayEvent, inFleet = false): string | undefined {
  const domain = reachedDomain(event);
  return domain === undefined ? undefined : deploymentName(domain, basePathBeforeRoute(calledPath(event), inFleet));
}

function identify(event: GatewayEvent, route: WebhookRoute | undefined, auth: CallerAuth): CallerIdentity {
  const { cluster } = auth;
  if (auth.mode === 'url-secret') {
    const deployment = route?.capability ? reachedDeployment(event, cluster !== undefined) : undefined;
    if (route?.capability === undefined || deployment === undefined) throw refusedCapability();
    // Another cluster's path never reaches this cluster's keys.
    if (route.cluster !== cluster) throw refusedCapability();
    const { plugin, endpoint, capability } = route;
    const key = auth.capabilities.check(capability, { deployment, cluster, grant: { plugin, endpoint } });
    if (key === undefined) throw refusedCapability();
    return { mode: 'url-secret', subject: `capability:${plugin}/${endpoint}@key:${key}` };
  }
  const certificate = clientCertificate(event);
  if (!certificate?.subjectDN) throw forbiddenCaller('client certificate required');
  const { subjectDN } = certificate;
  if (cluster !== undefined) {
    // A fleet: the certificate says which cluster calls, and it calls for that cluster only.
    if (!subjectAllowed(auth.allowedSubjects, subjectDN) || route?.cluster !== cluster)
      throw forbiddenCaller(
        `client certificate subject ${JSON.stringify(subjectDN)} is not allowed for cluster ${cluster}`,
      );
    return { mode: 'mtls', subject: subjectDN };
  }
  if (auth.allowedSubjects.length > 0) {
    if (!subjectAllowed(auth.allowedSubjects, subjectDN))
      throw forbiddenCaller(`client certificate subject ${JSON.stringify(subjectDN)} is not allowed`);
  }
  return { mode: 'mtls', subject: subjectDN };
}

export function callerIdentity(auth: CallerAuth): AdmissionMiddleware {
  const callerIdentityBefore = (request: AdmissionMiddyRequest): void => {
    const { admission } = request.context;
    // The route as the path names it, served here or not (the route middleware says which, after).
    admission.caller = identify(request.event, admission.requested, auth);
  };
  return { before: callerIdentityBefore };
}
