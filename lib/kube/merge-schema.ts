// The server-side-apply merge schema of every built-in kind, decoded from the compact text of
// merge-schema.generated.ts (written by `npm run merge-schema`, infra/merge-schema/, from the
// structured-merge-diff schema that Debian's golang-k8s-client-go-dev package ships; the header of
// the generated file names the version). This module owns that text's grammar: it both formats it
// (for the generator) and parses it (for the plugins).
//
// The generated text keeps every field of every type, with its scalar kind: the merge and the
// atomic check read list-maps, sets and atomic maps and structs; MutatingAdmissionPolicy's strict
// decoding reads the field names (an unknown one is refused) and the scalar kinds (a CEL null where
// a value is expected is refused with structured-merge-diff's words). Named scalar types
// (Quantity, Time) are written inline as their scalar.
//
// Grammar. Types are grouped by package (`io.k8s.api.core.v1`); a type is a string:
//   struct    := '!'? field (' ' field)*      '!' marks an atomic struct (`+structType=atomic`)
//   namedMap  := map                          a named type that is a map (RawExtension)
//   field     := name ':' ref
//   ref       := '=' key (',' key)* '/' ref   list-map (`x-kubernetes-list-type: map`) by keys
//              | '+' ref                      set
//              | '*' ref                      atomic list
//              | map
//              | '?'                          deduced (structured-merge-diff's untyped values)
//              | ''                           string scalar
//              | '#' | '^' | '@'              numeric, boolean, untyped scalar
//              | name                         a named type: in the same package unless it holds a '.'
//   map       := '%' ref | '~' ref            granular map | atomic map
import { MERGE_SCHEMA_TEXT } from './merge-schema.generated.js';
import type { FieldType, MergeSchema, NamedType } from './structured-merge.js';

/** What structured-merge-diff calls `__untyped_deduced_`: never defined, so resolved as deduced. */
export const DEDUCED_TYPE = '__untyped_deduced_';

/** The generated module's shape: what `npm run merge-schema` writes. */
export interface MergeSchemaText {
  /** Package (`io.k8s.api.core.v1`) → type name (`PodSpec`) → the type in the grammar above. */
  readonly types: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** apiVersion (`apps/v1`) → [package, the kinds it serves, space-separated (type name = kind)]. */
  readonly kinds: Readonly<Record<string, readonly [string, string]>>;
  /** `<package>.<Type>.<key field>` → the default of a list-map key (a port's protocol: TCP). */
  readonly keyDefaults: Readonly<Record<string, unknown>>;
  /** `<package>.<Type>.<field>` → its declarative default (`+default=`), zero values left out. */
  readonly fieldDefaults: Readonly<Record<string, unknown>>;
}

const SCALARS: Readonly<Record<string, FieldType>> = {
  '': { scalar: 'string' },
  '#': { scalar: 'numeric' },
  '^': { scalar: 'boolean' },
  '@': { scalar: 'untyped' },
};
const SCALAR_CODES: Readonly<Record<string, string>> = { string: '', numeric: '#', boolean: '^', untyped: '@' };

function parseRef(text: string, pkg: string): FieldType {
  const rest = text.slice(1);
  if (text.length <= 1 && text in SCALARS) return SCALARS[text];
  switch (text[0]) {
    case '?':
      return { named: DEDUCED_TYPE };
    case '=': {
      const slash = rest.indexOf('/');
      const keys = rest.slice(0, slash).split(',');
      return { list: { elem: parseRef(rest.slice(slash + 1), pkg), relationship: 'associative', keys } };
    }
    case '+':
      return { list: { elem: parseRef(rest, pkg), relationship: 'set' } };
    case '*':
      return { list: { elem: parseRef(rest, pkg), relationship: 'atomic' } };
    case '%':
      return { map: { elem: parseRef(rest, pkg) } };
    case '~':
      return { map: { elem: parseRef(rest, pkg), atomic: true } };
    default:
      return { named: text.includes('.') ? text : `${pkg}.${text}` };
  }
}

function parseType(text: string, pkg: string): NamedType {
  if (text[0] === '%' || text[0] === '~') {
    const { map } = parseRef(text, pkg) as Extract<FieldType, { map: unknown }>;
    return { elem: map.elem, ...(map.atomic && { atomic: true }) };
  }
  const atomic = text[0] === '!';
  const body = atomic ? text.slice(1) : text;
  const fields: Record<string, FieldType> = {};
  for (const field of body === '' ? [] : body.split(' ')) {
    const colon = field.indexOf(':');
    fields[field.slice(0, colon)] = parseRef(field.slice(colon + 1), pkg);
  }
  return atomic ? { fields, atomic } : { fields };
}

