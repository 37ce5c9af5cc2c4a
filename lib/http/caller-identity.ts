import { createHash, timingSafeEqual } from 'node:crypto';
import { forbiddenCaller } from './errors.js';
import type { GatewayEvent } from './event.js';
import { clientCertificate } from './event.js';
import type { AdmissionMiddleware, AdmissionMiddyRequest, CallerIdentity } from './invocation.js';
import { established } from './invocation.js';

/**
 * Who may call (design item 8). In `mtls` mode API Gateway has already verified the client
 * certificate against the truststore; we refuse requests that arrive without one (a mis-wired
 * endpoint) and, when a subject allowlist is set, certificates of other subjects. In `url-secret`
 * mode (EKS, GKE, AKS cannot present client certificates) the path carries a per-cluster secret,
 * `/<secret>/<plugin>/<phase>`, checked in constant time against stored SHA-256 digests; two
 * digests may be live at once so a secret rotates without downtime.
 */
export type CallerAuth =
  | { readonly mode: 'mtls'; readonly allowedSubjects: readonly string[] }
  | { readonly mode: 'url-secret'; readonly secretDigests: readonly Buffer[] };

function splitList(value: string | undefined, separator: RegExp): string[] {
  return (value ?? '')
    .split(separator)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** CALLER_AUTH=mtls|url-secret, ALLOWED_CLIENT_SUBJECTS=cn1;cn2, URL_SECRET_SHA256=hex[,hex]. */
export function callerAuthFromEnv(env: NodeJS.ProcessEnv = process.env): CallerAuth {
  const mode = env.CALLER_AUTH ?? 'mtls';
  if (mode === 'mtls') return { mode, allowedSubjects: splitList(env.ALLOWED_CLIENT_SUBJECTS, /;/) };
  if (mode === 'url-secret') {
    const digests = splitList(env.URL_SECRET_SHA256, /,/);
    if (digests.length === 0 || digests.some((d) => !/^[0-9a-f]{64}$/i.test(d))) {
      throw new Error(
        'CALLER_AUTH=url-secret needs URL_SECRET_SHA256: one or two hex SHA-256 digests, comma-separated',
      );
    }
    return { mode, secretDigests: digests.map((d) => Buffer.from(d, 'hex')) };
  }
  throw new Error(`CALLER_AUTH must be mtls or url-secret, got ${JSON.stringify(mode)}`);
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Compares against every live digest, whatever matched first, so timing reveals nothing. */
export function secretMatches(candidate: string, digests: readonly Buffer[]): boolean {
  const digest = sha256(candidate);
  let matched = false;
  for (const live of digests) matched = timingSafeEqual(digest, live) || matched;
  return matched;
}

/** The CN of a subject DN in either order API Gateway or Node prints it. */
export function commonName(subjectDN: string): string | undefined {
  const match = /(?:^|[,/]\s*)CN=((?:\\.|[^,/+])*)/.exec(subjectDN);
  return match?.[1].replace(/\\(.)/g, '$1').trim();
}

/** Whether the mode puts a secret segment first in webhook paths. */
export const secretInPath = (auth: CallerAuth): boolean => auth.mode === 'url-secret';

function identify(event: GatewayEvent, secret: string | undefined, auth: CallerAuth): CallerIdentity {
  if (auth.mode === 'url-secret') {
    if (secret === undefined || secret === '' || !secretMatches(secret, auth.secretDigests))
      throw forbiddenCaller('caller secret missing or not recognised');
    return { mode: 'url-secret', subject: `secret:${sha256(secret).toString('hex').slice(0, 8)}` };
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
    admission.caller = identify(request.event, established(request.context, 'route').secret, auth);
  };
  return { before: callerIdentityBefore };
}
