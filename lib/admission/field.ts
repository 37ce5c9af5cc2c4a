// Field paths and field errors printed exactly as k8s.io/apimachinery/pkg/util/validation/field
// prints them, because users grep for these strings and upstream tests compare them verbatim.

export class FieldPath {
  private constructor(private readonly text: string) {}

  static of(...names: string[]): FieldPath {
    return new FieldPath(names.join('.'));
  }

  child(...names: string[]): FieldPath {
    return new FieldPath([this.text, ...names].filter((s) => s !== '').join('.'));
  }

  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }

  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }

  toString(): string {
    return this.text;
  }
}

export type FieldErrorType =
  | 'Unsupported value'
  | 'Invalid value'
  | 'Forbidden'
  | 'Required value'
  | 'Duplicate value'
  | 'Too many';

/** Types whose message never shows the offending value (as upstream's ErrorBody). */
const VALUELESS: ReadonlySet<FieldErrorType> = new Set(['Forbidden', 'Required value']);

const NO_VALUE = Symbol('no value');

export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly badValue: unknown;
  readonly detail: string;
}

/** Go's %q for the strings Kubernetes puts in field errors; JSON quoting agrees on them. */
export function goQuote(value: string): string {
  return JSON.stringify(value);
}

function printValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

export function fieldErrorMessage(error: FieldError): string {
  let body: string = error.type;
  if (!VALUELESS.has(error.type) && error.badValue !== NO_VALUE) {
    body = `${error.type}: ${printValue(error.badValue)}`;
  }
  if (error.detail !== '') body += `: ${error.detail}`;
  return `${error.field}: ${body}`;
}

export function notSupported(path: FieldPath, value: unknown, supported: readonly string[]): FieldError {
  const detail = supported.length ? `supported values: ${supported.map(goQuote).join(', ')}` : '';
  return { type: 'Unsupported value', field: String(path), badValue: value, detail };
}

export function invalid(path: FieldPath, value: unknown, detail: string): FieldError {
  return { type: 'Invalid value', field: String(path), badValue: value, detail };
}

export function forbiddenField(path: FieldPath, detail: string): FieldError {
  return { type: 'Forbidden', field: String(path), badValue: NO_VALUE, detail };
}

export function required(path: FieldPath, detail: string): FieldError {
  return { type: 'Required value', field: String(path), badValue: NO_VALUE, detail };
}

/**
 * utilerrors.NewAggregate(...).Error(): one message alone, several de-duplicated inside brackets.
 */
export function aggregateMessage(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  if (unique.length === 1) return unique[0];
  return `[${unique.join(', ')}]`;
}
