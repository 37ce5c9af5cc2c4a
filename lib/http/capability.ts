// Capability URLs: who may call in url-secret mode (EKS, GKE, AKS, whose apiservers cannot present
// client certificates). The apiserver shows a failed webhook's URL to the user whose request it
// was, so a URL must grant that one webhook and nothing else.
//
// One deployment key per cluster (an Ed25519 key pair). The capability of one endpoint of one
// plugin is the key's signature of a label naming both:
//
//   capability(plugin, endpoint) = base64url(Ed25519-sign(key, "serverless-admission/capability/v1/<plugin>/<endpoint>"))
//
// - Each URL grants one endpoint: a judging URL (`mutate`, `validate`) shown in an error cannot be
//   turned into the `learn` URL of the same plugin, or into another plugin's, without the key.
// - The deployment holds only the public half (URL_CAPABILITY_KEYS): it can check a capability and
//   cannot make one, so reading a function's configuration grants nothing either.
// - Rotation: a second key is live beside the first while the cluster's configurations move over.
// - Signatures are deterministic, so a capability is stable, and checked once per Lambda instance:
//   later requests compare in constant time against the capabilities already verified.
import type { KeyObject } from 'node:crypto';
import { createHash, createPublicKey, sign, timingSafeEqual, verify } from 'node:crypto';
import type { Endpoint } from './webhook-path.js';

/** What one capability grants: an endpoint of a plugin, or the local server's metrics. */
export type CapabilityScope = { readonly plugin: string; readonly endpoint: Endpoint } | 'metrics';

const LABEL_PREFIX = 'serverless-admission/capability/v1/';
/** An Ed25519 signature is 64 bytes: 86 characters of base64url. */
const CAPABILITY_SHAPE = /^[A-Za-z0-9_-]{86}$/;
/** A public key as the deployment holds it: the 32 raw bytes, base64url. */
const PUBLIC_KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function capabilityLabel(scope: CapabilityScope): string {
  return scope === 'metrics' ? `${LABEL_PREFIX}metrics` : `${LABEL_PREFIX}${scope.plugin}/${scope.endpoint}`;
}

/** The capability of `scope` under the deployment key (emit and the local trial hold the key). */
export function capabilityFor(privateKey: KeyObject, scope: CapabilityScope): string {
  return sign(null, Buffer.from(capabilityLabel(scope), 'utf8'), privateKey).toString('base64url');
}

/** The public half as URL_CAPABILITY_KEYS holds it. */
export function publicKeyText(key: KeyObject): string {
  const jwk = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 key');
  return jwk.x;
}

/** A short, public name for a key (which one matched, in logs), never the key itself. */
export function keyId(publicKey: string): string {
  return createHash('sha256').update(publicKey, 'utf8').digest('hex').slice(0, 8);
}

export function parsePublicKey(text: string): KeyObject {
  if (!PUBLIC_KEY_SHAPE.test(text)) throw new Error('not an Ed25519 public key (43 characters of base64url)');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: text }, format: 'jwk' });
}

/**
 * Checks capabilities against the live public keys (one, or two during a rotation). Verified ones
 * are remembered per scope, so the signature check runs once per capability and Lambda instance;
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
    if (bytes.length !== 64) return undefined;
    const label = capabilityLabel(scope);
    const known = this.#verified.get(label) ?? [];
    let matched: string | undefined;
    for (const entry of known) if (timingSafeEqual(entry.bytes, bytes)) matched = entry.keyId;
    if (matched !== undefined) return matched;
    const message = Buffer.from(label, 'utf8');
    for (const { id, key } of this.#keys) if (verify(null, message, key, bytes)) matched = id;
    if (matched !== undefined && known.length < this.#keys.length) {
      this.#verified.set(label, [...known, { bytes, keyId: matched }]);
    }
    return matched;
  }
}
