// JSON numbers as the apiserver types them. Go's unstructured decoding (apimachinery's
// util/json convertNumber, sigs.k8s.io/json's PreserveInts) makes a number an int64 when its text
// parses as one, else a float64: `10` is an int, `10.0` and `1e3` are floats, and
// 9007199254740993 stays exact. JSON.parse keeps neither distinction, and CEL sees both (`10.0 ==
// 10` is a type error there; `int(x)` of a float field is not of an int field). So a plugin that
// hands objects to CEL reads them here: ints as BigInt, floats as number.
//
// Most reviews hold no number whose JS value loses its type or digits, and those are converted
// from the parsed body. Only a review that does is parsed again from its text, by a small exact
// parser (hand-written: no package parses JSON keeping Go's int/float split, and the common case
// never runs it).
import type { AdmissionRequest } from './request.js';
import { isPlainObject } from './types.js';

/** A JS value (from JSON.parse) typed as unstructured decoding types it, when its text is not at hand. */
export function toUnstructured(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toUnstructured);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toUnstructured(v);
    return out;
  }
  return value;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A number's text, typed: an int64 as BigInt, anything else (fraction, exponent, overflow) as float64. */
function numberOf(text: string): bigint | number {
  if (/^-?\d+$/.test(text)) {
    const int = BigInt(text);
    if (int >= INT64_MIN && int <= INT64_MAX) return int;
  }
  return Number(text);
}

// A JSON string, or a number with its integer part, fraction and exponent.
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(\.\d+)?([eE][+-]?\d+)?/g;

/** Whether some number in the text would be mistyped or rounded by converting JSON.parse's value. */
export function hasAmbiguousNumbers(text: string): boolean {
  TOKENS.lastIndex = 0;
  for (let match = TOKENS.exec(text); match !== null; match = TOKENS.exec(text)) {
    const token = match[0];
    if (token.charCodeAt(0) === 34 /* " */) continue;
    const value = Number(token);
    if (match[1] !== undefined || match[2] !== undefined) {
      if (Number.isInteger(value)) return true; // `10.0`, `1e3`: floats that JSON.parse makes integral
    } else if (!Number.isSafeInteger(value)) {
      return true; // beyond 2^53: digits lost, or beyond int64: a float upstream
    }
  }
  return false;
}

/** Parses JSON text (already known to be valid) into unstructured values. */
export function parseUnstructured(text: string): unknown {
  let at = 0;
  const space = () => {
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return;
      at++;
    }
  };
  const fail = (): never => {
    throw new SyntaxError(`invalid JSON at offset ${at}`);
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const out: Record<string, unknown> = {};
      space();
      if (text[at] === '}') {
        at++;
        return out;
      }
      for (;;) {
        space();
        const key = value();
        if (typeof key !== 'string') fail();
        space();
        if (text[at++] !== ':') fail();
        out[key as string] = value();
        space();
        const next = text[at++];
        if (next === '}') return out;
        if (next !== ',') fail();
      }
    }
    if (c === '[') {
      at++;
      const out: unknown[] = [];
      space();
      if (text[at] === ']') {
        at++;
        return out;
      }
      for (;;) {
        out.push(value());
        space();
        const next = text[at++];
        if (next === ']') return out;
        if (next !== ',') fail();
      }
    }
    TOKENS.lastIndex = at;
    const match = TOKENS.exec(text);
    if (match !== null && match.index === at) {
      at += match[0].length;
      return match[0].charCodeAt(0) === 34 ? JSON.parse(match[0]) : numberOf(match[0]);
    }
    for (const [word, literal] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return literal;
      }
    }
    return fail();
  };
  const result = value();
  space();
  if (at !== text.length) fail();
  return result;
}

export interface UnstructuredRequest {
  readonly object: unknown;
  readonly oldObject: unknown;
  readonly options: unknown;
}

/** The request's object, oldObject and options with numbers typed as the apiserver types them. */
export function unstructuredRequest(request: AdmissionRequest): UnstructuredRequest {
  if (request.source !== undefined && hasAmbiguousNumbers(request.source)) {
    const review = parseUnstructured(request.source);
    const wire = isPlainObject(review) && isPlainObject(review.request) ? review.request : {};
    return { object: wire.object ?? null, oldObject: wire.oldObject ?? null, options: wire.options ?? null };
  }
  return {
    object: toUnstructured(request.object),
    oldObject: toUnstructured(request.oldObject),
    options: toUnstructured(request.options),
  };
}
