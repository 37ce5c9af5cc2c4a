import { CapabilityVerifier } from './capability.js';
import { forbiddenCaller } from './errors.js';
import type { GatewayEvent } from './event.js';
import { clientCertificate } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest, CallerIdentity } from './invocation.js';
import { established } from './invocation.js';
import type { WebhookRoute } from './webhook-path.js';

/**
 * Who may call (design item 8). In `mtls` mode API Gateway has already verified the client
 * certificate against the truststore; we refuse requests that arrive without one (a mis-wired
 * endpoint) and, when a subject allowlist is set, certificates of other subjects. In `url-secret`
 * mode (EKS, GKE, AKS cannot present client certificates) the path carries a capability for
 * exactly the plugin and endpoint it names, `/<capability>/<plugin>/<endpoint>`, checked against
 * the deployment's public keys (lib/http/capability.ts); two keys may be live at once so the
 * deployment key rotates without downtime.
 */
export type CallerAuth =
  | { readonly mode: 'mtls'; readonly allowedSubjects: readonly string[] }
  | { readonly mode: 'url-secret'; readonly capabilities: CapabilityVerifier };

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

/** Whether the mode puts a capability segment first in webhook paths. */
export const capabilityInPath = (auth: CallerAuth): boolean => auth.mode === 'url-secret';

function identify(event: GatewayEvent, route: WebhookRoute, auth: CallerAuth): CallerIdentity {
  if (auth.mode === 'url-secret') {
    const { plugin, endpoint, capability } = route;
    const key = capability ? auth.capabilities.check(capability, { plugin, endpoint }) : undefined;
    if (key === undefined) throw forbiddenCaller(`caller capability missing or not valid for ${plugin}/${endpoint}`);
    return { mode: 'url-secret', subject: `capability:${plugin}/${endpoint}@key:${key}` };
  }
  const certificate = clientCertificate(event);
  if (!certificate?.subjectDN) throw forbiddenCaller('client certificate required');
  const { subjectDN } = certificate;
  if (auth.allowedSubjects.length > 0) {
    const cn = commonName(subjectDN);
    const allowed = auth.allowedSubjects.some((s) => s === subjectDN || s === cn);
    if (!allowed) throw forbiddenCaller(`client certificate subject ${JSON.stringify(subjectDN)} is not allowed`);
  }
  return { mode: 'mtls', subject: subjectDN };
}

export function callerIdentity(auth: CallerAuth): AdmissionMiddleware {
  const callerIdentityBefore = (request: AdmissionMiddyRequest): void => {
    const { admission } = request.context;
    admission.caller = identify(request.event, established(request.context, 'route'), auth);
  };
  return { before: callerIdentityBefore };
}
