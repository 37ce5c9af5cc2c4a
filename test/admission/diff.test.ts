// Our patch generator against fast-json-patch's compare(), the RFC 6902 implementation the
// project chose: the same operations in the same order for any pair of JSON documents, and every
// patch turns the first into the second when applied.
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { diffJson } from '../../lib/admission/diff.js';

// A Kubernetes object is always a JSON object at its root; below it, anything JSON.
const container = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 5 });

/** A second document derived from the first, the way mutations are: a few changes, the rest shared. */
function edit(value: unknown, path: number[], replacement: unknown, drop: boolean): unknown {
  if (path.length === 0 || value === null || typeof value !== 'object') return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[path[0] % keys.length];
  const copy: any = Array.isArray(value) ? [...value] : { ...value };
  if (drop && path.length === 1) {
    if (Array.isArray(copy)) copy.splice(Number(key), 1);
    else delete copy[key];
  } else copy[key] = edit((value as any)[key], path.slice(1), replacement, drop);
  return copy;
}

/** What goes on the wire: operations (and documents) compare as JSON text does (-0 is 0). */
const sent = (value: unknown) => JSON.parse(JSON.stringify(value));
// The apiserver applies patches with Go's json-patch, which has no ban on `__proto__` keys (fast-check
// generates them); fast-json-patch's ban is a JS-only guard, so it is off here.
const applied = (document: unknown, operations: unknown) =>
  sent(jsonpatch.applyPatch(sent(document), sent(operations), true, false, false).newDocument);

describe('diffJson', () => {
  it('equals fast-json-patch compare() on unrelated documents, and its patch applies', () => {
    fc.assert(
      fc.property(container, container, (a, b) => {
        const ours = diffJson(a, b);
        expect(sent(ours)).toEqual(sent(jsonpatch.compare(a, b)));
        expect(applied(a, ours)).toEqual(sent(b));
      }),
      { numRuns: 500 },
    );
  });

  it('equals compare() on edited copies that share unchanged parts, and its patch applies', () => {
    fc.assert(
      fc.property(
        container,
        fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.boolean(),
        (a, path, replacement, drop) => {
          const b = edit(a, path, replacement, drop) as object;
          const ours = diffJson(a, b);
          expect(sent(ours)).toEqual(sent(jsonpatch.compare(a, b)));
          expect(applied(a, ours)).toEqual(sent(b));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('escapes "/" and "~" in keys and adds a missing map whole', () => {
    expect(diffJson({ metadata: {} }, { metadata: { labels: { 'a/b~c': 'x' } } })).toEqual([
      { op: 'add', path: '/metadata/labels', value: { 'a/b~c': 'x' } },
    ]);
    expect(diffJson({ m: { 'a/b~c': 1 } }, { m: { 'a/b~c': 2 } })).toEqual([
      { op: 'replace', path: '/m/a~1b~0c', value: 2 },
    ]);
  });
});
