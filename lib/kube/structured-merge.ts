// Server-side apply's merge of an apply configuration into an object, as sigs.k8s.io/structured-
// merge-diff's TypedValue.Merge does it for built-in types: structs and granular maps merge field by
// field; `x-kubernetes-list-type: map` lists merge element by element, matched on their keys
// (containers by name, ports by containerPort and protocol), other elements kept in place; `set`
// lists take the union; atomic lists, maps and structs are replaced whole. What each field is comes
// from a schema (lib/kube/merge-schema.ts); a field the schema does not describe merges as JSON
// suggests (an object granularly, a list atomically, as structured-merge-diff's deduced type does).
//
// findAtomics is the MutatingAdmissionPolicy check that refuses an apply configuration setting an
// atomic list, map or struct anywhere (mutating/patch/smd.go validatePatch).

export type ListRelationship = 'atomic' | 'set' | 'associative';

/** structured-merge-diff's scalar kinds; `untyped` holds any scalar (Quantity, IntOrString, Time). */
export type ScalarKind = 'string' | 'numeric' | 'boolean' | 'untyped';

export type FieldType =
  | { readonly scalar: ScalarKind }
  | { readonly named: string }
  | {
      readonly list: {
        readonly elem: FieldType;
        readonly relationship: ListRelationship;
        readonly keys?: readonly string[];
      };
    }
  | { readonly map: { readonly elem: FieldType; readonly atomic?: boolean } };

export interface NamedType {
  /** A struct's fields; undefined for a named type that is a plain map (no fields known). */
  readonly fields?: Readonly<Record<string, FieldType>>;
  /** `x-kubernetes-map-type: atomic` on the struct (`+structType=atomic`): replaced whole. */
  readonly atomic?: boolean;
  /** `x-kubernetes-map-type: granular` on a field-less object: a map of `elem`. */
  readonly elem?: FieldType;
}

export interface MergeSchema {
  readonly types: Readonly<Record<string, NamedType>>;
  /** `<group>/<version>/<Kind>` (core: `/v1/Pod`) → the named type of its objects. */
  readonly kinds: Readonly<Record<string, string>>;
  /** Defaults of list-map key fields (`io.k8s.api.core.v1.ContainerPort.protocol`: `TCP`). */
  readonly keyDefaults?: Readonly<Record<string, unknown>>;
  /** Declarative defaults of struct fields (`io.k8s.api.core.v1.ContainerPort.protocol`: `TCP`). */
  readonly fieldDefaults?: Readonly<Record<string, unknown>>;
}

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (v: Json): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const DEDUCED: FieldType = { scalar: 'untyped' };

/** The type of an object of this apiVersion and kind, or undefined when the schema lacks it. */
export function typeOfKind(schema: MergeSchema, apiVersion: string, kind: string): FieldType | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const name = schema.kinds[`${group}/${version}/${kind}`];
  return name === undefined ? undefined : { named: name };
}

interface Resolved {
  readonly kind: 'struct' | 'map' | 'list' | 'scalar' | 'deduced';
  readonly atomic: boolean;
  readonly fields?: Readonly<Record<string, FieldType>>;
  readonly elem?: FieldType;
  readonly relationship?: ListRelationship;
  readonly keys?: readonly string[];
  readonly typeName?: string;
}

function resolve(schema: MergeSchema, type: FieldType | undefined): Resolved {
  if (type === undefined || type === DEDUCED) return { kind: 'deduced', atomic: false };
  if ('scalar' in type) return { kind: 'scalar', atomic: true };
  if ('list' in type)
    return {
      kind: 'list',
      atomic: type.list.relationship === 'atomic',
      elem: type.list.elem,
      relationship: type.list.relationship,
      keys: type.list.keys,
    };
  if ('map' in type) return { kind: 'map', atomic: type.map.atomic === true, elem: type.map.elem };
  const named = schema.types[type.named];
  if (named === undefined) return { kind: 'deduced', atomic: false };
  if (named.fields === undefined)
    return { kind: 'map', atomic: named.atomic === true, elem: named.elem, typeName: type.named };
  return { kind: 'struct', atomic: named.atomic === true, fields: named.fields, typeName: type.named };
}

/** The identity of a list-map element: its key fields' values (defaults filled in). */
function keyOf(schema: MergeSchema, element: Json, resolved: Resolved): string | undefined {
  if (!isObject(element)) return undefined;
  const elemName = resolved.elem !== undefined && 'named' in resolved.elem ? resolved.elem.named : undefined;
  const values = (resolved.keys ?? []).map((key) => {
    const value = element[key];
    if (value !== undefined) return value;
    return elemName !== undefined ? schema.keyDefaults?.[`${elemName}.${key}`] : undefined;
  });
  return JSON.stringify(values);
}

