// The objects `-f` names, as `kubectl apply -f` reads them: YAML (multi-document) or JSON files,
// a directory's *.yaml, *.yml and *.json files (not its subdirectories, as kubectl without -R),
// and `List` documents (the output of `kubectl get -o yaml|json`) expanded into their items.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../lib/admission/types.js';
import { isPlainObject } from '../../lib/admission/types.js';

/** A file that cannot be read as manifests: exit 2, naming the file and document. */
export class InputError extends Error {
  override readonly name = 'InputError';
}

export interface Manifest {
  readonly object: KubeObject;
  /** `file#n`: the n-th document of the file (from 1), `file#n.items[i]` inside a List. */
  readonly source: string;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** The files a `-f` argument names: itself, or a directory's manifest files in name order. */
export function manifestFiles(path: string): string[] {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new InputError(`${path}: no such file or directory`);
  }
  if (!stat.isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => MANIFEST_FILE.test(name))
    .sort()
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile());
}

/** Every object of one file's text, Lists expanded; empty documents skipped. */
export function parseManifests(text: string, file: string): Manifest[] {
  const documents = parseAllDocuments(text);
  const out: Manifest[] = [];
  documents.forEach((document, i) => {
    const source = `${file}#${i + 1}`;
    if (document.errors.length > 0) throw new InputError(`${source}: ${document.errors[0].message.split('\n')[0]}`);
    const value = document.toJSON() as unknown;
    if (value === null || value === undefined) return;
    if (!isPlainObject(value)) throw new InputError(`${source}: not a Kubernetes object`);
    if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
      value.items.forEach((item: unknown, j) => {
        if (!isPlainObject(item)) throw new InputError(`${source}.items[${j}]: not a Kubernetes object`);
        out.push({ object: item as KubeObject, source: `${source}.items[${j}]` });
      });
      return;
    }
    out.push({ object: value as KubeObject, source });
  });
  return out;
}

/** The manifests of every `-f` argument, in order. */
export function readManifests(paths: readonly string[]): Manifest[] {
  return paths.flatMap((path) =>
    manifestFiles(path).flatMap((file) => parseManifests(readFileSync(file, 'utf8'), file)),
  );
}