/**
 * The schema the merge reads, from the generated text. Each type is parsed when first read: the
 * text has every built-in type, a request touches a few, and parsing them all took about 7 ms of
 * CPU at every cold start of MutatingAdmissionPolicy (docs/performance.md, "Cold starts").
 */
export function parseMergeSchema(text: MergeSchemaText): MergeSchema {
  const types: Record<string, NamedType> = {};
  for (const [pkg, named] of Object.entries(text.types))
    for (const [name, type] of Object.entries(named)) {
      const key = `${pkg}.${name}`;
      Object.defineProperty(types, key, {
        configurable: true,
        enumerable: true,
        get: () => {
          const parsed = parseType(type, pkg);
          Object.defineProperty(types, key, { value: parsed, enumerable: true, writable: false });
          return parsed;
        },
      });
    }
  const kinds: Record<string, string> = {};
  for (const [apiVersion, [pkg, names]] of Object.entries(text.kinds)) {
    const groupVersion = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
    for (const kind of names.split(' ')) kinds[`${groupVersion}/${kind}`] = `${pkg}.${kind}`;
  }
  return { types, kinds, keyDefaults: text.keyDefaults, fieldDefaults: text.fieldDefaults };
}

const packageOf = (name: string) => name.slice(0, name.lastIndexOf('.'));

function formatRef(type: FieldType, pkg: string): string {
  if ('scalar' in type) return SCALAR_CODES[type.scalar];
  if ('named' in type) {
    if (type.named === DEDUCED_TYPE) return '?';
    return packageOf(type.named) === pkg ? type.named.slice(pkg.length + 1) : type.named;
  }
  if ('map' in type) return `${type.map.atomic ? '~' : '%'}${formatRef(type.map.elem, pkg)}`;
  const elem = formatRef(type.list.elem, pkg);
  if (type.list.relationship === 'associative') return `=${(type.list.keys ?? []).join(',')}/${elem}`;
  return `${type.list.relationship === 'set' ? '+' : '*'}${elem}`;
}

function formatType(type: NamedType, pkg: string): string {
  if (type.fields === undefined)
    return formatRef({ map: { elem: type.elem ?? { named: DEDUCED_TYPE }, atomic: type.atomic } }, pkg);
  const fields = Object.entries(type.fields).map(([name, ref]) => `${name}:${formatRef(ref, pkg)}`);
  return `${type.atomic ? '!' : ''}${fields.join(' ')}`;
}

/**
 * The generated text of a schema (the inverse of parseMergeSchema). Every kind must be served by
 * a type of its own name, one package per apiVersion: the text stores kinds that way.
 */
export function formatMergeSchema(schema: MergeSchema): MergeSchemaText {
  const types: Record<string, Record<string, string>> = {};
  for (const name of Object.keys(schema.types).sort()) {
    const pkg = packageOf(name);
    types[pkg] ??= {};
    types[pkg][name.slice(pkg.length + 1)] = formatType(schema.types[name], pkg);
  }
  const kinds: Record<string, [string, string]> = {};
  for (const key of Object.keys(schema.kinds).sort()) {
    const kindAt = key.lastIndexOf('/');
    const [groupVersion, kind] = [key.slice(0, kindAt), key.slice(kindAt + 1)];
    const apiVersion = groupVersion.startsWith('/') ? groupVersion.slice(1) : groupVersion;
    const type = schema.kinds[key];
    const pkg = packageOf(type);
    if (type !== `${pkg}.${kind}`) throw new Error(`kind ${key} is served by ${type}, not a type named ${kind}`);
    const entry = kinds[apiVersion];
    if (entry !== undefined && entry[0] !== pkg)
      throw new Error(`apiVersion ${apiVersion} is served by two packages: ${entry[0]} and ${pkg}`);
    kinds[apiVersion] = entry === undefined ? [pkg, kind] : [pkg, `${entry[1]} ${kind}`];
  }
  const keyDefaults = Object.fromEntries(
    Object.entries(schema.keyDefaults ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const fieldDefaults = Object.fromEntries(
    Object.entries(schema.fieldDefaults ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return { types, kinds, keyDefaults, fieldDefaults };
}

export const MERGE_SCHEMA: MergeSchema = parseMergeSchema(MERGE_SCHEMA_TEXT);
