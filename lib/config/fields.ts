// Reading configuration field by field, strictly, the way the apiserver decodes its own config
// files (unknown fields are errors): every accessor fails with a ConfigError naming the plugin,
// the field path and the problem, and an unknown field names the closest known one, so a typo
// (`podNodeSelectorPluginConfg`, `efect`, `qsp`) fails the start instead of being ignored.
import type { FieldError } from '../admission/field.js';
import { fieldErrorMessage } from '../admission/field.js';
import { isPlainObject } from '../admission/types.js';
import { ConfigError } from './errors.js';

/** A JSON object (not null, not an array): lib/admission's isPlainObject, under its config name. */
export const isRecord = isPlainObject;

/** Edit distance with transpositions (optimal string alignment): `qsp` is one edit from `qps`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known name a misspelt one most likely meant: case-insensitively equal, or within a third
 * of its length in edits (at least 1, at most 3), else undefined.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const exact = known.find((k) => k.toLowerCase() === lower);
  if (exact !== undefined) return exact;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(name.length, 3) / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** `did you mean "x"?`, or the list of known names when none is close. */
export function suggestion(name: string, known: readonly string[]): string {
  const closest = closestName(name, known);
  if (closest !== undefined) return `did you mean ${JSON.stringify(closest)}?`;
  return known.length === 0 ? 'no fields are supported here' : `supported fields: ${known.join(', ')}`;
}

export const joinPath = (path: string, field: string): string =>
  path === '' ? field : field.startsWith('[') ? `${path}${field}` : `${path}.${field}`;

/** The error for an unknown field: plugin, field path, and the closest known field. */
export function unknownField(plugin: string, path: string, key: string, known: readonly string[]): ConfigError {
  return new ConfigError(
    plugin,
    joinPath(path, key),
    `unknown field ${JSON.stringify(key)}; ${suggestion(key, known)}`,
  );
}

/** Fails on the first key of `value` that is not in `known`. */
export function rejectUnknownFields(
  plugin: string,
  path: string,
  value: Record<string, unknown>,
  known: readonly string[],
): void {
  for (const key of Object.keys(value)) if (!known.includes(key)) throw unknownField(plugin, path, key, known);
}

/**
 * One object of a plugin's configuration, read strictly. `allow` declares the known fields (and
 * fails on any other); the accessors read one field each, typed, or fail naming it.
 */
export class ConfigFields {
  constructor(
    readonly plugin: string,
    readonly path: string,
    readonly value: Record<string, unknown>,
  ) {}

  /** The configuration of a plugin entry: undefined or null reads as an empty object. */
  static of(plugin: string, raw: unknown, what = 'an object'): ConfigFields {
    if (raw === undefined || raw === null) return new ConfigFields(plugin, '', {});
    if (!isRecord(raw)) throw new ConfigError(plugin, 'configuration', `must be ${what}, got ${JSON.stringify(raw)}`);
    return new ConfigFields(plugin, '', raw);
  }

  at(field: string): string {
    return joinPath(this.path, field);
  }

  error(field: string, detail: string): ConfigError {
    return new ConfigError(this.plugin, field === '' ? this.path : this.at(field), detail);
  }

  allow(...keys: string[]): this {
    for (const key of Object.keys(this.value))
      if (!keys.includes(key)) throw this.error(key, `unknown field ${JSON.stringify(key)}; ${suggestion(key, keys)}`);
    return this;
  }

  /**
   * `apiVersion` and `kind` among the accepted ones (undefined: any). Upstream's decoder needs
   * them in a file of their own; inside an AdmissionConfiguration entry they may be left out,
   * unless `required`.
   */
  typeMeta(apiVersions: readonly string[] | undefined, kinds: readonly string[], required = false): this {
    const check = (key: string, accepted: readonly string[] | undefined) => {
      const v = this.value[key];
      if (accepted === undefined || accepted.includes(v as string) || (!required && v === undefined)) return;
      const expected = accepted.length === 1 ? accepted[0] : `one of ${accepted.join(', ')}`;
      throw this.error(key, `must be ${expected}, got ${JSON.stringify(v ?? null)}`);
    };
    check('apiVersion', apiVersions);
    check('kind', kinds);
    return this;
  }

  /** The reader of a nested object; subclasses return their own kind. */
  protected nested(path: string, value: Record<string, unknown>): this {
    return new (this.constructor as new (plugin: string, path: string, value: Record<string, unknown>) => this)(
      this.plugin,
      path,
      value,
    );
  }

  has(key: string): boolean {
    return this.value[key] !== undefined && this.value[key] !== null;
  }

