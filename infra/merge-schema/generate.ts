// The merge schema of the built-in kinds (lib/kube/merge-schema.generated.ts), generated from
// Debian's golang-k8s-client-go-dev package as `dpkg -x` extracts it. client-go embeds in
// applyconfigurations/internal/internal.go the structured-merge-diff schema of every built-in type,
// generated from the types' OpenAPI (x-kubernetes-list-type, -list-map-keys, -map-type) by
// applyconfiguration-gen: the schema server-side apply merges with. Its applyconfigurations/<group>/
// <version>/<kind>.go files say which apiVersion and kind each top-level type serves.
//
// Every field of every type is kept: the merge and the atomic check read list-maps, sets and
// atomic maps and structs; MutatingAdmissionPolicy's strict decoding reads the field names and the
// scalar kinds. Named scalar types are written inline.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { DEDUCED_TYPE, formatMergeSchema, type MergeSchemaText } from '../../lib/kube/merge-schema.js';
import type { FieldType, MergeSchema, NamedType } from '../../lib/kube/structured-merge.js';

export const PACKAGE = 'golang-k8s-client-go-dev';
const CLIENT_GO = 'usr/share/gocode/src/k8s.io/client-go';
const INTERNAL = `${CLIENT_GO}/applyconfigurations/internal/internal.go`;
const CHANGELOG = `usr/share/doc/${PACKAGE}/changelog.Debian.gz`;

// structured-merge-diff's schema (sigs.k8s.io/structured-merge-diff/schema/elements.go), as YAML.
interface SmdTypeRef {
  readonly namedType?: string;
  readonly scalar?: string;
  readonly list?: SmdList;
  readonly map?: SmdMap;
  /** On a named reference: overrides the named map's or struct's relationship. */
  readonly elementRelationship?: string;
}
interface SmdList {
  readonly elementType: SmdTypeRef;
  readonly elementRelationship?: string;
  readonly keys?: readonly string[];
}
interface SmdMap {
  readonly fields?: readonly SmdField[];
  readonly elementType?: SmdTypeRef;
  readonly elementRelationship?: string;
}
interface SmdField {
  readonly name: string;
  readonly type: SmdTypeRef;
  readonly default?: unknown;
}
interface SmdTypeDef extends SmdTypeRef {
  readonly name: string;
}

const UNTYPED_ATOMIC = '__untyped_atomic_';

export class MergeSchemaSourceError extends Error {}

