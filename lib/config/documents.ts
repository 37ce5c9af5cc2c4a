// Configuration files: the AdmissionConfiguration, an entry's `path`, ValidatingAdmissionPolicy's
// `paths`, ImagePolicyWebhook's kubeconfig. They are YAML (JSON is YAML too), and the YAML parser
// is most of a small Lambda's bundle (112 of 130 KB). So a deployed function does not parse them:
// packaging (infra/serverless/packaged-config.ts) parses every file the active plugins read and
// writes the documents into one JSON file, and a function started on that file reads them from it.
// Files read as text (the certificates a kubeconfig names) travel in the same JSON file, so a
// function's zip holds its bundle and that file, never the configuration folder.
// The parser is loaded only when a file is read from disk (npm start, the CLIs, tests), through
// createRequire, which esbuild leaves alone: no bundle carries it.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative, resolve } from 'node:path';

/** A file that cannot be read or parsed; callers wrap the reason in their own error type. */
export class DocumentError extends Error {
  override readonly name = 'DocumentError';

  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** The reason of a DocumentError for a file that is not there. */
export const NO_SUCH_FILE = 'no such file';

type YamlModule = typeof import('yaml');

let yamlModule: YamlModule | undefined;

function yaml(): YamlModule {
  yamlModule ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yamlModule;
}

/** The files a packaged function carries, keyed by path relative to the working directory. */
let packaged:
  | { readonly documents: ReadonlyMap<string, readonly unknown[]>; readonly texts: ReadonlyMap<string, string> }
  | undefined;
/** Set while packaging: every file read, with its documents or its text. */
let recording: { readonly documents: Map<string, readonly unknown[]>; readonly texts: Map<string, string> } | undefined;

const keyOf = (file: string) => relative(process.cwd(), resolve(file)).split('\\').join('/');

function fromDisk(file: string, parse: (text: string) => readonly unknown[]): readonly unknown[] {
  if (!existsSync(file)) throw new DocumentError(file, NO_SUCH_FILE);
  const documents = parse(readFileSync(file, 'utf8'));
  recording?.documents.set(keyOf(file), documents);
  return documents;
}

function read(file: string, parse: (text: string) => readonly unknown[]): readonly unknown[] {
  if (packaged) {
    const documents = packaged.documents.get(keyOf(file));
    if (documents === undefined) throw new DocumentError(file, 'not in the packaged configuration');
    return documents;
  }
  return fromDisk(file, parse);
}

/** Text of one document: JSON when the file's name ends in .json, else YAML; `file` names it in errors. */
export function parseDocumentText(text: string, file: string): unknown {
  try {
    return file.endsWith('.json') ? JSON.parse(text) : yaml().parse(text);
  } catch (error) {
    throw new DocumentError(file, `cannot parse: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** A file holding one document. */
export function readDocument(file: string): unknown {
  return read(file, (text) => [parseDocumentText(text, file)])[0];
}

/** A file of `---`-separated documents, as `kubectl apply -f` reads one; empty documents included. */
export function readDocuments(file: string): readonly unknown[] {
  return read(file, (text) =>
    yaml()
      .parseAllDocuments(text)
      .map((document, i) => {
        if (document.errors.length > 0) {
          const reason = document.errors[0]?.message.split('\n')[0] ?? 'invalid YAML';
          throw new DocumentError(file, `cannot parse document ${i + 1}: ${reason}`);
        }
        return document.toJS() as unknown;
      }),
  );
}

/** A file read as it is (a PEM certificate or key), from the package in a packaged function. */
export function readTextFile(file: string): string {
  if (packaged) {
    const text = packaged.texts.get(keyOf(file));
    if (text === undefined) throw new DocumentError(file, 'not in the packaged configuration');
    return text;
  }
  if (!existsSync(file)) throw new DocumentError(file, NO_SUCH_FILE);
  const text = readFileSync(file, 'utf8');
  recording?.texts.set(keyOf(file), text);
  return text;
}

/** One cluster of a fleet, as a packaged function knows it (infra/serverless/packaged-config.ts). */
export interface PackagedCluster {
  readonly name: string;
  /** Its AdmissionConfiguration, a key of `files`: only when the cluster enables the function's plugin. */
  readonly admissionConfiguration?: string;
  /** mTLS: the certificate subjects of its apiservers. */
  readonly allowedSubjects: readonly string[];
  /** url-secret: the public halves of its keys. */
  readonly capabilityKeys: readonly string[];
}

/** The JSON file a packaged function starts from. */
export interface PackagedConfiguration {
  readonly apiVersion: 'serverless-admission/v1';
  readonly kind: 'PackagedConfiguration';
  /** The AdmissionConfiguration's path, a key of `files` (empty in a fleet's: each cluster names its own). */
  readonly admissionConfiguration: string;
  readonly files: Readonly<Record<string, readonly unknown[]>>;
  /** Files read as text, keyed as `files`. */
  readonly texts: Readonly<Record<string, string>>;
  /**
   * A fleet (lib/config/fleet.ts): every cluster the deployment serves, with the callers of each
   * (a function proves the caller of a cluster it does not serve, before its 404), and the
   * configuration of those that enable the function's plugin.
   */
  readonly fleet?: { readonly clusters: readonly PackagedCluster[] };
}

export function isPackagedConfiguration(doc: unknown): doc is PackagedConfiguration {
  return (
    typeof doc === 'object' &&
    doc !== null &&
    (doc as { kind?: unknown }).kind === 'PackagedConfiguration' &&
    (doc as { apiVersion?: unknown }).apiVersion === 'serverless-admission/v1'
  );
}

/** From now on, every configuration file is read from the package, never from disk. */
export function usePackagedConfiguration(doc: PackagedConfiguration): void {
  packaged = { documents: new Map(Object.entries(doc.files)), texts: new Map(Object.entries(doc.texts ?? {})) };
}

/** Runs `load` (reading every file it needs from disk) and returns the package of what it read. */
export function packageConfiguration(admissionConfiguration: string, load: () => void): PackagedConfiguration {
  if (packaged) throw new Error('packaging from a packaged configuration');
  const read = { documents: new Map<string, readonly unknown[]>(), texts: new Map<string, string>() };
  recording = read;
  try {
    load();
  } finally {
    recording = undefined;
  }
  return {
    apiVersion: 'serverless-admission/v1',
    kind: 'PackagedConfiguration',
    admissionConfiguration: keyOf(admissionConfiguration),
    files: Object.fromEntries(read.documents),
    texts: Object.fromEntries(read.texts),
  };
}
