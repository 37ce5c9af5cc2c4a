// Deployment keys and capability URLs for tests of url-secret mode: two keys (a rotation), each
// made once per file, and the paths the emitted webhooks would carry.
import type { KeyObject } from 'node:crypto';
import { generateKeyPairSync } from 'node:crypto';
import type { CapabilityScope } from '../../lib/http/capability.js';
import { CapabilityVerifier, capabilityFor, publicKeyText } from '../../lib/http/capability.js';
import type { CallerAuth } from '../../lib/http/caller-identity.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';

export const OLD_KEY: KeyObject = generateKeyPairSync('ed25519').privateKey;
export const NEW_KEY: KeyObject = generateKeyPairSync('ed25519').privateKey;

/** URL_CAPABILITY_KEYS for these deployment keys. */
export const capabilityKeysEnv = (...keys: KeyObject[]): string => keys.map(publicKeyText).join(',');

/** The caller policy of a deployment that holds these keys' public halves (default: OLD_KEY). */
export function urlSecretAuth(...keys: KeyObject[]): CallerAuth {
  return {
    mode: 'url-secret',
    capabilities: new CapabilityVerifier((keys.length ? keys : [OLD_KEY]).map(publicKeyText)),
  };
}

export const capability = (scope: CapabilityScope, key: KeyObject = OLD_KEY): string => capabilityFor(key, scope);

/** `/<capability>/<plugin>/<endpoint>`, as emit writes it into clientConfig.url. */
export function capabilityPath(plugin: string, endpoint: Endpoint, key: KeyObject = OLD_KEY): string {
  return formatWebhookPath({ plugin, endpoint, capability: capabilityFor(key, { plugin, endpoint }) });
}
