// RFC 6902 JSON Patch, applied as the apiserver applies a MutatingAdmissionPolicy's JSONPatch
// mutation: with gopkg.in/evanphx/json-patch.v4 (patch/json_patch.go), whose behaviour differs
// from the RFC in ways policies can see, and whose errors end up in the denial message:
//   - `replace` and `test` on a missing object member treat it as null (`replace` then adds it);
//   - negative array indices count from the end;
//   - a failed `test` is not an error: the whole patch is dropped and the object kept unchanged.
// Errors read like the library's (`replace operation does not apply: doc is missing key: /a/-:
// missing value`).
import { isDeepStrictEqual } from 'node:util';

export interface PatchOperation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  /** Absent when the operation has no value (JSONPatch{op: "remove", ...}). */
  readonly value?: unknown;
}

export class JsonPatchError extends Error {
  override readonly name = 'JsonPatchError';
}

/** The patch's `test` failed: the apiserver keeps the object as it was. */
export class JsonPatchTestFailed extends Error {
  override readonly name = 'JsonPatchTestFailed';
}

const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';

type Json = unknown;
type Container = Record<string, Json> | Json[];

const isObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const decodeKey = (key: string) => key.replaceAll('~1', '/').replaceAll('~0', '~');

/** Go's strconv.Atoi: an optional sign and decimal digits, nothing else. */
function atoi(key: string): number | undefined {
  return /^[+-]?\d+$/.test(key) ? Number(key) : undefined;
}

/** findObject: the container holding the last segment, and that segment decoded. */
function findObject(doc: Container, path: string): [Container, string] | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let current: Container = doc;
  for (const part of split.slice(1, -1)) {
    const next = get(current, decodeKey(part));
    if (next instanceof Error || next === undefined || next === null || typeof next !== 'object') return undefined;
    current = next as Container;
  }
  return [current, decodeKey(split[split.length - 1])];
}

/** The member or element; undefined for a missing member (not an error); an Error for a bad index. */
function get(container: Container, key: string): Json | undefined | Error {
  if (!Array.isArray(container)) return Object.hasOwn(container, key) ? container[key] : undefined;
  let index = atoi(key);
  if (index === undefined) return new Error(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  if (index < 0) {
    if (index < -container.length) return new Error(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`);
    index += container.length;
  }
  if (index >= container.length) return new Error(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`);
  return container[index];
}

function add(container: Container, key: string, value: Json): Error | undefined {
  if (!Array.isArray(container)) {
    container[key] = value;
    return undefined;
  }
  if (key === '-') {
    container.push(value);
    return undefined;
  }
  let index = atoi(key);
  if (index === undefined)
    return new Error(
      `value was not a proper array index: '${key}': strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`,
    );
  const size = container.length + 1;
  if (index >= size) return new Error(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`);
  if (index < 0) {
    if (index < -size) return new Error(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`);
    index += size;
  }
  container.splice(index, 0, value);
  return undefined;
}

function remove(container: Container, key: string): Error | undefined {
  if (!Array.isArray(container)) {
    if (!Object.hasOwn(container, key)) return new Error(`Unable to remove nonexistent key: ${key}: ${MISSING}`);
    delete container[key];
    return undefined;
  }
  let index = atoi(key);
  if (index === undefined) return new Error(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  if (index >= container.length) return new Error(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`);
  if (index < 0) {
    if (index < -container.length) return new Error(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`);
    index += container.length;
  }
  container.splice(index, 1);
  return undefined;
}

function set(container: Container, key: string, value: Json): void {
  if (!Array.isArray(container)) container[key] = value;
  else {
    // get() accepted the key before: an index within the array.
    const index = atoi(key) ?? 0;
    container[index < 0 ? index + container.length : index] = value;
  }
}

function applyOne(doc: Container, operation: PatchOperation): void {
  const { op, path } = operation;
  const fail = (message: string) => {
    throw new JsonPatchError(message);
  };
  switch (op) {
    case 'add': {
      const found =
        findObject(doc, path) ?? fail(`add operation does not apply: doc is missing path: "${path}": ${MISSING}`);
      const [container, key] = found as [Container, string];
      const error = add(container, key, structuredClone(operation.value ?? null));
      if (error) fail(`error in add for path: '${path}': ${error.message}`);
      return;
    }
    case 'remove': {
      const found =
        findObject(doc, path) ?? fail(`remove operation does not apply: doc is missing path: "${path}": ${MISSING}`);
      const [container, key] = found as [Container, string];
      const error = remove(container, key);
      if (error) fail(`error in remove for path: '${path}': ${error.message}`);
      return;
    }
    case 'replace': {
      const found =
        findObject(doc, path) ?? fail(`replace operation does not apply: doc is missing path: ${path}: ${MISSING}`);
      const [container, key] = found as [Container, string];
      if (get(container, key) instanceof Error)
        fail(`replace operation does not apply: doc is missing key: ${path}: ${MISSING}`);
      set(container, key, structuredClone(operation.value ?? null));
      return;
    }
    case 'move':
    case 'copy': {
      const from = operation.from ?? '';
      const source =
        findObject(doc, from) ?? fail(`${op} operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
      const [sourceContainer, sourceKey] = source as [Container, string];
      const value = get(sourceContainer, sourceKey);
      if (value instanceof Error)
        fail(
          op === 'move'
            ? `error in move for path: '${sourceKey}': ${value.message}`
            : `error in copy for from: '${from}': ${value.message}`,
        );
      if (op === 'move') {
        const error = remove(sourceContainer, sourceKey);
        if (error) fail(`error in move for path: '${sourceKey}': ${error.message}`);
      }
      const target =
        findObject(doc, path) ??
        fail(`${op} operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
      const [container, key] = target as [Container, string];
      const error = add(container, key, op === 'copy' ? structuredClone(value ?? null) : (value ?? null));
      if (error)
        fail(
          op === 'move'
            ? `error in move for path: '${path}': ${error.message}`
            : `error while adding value during copy: ${error.message}`,
        );
      return;
    }
    case 'test': {
      const found =
        findObject(doc, path) ?? fail(`test operation does not apply: is missing path: ${path}: ${MISSING}`);
      const [container, key] = found as [Container, string];
      const value = get(container, key);
      if (value instanceof Error) fail(`error in test for path: '${path}': ${value.message}`);
      const expected = operation.value;
      const same =
        value === undefined || value === null
          ? expected === undefined || expected === null
          : expected !== undefined && isDeepStrictEqual(value, expected);
      if (!same) throw new JsonPatchTestFailed(`testing value ${path} failed: test failed`);
      return;
    }
    default:
      fail(`Unexpected kind: ${op}`);
  }
}

/**
 * The patched copy of `document`. Throws JsonPatchTestFailed when a `test` fails (the caller keeps
 * the document) and JsonPatchError for an operation that does not apply.
 */
export function applyJsonPatch<T>(document: T, operations: readonly PatchOperation[]): T {
  const doc = structuredClone(document) as Json;
  if (!isObject(doc) && !Array.isArray(doc)) throw new JsonPatchError('the document is not an object or array');
  for (const operation of operations) applyOne(doc, operation);
  return doc as T;
}
