// The capability-URL caller check (design item 8): a per-cluster secret in the webhook URL's path.
// The cluster holds it (in its webhook configurations); the deployment holds only its SHA-256
// (URL_SECRET_SHA256), checked in constant time by lib/http/caller-identity.ts.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where `CALLER_AUTH=url-secret npm start` also reads it, so emit and the local server agree. */
export const DEFAULT_URL_SECRET_FILE = '.local/url-secret';
const SECRET_SHAPE = /^[A-Za-z0-9_-]{32,}$/;

/** 32 random bytes, base64url: 256 bits, URL-safe without escaping. */
export function newUrlSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function urlSecretDigest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function readUrlSecret(file: string): string {
  const secret = readFileSync(file, 'utf8').trim();
  if (!SECRET_SHAPE.test(secret))
    throw new Error(`${file} does not hold a URL secret (at least 32 characters of [A-Za-z0-9_-])`);
  return secret;
}

/** Writes a new secret 0600; refuses to replace one, which may be live in a cluster. */
export function writeNewUrlSecret(file: string): string {
  if (existsSync(file))
    throw new Error(
      `${file} already exists; it may be live in a cluster. Rotate by writing the new one elsewhere (--out DIR)`,
    );
  const secret = newUrlSecret();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}
