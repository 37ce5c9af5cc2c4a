// Reading OpenShift-style configuration objects strictly: an unknown or misspelt field fails the
// start, naming the closest known field, because a silently ignored typo (`restrictedCIRDs`) turns
// a protection off without a word.
import { ConfigError } from './errors.js';

/** Levenshtein distance, case-insensitive: field names differ from typos by a letter or two. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length];
}

/** The known name nearest to `name`, when it is near enough to be a typo of it. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** Throws a ConfigError for the first field of `entry` that is not in `known`, suggesting the nearest. */
export function rejectUnknownFields(plugin: string, entry: Record<string, unknown>, known: readonly string[], prefix = ''): void {
  for (const field of Object.keys(entry)) {
    if (known.includes(field)) continue;
    const suggestion = closestName(field, known);
    const hint = suggestion !== undefined ? `; did you mean ${JSON.stringify(suggestion)}?` : known.length === 0 ? '; this configuration takes no fields' : `; known fields are ${known.join(', ')}`;
    throw new ConfigError(plugin, `${prefix}${field}`, `unknown field${hint}`);
  }
}

/**
 * The configuration object of an OpenShift plugin: a map with the given apiVersion and kind, or
 * undefined when the entry has none (OpenShift then disables the plugin).
 */
export function openShiftConfigObject(plugin: string, raw: unknown, apiVersion: string, kind: string, fields: readonly string[]): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(plugin, 'configuration', `must be a ${kind} object`);
  const entry = raw as Record<string, unknown>;
  if (entry.apiVersion !== apiVersion) throw new ConfigError(plugin, 'apiVersion', `must be ${apiVersion}, got ${JSON.stringify(entry.apiVersion ?? null)}`);
  if (entry.kind !== kind) throw new ConfigError(plugin, 'kind', `must be ${kind}, got ${JSON.stringify(entry.kind ?? null)}`);
  rejectUnknownFields(plugin, entry, ['apiVersion', 'kind', ...fields]);
  return entry;
}
