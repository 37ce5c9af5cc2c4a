import { badRequest } from './errors.js';

/**
 * Kubernetes objects nest a few dozen levels; CRD schemas a few hundred. The apiserver's own
 * decoder stops at 10,000. We stop at 1,000, before parsing, so that no later walk (diff, clone,
 * CEL) can exhaust the stack on a hostile body.
 */
export const MAX_JSON_DEPTH = 1000;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Counts `{` and `[` (strings included) with native searches, stopping past `limit`. */
function openingsAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i !== -1; i = text.indexOf(open, i + 1)) {
      if (++count > limit) return false;
    }
  }
  return true;
}

/** The deepest nesting of objects and arrays in JSON text, skipping strings; stops past `limit`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}

/** JSON.parse with a nesting bound; both failures are the caller's, so HTTP 400. */
export function parseBoundedJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  // A review has a few hundred brackets at most: too few to nest past the limit, so the exact
  // scan runs only for bodies that could.
  if (!openingsAtMost(text, maxDepth) && jsonDepth(text, maxDepth) > maxDepth) {
    throw badRequest(`body nests deeper than ${maxDepth} levels`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`body is not valid JSON: ${(error as Error).message}`);
  }
}
