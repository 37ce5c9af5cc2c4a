// What both kubeconfig readers share: the file's shape, picking the current context's entries,
// paths relative to the kubeconfig, PEMs given inline or by file, and the server URL check. The
// cluster reader (cluster-credentials.ts) and the webhook backend client (webhook-client.ts)
// differ in how they read files and in what an empty list means; each decides that itself.
import { dirname, isAbsolute, resolve } from 'node:path';

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

type Named<T> = { name?: string } & T;
export interface Kubeconfig {
  'current-context'?: string;
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
}

/**
 * The entry called `name`, or the only one when no name is given; undefined when the list is
 * empty (a caller that needs an entry checks that first).
 */
export function pick<T extends { name?: string }>(
  list: T[] | undefined,
  name: string | undefined,
  what: string,
  file: string,
): T | undefined {
  if (!list || list.length === 0) return undefined;
  if (name === undefined) {
    if (list.length === 1) return list[0];
    throw new KubeconfigError(`${file}: no current-context, and ${list.length} ${what}s to choose from`);
  }
  const found = list.find((entry) => entry.name === name);
  if (!found) throw new KubeconfigError(`${file}: ${what} ${JSON.stringify(name)} not found`);
  return found;
}

/** A path named in the kubeconfig: absolute as given, else relative to the kubeconfig's directory. */
export const relative = (file: string, path: string) => (isAbsolute(path) ? path : resolve(dirname(file), path));

/**
 * A PEM from `<field>-data` (base64) or `<field>` (a file, relative to the kubeconfig, read by
 * `read`, which throws a KubeconfigError naming the file when it cannot).
 */
export function pem(
  entry: Record<string, unknown> | undefined,
  field: string,
  file: string,
  read: (field: string, target: string) => string,
): string | undefined {
  const data = entry?.[`${field}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  const path = entry?.[field];
  return typeof path === 'string' && path !== '' ? read(field, relative(file, path)) : undefined;
}

/** The server URL, checked: present, a URL, https. */
export function serverUrl(server: unknown, where: string): URL {
  if (typeof server !== 'string' || server === '') throw new KubeconfigError(`${where}: the cluster has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`${where}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new KubeconfigError(`${where}: server ${server} must use https`);
  return url;
}