function mergeList(schema: MergeSchema, live: Json[], patch: Json[], resolved: Resolved): Json[] {
  if (resolved.relationship === 'set') {
    const seen = new Set(live.map((v) => JSON.stringify(v)));
    return [...live, ...patch.filter((v) => !seen.has(JSON.stringify(v)))];
  }
  // structured-merge-diff's order (typed/merge.go visitListItems): the live entries in order,
  // each merged with the patch's entry of the same key, then the patch's new entries in order.
  const identity = (element: Json) => keyOf(schema, element, resolved);
  const fromPatch = new Map<string, Json>();
  for (const element of patch) {
    const key = identity(element);
    if (key !== undefined) fromPatch.set(key, element);
  }
  const out: Json[] = [];
  const merged = new Set<string>();
  for (const element of live) {
    const key = identity(element);
    if (key === undefined || !fromPatch.has(key)) out.push(element);
    // Duplicates of a key the patch sets become the one merged entry (smd_test.go: env vars).
    else if (!merged.has(key)) {
      out.push(merge(schema, element, fromPatch.get(key), resolved.elem));
      merged.add(key);
    }
  }
  for (const element of patch) {
    const key = identity(element);
    if (key === undefined || !merged.has(key)) {
      out.push(merge(schema, undefined, element, resolved.elem));
      if (key !== undefined) merged.add(key);
    }
  }
  return out;
}

/** `patch` applied onto `live` (neither is changed): the merged value. */
export function merge(schema: MergeSchema, live: Json, patch: Json, type: FieldType | undefined): Json {
  if (patch === undefined) return live;
  const resolved = resolve(schema, type);
  if (resolved.kind === 'deduced') {
    if (isObject(patch) && isObject(live)) return mergeFields(schema, live, patch, undefined, undefined);
    return structuredClone(patch);
  }
  if (resolved.atomic || resolved.kind === 'scalar') return structuredClone(patch);
  if (resolved.kind === 'list') {
    if (!Array.isArray(patch) || !Array.isArray(live)) return structuredClone(patch);
    return mergeList(schema, live, patch, resolved);
  }
  if (!isObject(patch) || !isObject(live)) {
    return isObject(patch) ? mergeFields(schema, {}, patch, resolved.fields, resolved.elem) : structuredClone(patch);
  }
  return mergeFields(schema, live, patch, resolved.fields, resolved.elem);
}

function mergeFields(
  schema: MergeSchema,
  live: JsonObject,
  patch: JsonObject,
  fields: Readonly<Record<string, FieldType>> | undefined,
  elem: FieldType | undefined,
): JsonObject {
  const out: JsonObject = { ...live };
  for (const [key, value] of Object.entries(patch)) {
    const fieldType = fields ? fields[key] : elem;
    out[key] = merge(schema, live[key], value, fieldType);
  }
  return out;
}

/**
 * Field paths (`.spec.selector`, `.spec.containers[0].args`) of the atomic values set in `value`,
 * an object of a kind the schema describes: a list it leaves out is atomic, an object granular.
 */
export function findAtomics(schema: MergeSchema, value: Json, type: FieldType | undefined, path = ''): string[] {
  const resolved = resolve(schema, type);
  const found: string[] = [];
  if (isObject(value) && resolved.kind === 'deduced') {
    for (const key of Object.keys(value).sort())
      found.push(...findAtomics(schema, value[key], undefined, `${path}.${key}`));
  } else if (isObject(value) && (resolved.kind === 'struct' || resolved.kind === 'map')) {
    if (resolved.atomic) found.push(path);
    // upstream descends into a struct's fields only (a map's values are not looked at); the
    // fields this schema leaves out are deduced.
    if (resolved.kind === 'struct' && resolved.fields)
      for (const key of Object.keys(value).sort())
        found.push(...findAtomics(schema, value[key], resolved.fields[key], `${path}.${key}`));
  } else if (Array.isArray(value) && (resolved.kind === 'list' || resolved.kind === 'deduced')) {
    // A list the schema leaves out is atomic (merge-schema.ts keeps every list-map and set).
    if (resolved.atomic || resolved.kind === 'deduced') found.push(path);
    value.forEach((element, i) => {
      found.push(...findAtomics(schema, element, resolved.elem, `${path}[${i}]`));
    });
  }
  return found;
}

