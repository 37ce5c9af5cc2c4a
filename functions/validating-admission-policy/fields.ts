// Reading a manifest field by field, the way the apiserver validates one: each accessor fails
// with a ConfigError naming the object, the field path and the problem in upstream's words
// (`Required value`, `Unsupported value: ...`, CEL compile errors with their position).
import { ConfigError } from '../../lib/config/errors.js';
import { CelCompileError, compileExpression } from './compile.js';
import type { CompileScope, CompiledExpression } from './compile.js';
import { UPSTREAM_NAME, isRecord } from './manifests.js';

/** Field access that fails with the object, the field path and upstream's wording. */
export class Fields {
  constructor(readonly owner: string, readonly path: string, readonly value: Record<string, unknown>) {}

  error(field: string, detail: string): ConfigError {
    return new ConfigError(UPSTREAM_NAME, `${this.owner} ${field === '' ? this.path : `${this.path ? `${this.path}.` : ''}${field}`}`.trim(), detail);
  }
  allow(...keys: string[]): this {
    for (const key of Object.keys(this.value)) if (!keys.includes(key)) throw this.error(key, 'unknown field (kubectl apply would refuse it)');
    return this;
  }
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
    if (!values.includes(v as T)) throw this.error(key, `Unsupported value: ${JSON.stringify(v)}: supported values: ${values.map((s) => JSON.stringify(s)).join(', ')}`);
    return v as T;
  }
  strings(key: string): string[] {
    const v = this.value[key] ?? [];
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw this.error(key, 'must be a list of strings');
    return v as string[];
  }
  child(key: string): Fields | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (!isRecord(v)) throw this.error(key, 'must be an object');
    return new Fields(this.owner, this.path ? `${this.path}.${key}` : key, v);
  }
  list(key: string): Fields[] {
    const v = this.value[key] ?? [];
    if (!Array.isArray(v)) throw this.error(key, 'must be a list');
    return v.map((item, i) => {
      if (!isRecord(item)) throw this.error(`${key}[${i}]`, 'must be an object');
      return new Fields(this.owner, `${this.path ? `${this.path}.` : ''}${key}[${i}]`, item);
    });
  }
  compile(key: string, scope: CompileScope, required = true): CompiledExpression | undefined {
    const text = this.string(key, required);
    if (text === undefined) return undefined;
    try {
      return compileExpression(text, scope);
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      throw this.error(key, `Invalid value: ${JSON.stringify(text)}: ${error.detail}`);
    }
  }
}