  /** A non-empty string; undefined when absent or empty, unless `required`. */
  string(key: string, required: true): string;
  string(key: string, required?: boolean): string | undefined;
  string(key: string, required = false): string | undefined {
    const v = this.value[key];
    if (v === undefined || v === null || v === '') {
      if (required) throw this.error(key, 'Required value');
      return undefined;
    }
    if (typeof v !== 'string') throw this.error(key, `Invalid value: ${JSON.stringify(v)}: must be a string`);
    return v;
  }

  oneOf<T extends string>(key: string, values: readonly T[], fallback: T): T {
    const v = this.string(key) ?? fallback;
    if (!values.includes(v as T)) {
      throw this.error(
        key,
        `Unsupported value: ${JSON.stringify(v)}: supported values: ${values.map((s) => JSON.stringify(s)).join(', ')}`,
      );
    }
    return v as T;
  }

  boolean(key: string, fallback: boolean): boolean {
    const v = this.value[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') throw this.error(key, `must be true or false, got ${JSON.stringify(v)}`);
    return v;
  }

  /** An integer within [min, max]; `fallback` when absent. */
  integer(key: string, fallback: number, min?: number, max?: number): number {
    return this.optionalInteger(key, min, max) ?? fallback;
  }

  /** An integer within [min, max] (by default any safe integer); undefined when absent. */
  optionalInteger(key: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      const range =
        max !== Number.MAX_SAFE_INTEGER
          ? ` from ${min} to ${max}`
          : min !== Number.MIN_SAFE_INTEGER
            ? ` of at least ${min}`
            : '';
      throw this.error(key, `must be an integer${range}, got ${JSON.stringify(v)}`);
    }
    return v;
  }

  /**
   * A list of strings; `fallback` when absent. With `nonEmpty`, an empty string is refused too.
   * A wrong item is named by its index.
   */
  strings(
    key: string,
    { fallback = [], nonEmpty = false }: { fallback?: string[]; nonEmpty?: boolean } = {},
  ): string[] {
    const v = this.value[key];
    if (v === undefined || v === null) return fallback;
    if (!Array.isArray(v)) throw this.error(key, 'must be a list of strings');
    v.forEach((item, i) => {
      if (typeof item !== 'string' || (nonEmpty && item === ''))
        throw this.error(
          `${key}[${i}]`,
          `must be a ${nonEmpty ? 'non-empty ' : ''}string, got ${JSON.stringify(item)}`,
        );
    });
    return v;
  }

  /** A map of string to string (labels, selectors by namespace). */
  stringMap(key: string): Record<string, string> {
    const v = this.value[key] ?? {};
    if (!isRecord(v)) throw this.error(key, 'must be a map of strings');
    for (const [k, s] of Object.entries(v))
      if (typeof s !== 'string') throw this.error(`${key}.${k}`, `must be a string, got ${JSON.stringify(s)}`);
    return v as Record<string, string>;
  }

  child(key: string): this | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (!isRecord(v)) throw this.error(key, 'must be an object');
    return this.nested(this.at(key), v);
  }

  /** A list whose items the caller reads itself (manifests, documents); [] when absent. */
  array(key: string, what = 'a list'): unknown[] {
    const v = this.value[key] ?? [];
    if (!Array.isArray(v)) throw this.error(key, `must be ${what}`);
    return v;
  }

  /** A nested object, read as an empty one when absent. */
  object(key: string): this {
    return this.child(key) ?? this.nested(this.at(key), {});
  }

  list(key: string): this[] {
    const v = this.value[key] ?? [];
    if (!Array.isArray(v)) throw this.error(key, 'must be a list');
    return v.map((item, i) => {
      if (!isRecord(item)) throw this.error(`${key}[${i}]`, 'must be an object');
      return this.nested(this.at(`${key}[${i}]`), item);
    });
  }
}

/**
 * Upstream's validation errors (a field.ErrorList) as one ConfigError: at the first error's
 * field, with every other error after it. Undefined when there are none.
 */
export function validationError(plugin: string, errors: readonly FieldError[]): ConfigError | undefined {
  const [first, ...others] = errors;
  if (first === undefined) return undefined;
  const detail = fieldErrorMessage(first).slice(first.field.length + 2);
  return new ConfigError(plugin, first.field, [detail, ...others.map(fieldErrorMessage)].join('; '));
}

/**
 * The configuration of an OpenShift plugin: a map with the given apiVersion and kind and only
 * the given fields, or undefined when the entry has none (OpenShift then disables the plugin).
 */
export function openShiftConfig(
  plugin: string,
  raw: unknown,
  apiVersion: string,
  kind: string,
  fields: readonly string[],
): ConfigFields | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw)) throw new ConfigError(plugin, 'configuration', `must be a ${kind} object`);
  return new ConfigFields(plugin, '', raw).typeMeta([apiVersion], [kind], true).allow('apiVersion', 'kind', ...fields);
}