// --- what the apiserver's decoders refuse (MutatingAdmissionPolicy) ---

/** fieldpath.PathElement.String of a list element: `[name="c"]`, `[containerPort=80,protocol="TCP"]`, `[="x"]`, `[0]`. */
function elementPath(schema: MergeSchema, element: Json, resolved: Resolved, index: number): string {
  if (resolved.relationship === 'set') return `[=${JSON.stringify(element)}]`;
  if (resolved.relationship !== 'associative' || !isObject(element)) return `[${index}]`;
  const elemName = resolved.elem !== undefined && 'named' in resolved.elem ? resolved.elem.named : undefined;
  const parts = [...(resolved.keys ?? [])].sort().flatMap((key) => {
    const value = element[key] ?? (elemName !== undefined ? schema.keyDefaults?.[`${elemName}.${key}`] : undefined);
    return value === undefined ? [] : [`${key}=${JSON.stringify(value)}`];
  });
  return `[${parts.join(',')}]`;
}

/**
 * What structured-merge-diff's validation (typed.AsTyped, as the type converter runs it on an
 * apply configuration) says of `value`: a field a struct does not declare (`.spec.replicasx: field
 * not declared in schema`; the rest of that object is not looked at), and a null. A null in an
 * apply configuration is CEL's null, which reaches the converter as structpb.NullValue, a value no
 * schema type accepts; the messages print it as Go's fmt does. Each entry is `<path>: <message>`.
 */
export function applyConfigurationErrors(
  schema: MergeSchema,
  value: Json,
  type: FieldType | undefined,
  path = '',
): string[] {
  const resolved = resolve(schema, type);
  const at = (message: string) => [`${path}: ${message}`];
  if (value === null) {
    if (resolved.kind === 'scalar' && type !== undefined && 'scalar' in type) {
      if (type.scalar === 'string') return at('expected string, got &value.valueUnstructured{Value:0}');
      if (type.scalar === 'numeric') return at('expected numeric (int or float), got structpb.NullValue');
      if (type.scalar === 'boolean') return at('expected boolean, got &{NULL_VALUE}');
      return at('expected any scalar, got &{NULL_VALUE}');
    }
    return at(`expected ${resolved.kind === 'list' ? 'list' : 'map'}, got &{NULL_VALUE}`);
  }
  const errors: string[] = [];
  if (isObject(value) && (resolved.kind === 'struct' || resolved.kind === 'map' || resolved.kind === 'deduced')) {
    for (const key of Object.keys(value).sort()) {
      const fieldType = resolved.kind === 'struct' ? resolved.fields?.[key] : resolved.elem;
      if (resolved.kind === 'struct' && fieldType === undefined && resolved.elem === undefined) {
        errors.push(`${path}.${key}: field not declared in schema`);
        break;
      }
      errors.push(...applyConfigurationErrors(schema, value[key], fieldType, `${path}.${key}`));
    }
  } else if (Array.isArray(value) && (resolved.kind === 'list' || resolved.kind === 'deduced')) {
    value.forEach((element, i) => {
      errors.push(
        ...applyConfigurationErrors(schema, element, resolved.elem, path + elementPath(schema, element, resolved, i)),
      );
    });
  }
  return errors;
}

/** typed.ValidationErrors.Error: one error alone, several under `errors:`. */
export function validationErrorsMessage(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
}

/**
 * The fields the apiserver's strict JSON decoding of a built-in object refuses (sigs.k8s.io/json:
 * `unknown field "spec.foo"`), as paths (`spec.containers[0].foo`), in document order.
 */
export function unknownFields(schema: MergeSchema, value: Json, type: FieldType | undefined, path = ''): string[] {
  const resolved = resolve(schema, type);
  const found: string[] = [];
  const child = (key: string) => (path === '' ? key : `${path}.${key}`);
  if (isObject(value) && (resolved.kind === 'struct' || resolved.kind === 'map' || resolved.kind === 'deduced')) {
    for (const key of Object.keys(value).sort()) {
      const fieldType = resolved.kind === 'struct' ? resolved.fields?.[key] : resolved.elem;
      if (resolved.kind === 'struct' && fieldType === undefined && resolved.elem === undefined) found.push(child(key));
      else found.push(...unknownFields(schema, value[key], fieldType, child(key)));
    }
  } else if (Array.isArray(value) && (resolved.kind === 'list' || resolved.kind === 'deduced')) {
    value.forEach((element, i) => {
      found.push(...unknownFields(schema, element, resolved.elem, `${path}[${i}]`));
    });
  }
  return found;
}
