// Capability URLs: who may call in url-secret mode (EKS, GKE, AKS, whose apiservers cannot present
// client certificates). The apiserver shows a failed webhook's URL to the user whose request it
// was, so a URL must grant that one webhook, at that one deployment, and nothing else.
//
// One deployment key per cluster (an Ed25519 key pair). A capability is the key's signature of a
// label: a version line, then one `name:value` line per field, in a fixed order:
//
//   serverless-admission/capability/v2
//   deployment:<host>[:<port>][/<base path>]
//   cluster:<cluster>            (a fleet's cluster only; a single cluster's label has no such line)
//   plugin:<plugin>
//   endpoint:<endpoint>          (or, for the local server's metrics, `grant:metrics`)
//
//   capability = base64url(Ed25519-sign(key, label))
//
// - Each URL grants one endpoint: a judging URL (`mutate`, `validate`) shown in an error cannot be
//   turned into the `learn` URL of the same plugin, or into another plugin's, without the key.
// - Each URL grants at one deployment: the deployment is the webhook host as the apiserver calls it
//   (lower-case host, the port unless 443, the path before `/<capability>`). emit knows it from
//   `--base-url`; the serving side takes it from what it received: API Gateway's
//   `requestContext.domainName` (the name the client reached: the custom domain, or the
//   execute-api name) and the part of `requestContext.path` before the route (`/<stage>` on an
//   execute-api name, nothing on the custom domain, which the template maps at its root); the
//   local server puts the Host header where API Gateway puts domainName. So a capability emitted
//   for the local trial (`127.0.0.1:8443`) grants nothing in production, one for the custom domain
//   nothing on the execute-api name, and one for stage `dev` nothing on stage `prod`, even when one
//   key signed them all. The local server trusts the Host header its caller sends: it binds what
//   it serves, not what a caller with a production URL could make it believe. Labels of v1, which
//   named no deployment, are never accepted: URLs emitted before are emitted again.
// - Fields are lines, so no value can run into the next (a value holding a line break grants
//   nothing), and a field added later is one more entry in labelFields, never a change to how the
//   others read: a fleet's cluster is such a field, between deployment and plugin.
// - Each URL grants for one cluster of a fleet: every cluster has its own key, and its label names
//   the cluster, so a capability of cluster A is refused at cluster B's URLs twice over (B's keys
//   did not sign it, and it names A), even should an operator give two clusters one key.
// - One spelling: a capability is the canonical base64url of its 64 bytes, 86 characters whose
//   last one carries 4 unused bits that must be zero; any other spelling (those bits set, percent-
//   encoding, padding) grants nothing, so a leaked URL blocked by its exact string stays blocked.
// - The deployment holds only the public half (URL_CAPABILITY_KEYS): it can check a capability and
//   cannot make one, so reading a function's configuration grants nothing either.
// - Rotation: a second key is live beside the first while the cluster's configurations move over.
// - Signatures are deterministic, so a capability is stable, and checked once per Lambda instance:
//   later requests compare in constant time against the capabilities already verified.
import type { KeyObject } from 'node:crypto';
import type { Endpoint } from './webhook-path.js';

/**
 * node:crypto, loaded when a capability is first made or checked: every handler imports this
 * module, and in mtls mode none checks a capability, so its cold start does not compile crypto
 * (and the stream modules crypto pulls in), about 5 ms of CPU (docs/performance.md, "Cold starts").
 */
const crypto = () => process.getBuiltinModule('node:crypto');

/** What one capability grants: an endpoint of a plugin, or the local server's metrics. */
export type CapabilityGrant = { readonly plugin: string; readonly endpoint: Endpoint } | 'metrics';

/** A grant at one deployment (deploymentName's form): everything a capability's label names. */
export interface CapabilityScope {
  readonly deployment: string;
  /** A fleet's cluster; absent for the single cluster of a deployment without a fleet. */
  readonly cluster?: string;
  readonly grant: CapabilityGrant;
}