/** The schema YAML inside internal.go (`var schemaYAML = typed.YAMLObject(\`...\`)`), its types. */
export function schemaTypes(internalGo: string): SmdTypeDef[] {
  const match = /schemaYAML = typed\.YAMLObject\(`([^`]*)`\)/.exec(internalGo);
  if (!match) throw new MergeSchemaSourceError('no `schemaYAML = typed.YAMLObject(`...`)` in internal.go');
  const types = (parse(match[1]) as { types?: SmdTypeDef[] }).types;
  if (!Array.isArray(types)) throw new MergeSchemaSourceError('the schema YAML has no types');
  return types;
}

/**
 * `<group>/<version>/<Kind>` → type name, from one apply configuration's Go source: its
 * constructor's `b.WithKind("Deployment")`, `b.WithAPIVersion("apps/v1")` and its extractor's
 * `internal.Parser().Type("io.k8s.api.apps.v1.Deployment")`. Undefined for other files.
 */
export function kindOfApplyConfiguration(goSource: string): [string, string] | undefined {
  const kind = /b\.WithKind\("([^"]+)"\)/.exec(goSource)?.[1];
  const apiVersion = /b\.WithAPIVersion\("([^"]+)"\)/.exec(goSource)?.[1];
  const type = /internal\.Parser\(\)\.Type\("([^"]+)"\)/.exec(goSource)?.[1];
  if (kind === undefined || apiVersion === undefined || type === undefined) return undefined;
  const groupVersion = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return [`${groupVersion}/${kind}`, type];
}

class Converter {
  private readonly defs = new Map<string, SmdTypeDef>();

  constructor(types: readonly SmdTypeDef[]) {
    for (const type of types) this.defs.set(type.name, type);
    // Every reference's variant (see named) exists before the types are written.
    const visit = (ref: SmdTypeRef | undefined): void => {
      if (ref === undefined) return;
      this.named(ref);
      visit(ref.list?.elementType);
      visit(ref.map?.elementType);
      for (const field of ref.map?.fields ?? []) visit(field.type);
    };
    for (const type of types) visit({ ...type, namedType: undefined });
  }

  /** A named reference with its own relationship becomes a type of its own (`ObjectReference_separable`). */
  private named(ref: SmdTypeRef): string | undefined {
    const name = ref.namedType;
    if (name === undefined || ref.elementRelationship === undefined) return name;
    const def = this.defs.get(name);
    if (def?.map === undefined) return name;
    const variant = `${name}_${ref.elementRelationship}`;
    if (!this.defs.has(variant))
      this.defs.set(variant, {
        ...def,
        name: variant,
        map: { ...def.map, elementRelationship: ref.elementRelationship },
      });
    return variant;
  }

  /** Untyped, as structured-merge-diff's `__untyped_*` types are: a scalar, a list and a map at once. */
  private static untyped(ref: SmdTypeRef): boolean {
    return ref.scalar !== undefined && ref.list !== undefined && ref.map !== undefined;
  }

  private isScalar(ref: SmdTypeRef): boolean {
    const name = this.named(ref);
    const def = name === undefined ? ref : this.defs.get(name);
    return def !== undefined && def.scalar !== undefined && def.list === undefined && def.map === undefined;
  }

  private fieldType(ref: SmdTypeRef): FieldType {
    const name = this.named(ref);
    // An untyped value: replaced whole when atomic, else merged as deduced.
    const untyped = name === UNTYPED_ATOMIC || (name === undefined && Converter.untyped(ref));
    if (untyped) {
      const atomic = name === UNTYPED_ATOMIC || ref.map?.elementRelationship === 'atomic';
      return atomic ? { map: { elem: { named: DEDUCED_TYPE }, atomic } } : { named: DEDUCED_TYPE };
    }
    if (name !== undefined) {
      const def = this.defs.get(name);
      // A named scalar (Quantity, Time, IntOrString) is its scalar.
      if (def !== undefined && this.isScalar(ref)) return Converter.scalar(def.scalar);
      return { named: name };
    }
    if (ref.list) {
      const { elementType, elementRelationship, keys } = ref.list;
      const elem = this.fieldType(elementType);
      if (elementRelationship !== 'associative') return { list: { elem, relationship: 'atomic' } };
      if (keys !== undefined && keys.length > 0) return { list: { elem, relationship: 'associative', keys } };
      // `+listType=set`: structured-merge-diff keys a list of scalars by their values.
      if (!this.isScalar(elementType))
        throw new MergeSchemaSourceError('an associative list without keys of non-scalars');
      return { list: { elem, relationship: 'set' } };
    }
    if (ref.map) {
      const elem = ref.map.elementType === undefined ? { named: DEDUCED_TYPE } : this.fieldType(ref.map.elementType);
      return { map: { elem, ...(ref.map.elementRelationship === 'atomic' && { atomic: true }) } };
    }
    return Converter.scalar(ref.scalar);
  }

  private static scalar(kind: string | undefined): FieldType {
    if (kind === 'string' || kind === 'numeric' || kind === 'boolean' || kind === 'untyped') return { scalar: kind };
    throw new MergeSchemaSourceError(`unknown scalar ${JSON.stringify(kind)}`);
  }

  private namedType(def: SmdTypeDef): NamedType {
    const map = def.map ?? {};
    const atomic = map.elementRelationship === 'atomic';
    if (map.fields === undefined) {
      const elem = map.elementType === undefined ? { named: DEDUCED_TYPE } : this.fieldType(map.elementType);
      return { elem, ...(atomic && { atomic }) };
    }
    const fields: Record<string, FieldType> = {};
    for (const field of map.fields) fields[field.name] = this.fieldType(field.type);
    return atomic ? { fields, atomic } : { fields };
  }

  /** The defaults of list-map keys, keyed `<element type>.<key>` as structured-merge.ts reads them. */
  private keyDefaults(): Record<string, unknown> {
    const defaults: Record<string, unknown> = {};
    const visit = (ref: SmdTypeRef) => {
      if (ref.list?.elementRelationship !== 'associative') return;
      const elem = this.named(ref.list.elementType);
      const fields = elem === undefined ? undefined : this.defs.get(elem)?.map?.fields;
      for (const key of ref.list.keys ?? []) {
        const field = fields?.find((f) => f.name === key);
        if (field?.default !== undefined) defaults[`${elem}.${key}`] = field.default;
      }
    };
    for (const def of this.defs.values()) for (const field of def.map?.fields ?? []) visit(field.type);
    return defaults;
  }

  /**
   * The declarative defaults (`+default=`) of struct fields, keyed `<type>.<field>`: the ones the
   * apiserver's generated defaulters apply (`protocol: TCP`, `replicas: 1`). A zero value (`""`,
   * `0`, `false`, `{}`) is the OpenAPI default of every non-pointer field, which no defaulter sets.
   */
  private fieldDefaults(): Record<string, unknown> {
    const isZero = (v: unknown) =>
      v === '' ||
      v === 0 ||
      v === false ||
      v === null ||
      (typeof v === 'object' && Object.keys(v as object).length === 0);
    const defaults: Record<string, unknown> = {};
    for (const [name, def] of [...this.defs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (name.startsWith('__untyped_')) continue;
      for (const field of def.map?.fields ?? [])
        if (field.default !== undefined && !isZero(field.default)) defaults[`${name}.${field.name}`] = field.default;
    }
    return defaults;
  }

  schema(kinds: Record<string, string>): MergeSchema {
    const types: Record<string, NamedType> = {};
    for (const name of [...this.defs.keys()].sort()) {
      const def = this.defs.get(name);
      // structured-merge-diff's own __untyped_ types and named scalars are written inline (fieldType).
      if (def === undefined || name.startsWith('__untyped_') || this.isScalar({ namedType: name })) continue;
      if (!name.includes('.')) throw new MergeSchemaSourceError(`type ${name} has no package`);
      types[name] = this.namedType(def);
    }
    for (const [kind, type] of Object.entries(kinds))
      if (!this.defs.has(type)) throw new MergeSchemaSourceError(`kind ${kind} names ${type}, which the schema lacks`);
    return { types, kinds, keyDefaults: this.keyDefaults(), fieldDefaults: this.fieldDefaults() };
  }
}

/** The merge schema of structured-merge-diff's schema types and the kinds they serve. */
export function mergeSchemaOf(types: readonly SmdTypeDef[], kinds: Record<string, string>): MergeSchema {
  return new Converter(types).schema(kinds);
}

function goFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return goFiles(path);
      return entry.endsWith('.go') ? [path] : [];
    });
}

/** The package's version, from the first line of its Debian changelog: `golang-k8s-client-go (0.36.4-1) ...`. */
export function packageVersion(root: string): string {
  const first = gunzipSync(readFileSync(join(root, CHANGELOG)))
    .toString('utf8')
    .split('\n')[0];
  const version = /^\S+ \(([^)]+)\)/.exec(first)?.[1];
  if (version === undefined) throw new MergeSchemaSourceError(`no version in ${CHANGELOG}: ${first}`);
  return version;
}

/** The generated text from an extracted golang-k8s-client-go-dev (`dpkg -x <deb> <root>`). */
export function generateFrom(root: string): { version: string; text: MergeSchemaText } {
  const types = schemaTypes(readFileSync(join(root, INTERNAL), 'utf8'));
  const kinds: Record<string, string> = {};
  for (const file of goFiles(join(root, CLIENT_GO, 'applyconfigurations'))) {
    const found = kindOfApplyConfiguration(readFileSync(file, 'utf8'));
    if (found) kinds[found[0]] = found[1];
  }
  return { version: packageVersion(root), text: formatMergeSchema(mergeSchemaOf(types, kinds)) };
}

/** The module lib/kube/merge-schema.generated.ts, byte for byte. */
export function renderModule(version: string, text: MergeSchemaText): string {
  const json = (value: unknown) => JSON.stringify(value);
  const section = (entries: [string, unknown][]) => entries.map(([k, v]) => `    ${json(k)}: ${json(v)},`).join('\n');
  const packages = Object.entries(text.types)
    .map(
      ([pkg, types]) => `    ${json(pkg)}: {\n${section(Object.entries(types)).replace(/^ {4}/gm, '      ')}\n    },`,
    )
    .join('\n');
  return `// Generated by \`npm run merge-schema -- --from <dir>\` (infra/merge-schema/cli.ts). Do not edit.
// Source: Debian package ${PACKAGE} ${version},
// ${INTERNAL.replace(`${CLIENT_GO}/`, 'k8s.io/client-go/')} (structured-merge-diff schema of every built-in type)
// and applyconfigurations/<group>/<version>/*.go (the kinds). The grammar is lib/kube/merge-schema.ts's.
import type { MergeSchemaText } from './merge-schema.js';

export const MERGE_SCHEMA_SOURCE = ${json(`${PACKAGE} ${version}`)};

export const MERGE_SCHEMA_TEXT: MergeSchemaText = {
  types: {
${packages}
  },
  kinds: {
${section(Object.entries(text.kinds))}
  },
  keyDefaults: {
${section(Object.entries(text.keyDefaults))}
  },
  fieldDefaults: {
${section(Object.entries(text.fieldDefaults))}
  },
};
`;
}
