// Deployment keys and capability URLs for tests of url-secret mode: two keys (a rotation), each
// made once per file, and the paths the emitted webhooks would carry, bound to a deployment.
import type { KeyObject } from 'node:crypto';
import { generateKeyPairSync } from 'node:crypto';
import type { CapabilityGrant } from '../../lib/http/capability.js';
import { CapabilityVerifier, capabilityFor, deploymentOfBaseUrl, publicKeyText } from '../../lib/http/capability.js';
import type { CallerAuth } from '../../lib/http/caller-identity.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { formatWebhookPath } from '../../lib/http/webhook-path.js';

export const OLD_KEY: KeyObject = generateKeyPairSync('ed25519').privateKey;
export const NEW_KEY: KeyObject = generateKeyPairSync('ed25519').privateKey;

/**
 * The name handler tests' events reached (requestContext.domainName, as API Gateway sets it): the
 * deployment their capabilities are bound to. A server test binds to its server's URL instead.
 */
export const TEST_DOMAIN = 'admission.test';

/** URL_CAPABILITY_KEYS for these deployment keys. */
export const capabilityKeysEnv = (...keys: KeyObject[]): string => keys.map(publicKeyText).join(',');

/** The caller policy of a deployment that holds these keys' public halves (default: OLD_KEY). */
export function urlSecretAuth(...keys: KeyObject[]): CallerAuth {
  return {
    mode: 'url-secret',
    capabilities: new CapabilityVerifier((keys.length ? keys : [OLD_KEY]).map(publicKeyText)),
  };
}

/** `at`: a base URL (`https://127.0.0.1:8443`, as emit's --base-url) or a deployment's name. */
const deploymentAt = (at: string): string => (at.startsWith('https://') ? deploymentOfBaseUrl(at) : at);

/** The capability of `grant` at `at` (by default the handler tests' TEST_DOMAIN). */
export const capability = (grant: CapabilityGrant, at: string = TEST_DOMAIN, key: KeyObject = OLD_KEY): string =>
  capabilityFor(key, { deployment: deploymentAt(at), grant });

/** `/<capability>/<plugin>/<endpoint>`, as emit writes it into clientConfig.url for the base URL `at`. */
export function capabilityPath(
  plugin: string,
  endpoint: Endpoint,
  key: KeyObject = OLD_KEY,
  at: string = TEST_DOMAIN,
): string {
  return formatWebhookPath({ plugin, endpoint, capability: capability({ plugin, endpoint }, at, key) });
}
