// The deployment key of url-secret mode (design item 8): an Ed25519 private key, PEM, in a 0600
// file of the operator's. emit signs each webhook's capability with it (lib/http/capability.ts);
// `CALLER_AUTH=url-secret npm start` reads the same file, so the local trial and emit agree;
// the deployment holds only the public half (URL_CAPABILITY_KEYS).
import type { KeyObject } from 'node:crypto';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The one deployment key of a checkout: `npm start` and `emit` both read it, whatever the flags. */
export const DEFAULT_URL_SECRET_FILE = '.local/url-secret';

export class DeploymentKeyError extends Error {
  override readonly name = 'DeploymentKeyError';
}

/** The file a command uses: URL_SECRET_FILE, else the default. */
export function urlSecretFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.URL_SECRET_FILE || DEFAULT_URL_SECRET_FILE;
}

export function readDeploymentKey(file: string): KeyObject {
  const text = readFileSync(file, 'utf8');
  if (!text.includes('-----BEGIN PRIVATE KEY-----')) {
    throw new DeploymentKeyError(
      `${file} does not hold a deployment key (an Ed25519 private key, PEM); a file from an older version held a single URL secret: create a key with npm run emit -- --auth url-secret --new-secret --secret-file NEW_FILE and rotate (docs/security.md)`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch (error) {
    throw new DeploymentKeyError(`${file}: not a private key (${(error as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new DeploymentKeyError(`${file}: an ${key.asymmetricKeyType} key; the deployment key is Ed25519`);
  return key;
}

/** Writes a new key 0600; refuses to replace one, which may be live in a cluster. */
export function writeNewDeploymentKey(file: string): KeyObject {
  if (existsSync(file))
    throw new DeploymentKeyError(
      `${file} already exists; it may be live in a cluster. Rotate by creating the new key in another file (--secret-file NEW_FILE --new-secret)`,
    );
  const { privateKey } = generateKeyPairSync('ed25519');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  chmodSync(file, 0o600);
  return privateKey;
}

/** The key in `file`, created there (0600) when missing; `created` says which. */
export function ensureDeploymentKey(file: string): { readonly key: KeyObject; readonly created: boolean } {
  if (existsSync(file)) return { key: readDeploymentKey(file), created: false };
  return { key: writeNewDeploymentKey(file), created: true };
}

/** A fleet's cluster key (lib/config/fleet.ts): each cluster has its own, created by emit or npm start. */
export const clusterKeyFile = (cluster: string): string => `.local/clusters/${cluster}/url-secret`;
