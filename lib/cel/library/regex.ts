// Match positions for Kubernetes' `find` and `findAll` in linear time. @bufbuild/re2 parses and
// compiles RE2 syntax into a program, but its matcher only answers whether a text matches; this
// runs that program as a Pike VM (one pass over the text, at most one thread per instruction), so
// a pattern cannot take more than O(text × pattern) steps, and the leftmost-first match is Go's.
import { RE2JS } from '@bufbuild/re2';

interface Inst {
  readonly op: number;
  readonly out: number;
  readonly arg: number;
  matchRune(rune: number): boolean;
}
interface Prog {
  readonly start: number;
  getInst(pc: number): Inst;
  numInst(): number;
}

// @bufbuild/re2 0.6.1's instruction codes (Inst.js) and zero-width flags (Utils.js).
const ALT = 1,
  ALT_MATCH = 2,
  CAPTURE = 3,
  EMPTY_WIDTH = 4,
  MATCH = 6,
  NOP = 7,
  RUNE = 8,
  RUNE1 = 9,
  RUNE_ANY = 10,
  RUNE_ANY_NOT_NL = 11;
const BEGIN_LINE = 0x01,
  END_LINE = 0x02,
  BEGIN_TEXT = 0x04,
  END_TEXT = 0x08,
  WORD_BOUNDARY = 0x10,
  NO_WORD_BOUNDARY = 0x20;

const isWord = (r: number) =>
  (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a) || r === 0x5f;

/** The zero-width assertions that hold between rune `before` and rune `after` (-1: text edge). */
function context(before: number, after: number): number {
  let flags = 0;
  if (before < 0) flags |= BEGIN_TEXT | BEGIN_LINE;
  if (before === 0x0a) flags |= BEGIN_LINE;
  if (after < 0) flags |= END_TEXT | END_LINE;
  if (after === 0x0a) flags |= END_LINE;
  flags |= isWord(before) !== isWord(after) ? WORD_BOUNDARY : NO_WORD_BOUNDARY;
  return flags;
}

const programs = new Map<string, Prog>();
const compiled = new Map<string, RE2JS>();

/**
 * A pattern compiled once and kept: `matches` is called per evaluation with the same constant
 * pattern, and compiling it is most of the call's cost. Throws RE2's syntax error (never cached).
 */
export function compiledRegex(pattern: string): RE2JS {
  let regex = compiled.get(pattern);
  if (!regex) {
    regex = RE2JS.compile(pattern);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, regex);
  }
  return regex;
}

/** The compiled program of an RE2 pattern; throws RE2's syntax error. */
export function compilePattern(pattern: string): Prog {
  let prog = programs.get(pattern);
  if (!prog) {
    prog = (RE2JS.compile(pattern).re2() as unknown as { prog: Prog }).prog;
    if (programs.size > 1000) programs.clear();
    programs.set(pattern, prog);
  }
  return prog;
}

/** The leftmost-first match at or after `from`: [start, end] in UTF-16 offsets, or undefined. */
function search(prog: Prog, text: string, from: number): [number, number] | undefined {
  const size = prog.numInst();
  const seen = new Int32Array(size).fill(-1);
  let generation = 0;
  let current: { pc: number; start: number }[] = [];
  let next: { pc: number; start: number }[] = [];
  let match: [number, number] | undefined;

  const add = (list: { pc: number; start: number }[], pc: number, start: number, flags: number) => {
    if (seen[pc] === generation) return;
    seen[pc] = generation;
    const inst = prog.getInst(pc);
    switch (inst.op) {
      case ALT:
      case ALT_MATCH:
        add(list, inst.out, start, flags);
        add(list, inst.arg, start, flags);
        return;
      case NOP:
      case CAPTURE:
        add(list, inst.out, start, flags);
        return;
      case EMPTY_WIDTH:
        if ((inst.arg & ~flags) === 0) add(list, inst.out, start, flags);
        return;
      default:
        list.push({ pc, start });
    }
  };

  const runeAt = (i: number) => text.codePointAt(i) ?? -1;
  let before =
    from > 0
      ? (text.codePointAt(
          from -
            1 -
            (from >= 2 && /[\uDC00-\uDFFF]/.test(text[from - 1]) && /[\uD800-\uDBFF]/.test(text[from - 2]) ? 1 : 0),
        ) ?? -1)
      : -1;
  for (let i = from; ; ) {
    const rune = runeAt(i);
    const width = rune > 0xffff ? 2 : 1;
    if (!match) {
      generation++;
      // Threads already running keep their priority; a match starting here comes after them.
      for (const t of current) seen[t.pc] = generation;
      add(current, prog.start, i, context(before, rune));
    }
    if (current.length === 0 && (match || rune < 0)) break;
    generation++;
    const after = rune < 0 ? -1 : runeAt(i + width);
    const flags = context(rune, after);
    for (const t of current) {
      const inst = prog.getInst(t.pc);
      if (inst.op === MATCH) {
        match = [t.start, i];
        break; // lower-priority threads are cut off: leftmost-first
      }
      if (rune < 0) continue;
      const ok =
        inst.op === RUNE_ANY
          ? true
          : inst.op === RUNE_ANY_NOT_NL
            ? rune !== 0x0a
            : (inst.op === RUNE || inst.op === RUNE1) && inst.matchRune(rune);
      if (ok) add(next, inst.out, t.start, flags);
    }
    if (rune < 0) break;
    [current, next] = [next, []];
    before = rune;
    i += width;
  }
  return match;
}

/** Go's FindAllString(text, limit) (limit < 0: all); RE2 syntax errors are thrown. */
export function findAll(text: string, pattern: string, limit: number): string[] {
  if (limit === 0) return [];
  const prog = compilePattern(pattern);
  const out: string[] = [];
  let pos = 0;
  let previousEnd = -1;
  while (pos <= text.length) {
    const found = search(prog, text, pos);
    if (!found) break;
    const [start, end] = found;
    // An empty match right after the previous match is not reported, as in Go.
    if (!(start === end && start === previousEnd)) {
      out.push(text.slice(start, end));
      if (limit > 0 && out.length >= limit) break;
    }
    previousEnd = end;
    pos = end > start ? end : end + ((text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1);
  }
  return out;
}
