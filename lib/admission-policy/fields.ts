// Reading a manifest field by field, the way the apiserver validates one: each accessor fails
// with a ConfigError naming the object, the field path and the problem in upstream's words
// (`Required value`, `Unsupported value: ...`, CEL compile errors with their position).
import { ConfigError } from '../config/errors.js';
import { ConfigFields } from '../config/fields.js';
import { CelCompileError, compileExpression } from '../cel/compile.js';
import type { CompileScope, CompiledExpression } from '../cel/compile.js';

/** Field access that fails with the object, the field path and upstream's wording. */
export class Fields extends ConfigFields {
  constructor(
    /** The plugin's upstream name (`ValidatingAdmissionPolicy`, `MutatingAdmissionPolicy`). */
    override readonly plugin: string,
    readonly owner: string,
    path: string,
    value: Record<string, unknown>,
    /** The manifest's apiVersion, on a manifest's spec (defaults differ between versions). */
    readonly apiVersion = '',
  ) {
    super(plugin, path, value);
  }

  override error(field: string, detail: string): ConfigError {
    return new ConfigError(this.plugin, `${this.owner} ${field === '' ? this.path : this.at(field)}`.trim(), detail);
  }

  protected override nested(path: string, value: Record<string, unknown>): this {
    return new Fields(this.plugin, this.owner, path, value) as this;
  }

  /** The field's expression, compiled; undefined when absent or empty, unless `required` (the default). */
  compile(key: string, scope: CompileScope, required?: true): CompiledExpression;
  compile(key: string, scope: CompileScope, required: boolean): CompiledExpression | undefined;
  compile(key: string, scope: CompileScope, required = true): CompiledExpression | undefined {
    const text = this.string(key, required);
    if (text === undefined) return undefined;
    try {
      return compileExpression(text, scope);
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      throw this.error(key, error.fieldError(text));
    }
  }
}