const LABEL_VERSION = 'serverless-admission/capability/v2';
/** An Ed25519 signature is 64 bytes: 86 characters of base64url. */
const CAPABILITY_SHAPE = /^[A-Za-z0-9_-]{86}$/;
/** A public key as the deployment holds it: the 32 raw bytes, base64url. */
const PUBLIC_KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** A host as a URL names it (a DNS name or an IPv4 address; an IPv6 one in brackets), and a port. */
const AUTHORITY = /^([a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?$/;

/**
 * The deployment a capability is bound to: `host[:port][/base/path]`, as the apiserver calls it.
 * `authority` is `host[:port]` (a URL's host, API Gateway's domainName, a Host header); the port
 * is dropped when it is 443, https's own; `basePath` is the path before `/<capability>`, written
 * without empty segments. Undefined for an authority that is not a plain host and port.
 */
export function deploymentName(authority: string, basePath = ''): string | undefined {
  const match = AUTHORITY.exec(authority.toLowerCase());
  if (match === null) return undefined;
  const [, host, portText] = match;
  const port = portText === undefined ? 443 : Number(portText);
  if (port > 65535) return undefined;
  const path = basePath
    .split('/')
    .filter(Boolean)
    .map((segment) => `/${segment}`)
    .join('');
  return `${host}${port === 443 ? '' : `:${port}`}${path}`;
}

/** The deployment of an https base URL as emit's --base-url gives it (already checked). */
export function deploymentOfBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  const deployment = deploymentName(url.host, url.pathname);
  if (deployment === undefined) throw new Error(`${baseUrl}: not a host and port a capability can name`);
  return deployment;
}

/** The label's fields, in order. A fleet's cluster comes after the deployment. */
function labelFields({ deployment, cluster, grant }: CapabilityScope): readonly (readonly [string, string])[] {
  return [
    ['deployment', deployment],
    ...(cluster === undefined ? [] : ([['cluster', cluster]] as const)),
    ...(grant === 'metrics'
      ? ([['grant', 'metrics']] as const)
      : ([
          ['plugin', grant.plugin],
          ['endpoint', grant.endpoint],
        ] as const)),
  ];
}

/** The signed text of `scope`, or undefined when a value could run into the next field. */
export function capabilityLabel(scope: CapabilityScope): string | undefined {
  let label = LABEL_VERSION;
  for (const [name, value] of labelFields(scope)) {
    if (value === '' || /[\r\n]/.test(value)) return undefined;
    label += `\n${name}:${value}`;
  }
  return label;
}

/** The capability of `scope` under the deployment key (emit and the local trial hold the key). */
export function capabilityFor(privateKey: KeyObject, scope: CapabilityScope): string {
  const label = capabilityLabel(scope);
  if (label === undefined) throw new Error(`no capability can name ${JSON.stringify(scope)}`);
  return crypto().sign(null, Buffer.from(label, 'utf8'), privateKey).toString('base64url');
}

/** The public half as URL_CAPABILITY_KEYS holds it. */
export function publicKeyText(key: KeyObject): string {
  const jwk = (key.type === 'private' ? crypto().createPublicKey(key) : key).export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 key');
  return jwk.x;
}

/** A short, public name for a key (which one matched, in logs), never the key itself. */
export function keyId(publicKey: string): string {
  return crypto().createHash('sha256').update(publicKey, 'utf8').digest('hex').slice(0, 8);
}

export function parsePublicKey(text: string): KeyObject {
  if (!PUBLIC_KEY_SHAPE.test(text)) throw new Error('not an Ed25519 public key (43 characters of base64url)');
  return crypto().createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: text }, format: 'jwk' });
}

/**
 * Checks capabilities against the live public keys (one, or two during a rotation). Verified ones
 * are remembered per label, so the signature check runs once per capability and Lambda instance;
 * a candidate is compared against those in constant time before any signature is checked.
 */
export class CapabilityVerifier {
  readonly #keys: readonly { readonly id: string; readonly key: KeyObject }[];
  readonly #verified = new Map<string, { readonly bytes: Buffer; readonly keyId: string }[]>();

  constructor(publicKeys: readonly string[]) {
    if (publicKeys.length === 0 || publicKeys.length > 2) throw new Error('one or two public keys are live at once');
    this.#keys = publicKeys.map((text) => ({ id: keyId(text), key: parsePublicKey(text) }));
  }

  /** The id of the key `candidate` was made with, or undefined when it does not grant `scope`. */
  check(candidate: string, scope: CapabilityScope): string | undefined {
    if (!CAPABILITY_SHAPE.test(candidate)) return undefined;
    const bytes = Buffer.from(candidate, 'base64url');
    // The one spelling of these bytes: the last character's unused bits are zero.
    if (bytes.length !== 64 || bytes.toString('base64url') !== candidate) return undefined;
    const label = capabilityLabel(scope);
    if (label === undefined) return undefined;
    const known = this.#verified.get(label) ?? [];
    let matched: string | undefined;
    for (const entry of known) if (crypto().timingSafeEqual(entry.bytes, bytes)) matched = entry.keyId;
    if (matched !== undefined) return matched;
    const message = Buffer.from(label, 'utf8');
    for (const { id, key } of this.#keys) if (crypto().verify(null, message, key, bytes)) matched = id;
    if (matched !== undefined && known.length < this.#keys.length) {
      this.#verified.set(label, [...known, { bytes, keyId: matched }]);
    }
    return matched;
  }
}
