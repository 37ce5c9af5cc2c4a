// What the documentation tests need to read of a shell block: its commands (words, with quotes,
// pipes, redirections, here-documents and comments handled as bash handles them), and whether the
// text a page shows as a command's output is what it printed. A reader's shell, reduced to that.

/** One simple command: its words after expansion-free unquoting, with leading NAME=value left out. */
export interface Command {
  readonly words: readonly string[];
  /** The line of the block it starts on (1-based). */
  readonly line: number;
}

const OPERATORS = ['&&', '||', '|', ';', '&'];

/**
 * The simple commands of a block, in order. Words are unquoted (no parameter or glob expansion:
 * `$HOME` and `*` stay as written); redirections and their targets, here-document bodies and
 * comments are dropped; `NAME=value` before a command is an assignment, not a word.
 */
export function commands(block: string): Command[] {
  const lines = block.split('\n');
  const found: Command[] = [];
  let words: string[] = [];
  let startLine = 0;
  let pendingHeredocs: string[] = [];
  const flush = () => {
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift();
    if (words.length > 0) found.push({ words, line: startLine });
    words = [];
  };
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    let i = 0;
    let word: string | undefined;
    const endWord = () => {
      if (word !== undefined) {
        if (words.length === 0) startLine = n + 1;
        words.push(word);
      }
      word = undefined;
    };
    let continued = false;
    while (i < line.length) {
      const c = line[i];
      if (c === '\\' && i === line.length - 1) {
        continued = true;
        i++;
        continue;
      }
      if (word === undefined && c === '#') break;
      if (c === ' ' || c === '\t') {
        endWord();
        i++;
        continue;
      }
      const op = OPERATORS.find((o) => line.startsWith(o, i));
      if (op !== undefined && !line.startsWith('&>', i)) {
        endWord();
        flush();
        i += op.length;
        continue;
      }
      const heredoc = /^<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(line.slice(i));
      if (heredoc) {
        endWord();
        pendingHeredocs.push(heredoc[3]);
        i += heredoc[0].length;
        continue;
      }
      const redirection = /^(\d*)(>>|>&|<&|&>|>|<)/.exec(line.slice(i));
      if (redirection && word === undefined) {
        i += redirection[0].length;
        // The target: `2>&1` has it glued; otherwise the next word.
        const glued = /^\s*(\S+)/.exec(line.slice(i));
        if (glued) i += glued[0].length;
        continue;
      }
      if (c === "'") {
        const end = line.indexOf("'", i + 1);
        if (end < 0) throw new Error(`line ${n + 1}: unterminated ' quote`);
        word = (word ?? '') + line.slice(i + 1, end);
        i = end + 1;
        continue;
      }
      if (c === '"') {
        let j = i + 1;
        let value = '';
        while (j < line.length && line[j] !== '"') {
          if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1])) j++;
          value += line[j];
          j++;
        }
        if (j >= line.length) throw new Error(`line ${n + 1}: unterminated " quote`);
        word = (word ?? '') + value;
        i = j + 1;
        continue;
      }
      if (c === '\\' && i + 1 < line.length) {
        word = (word ?? '') + line[i + 1];
        i += 2;
        continue;
      }
      word = (word ?? '') + c;
      i++;
    }
    endWord();
    if (!continued) flush();
    for (const delimiter of pendingHeredocs) {
      while (n + 1 < lines.length && lines[n + 1].trim() !== delimiter) n++;
      n++;
    }
    pendingHeredocs = [];
  }
  flush();
  return found;
}

/** `<port>`, `<hex>`, `<a path>`: a variable part of a command's output (lower case, digits, spaces, hyphens). */
const PLACEHOLDER = /<[a-z][a-z0-9 -]*>/g;
/** A line of only `...`: any number of lines, none included. */
const ANY_LINES = '...';

function lineMatcher(expected: string): RegExp {
  const parts = expected.split(PLACEHOLDER).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.+?')}$`);
}

function normalized(text: string): string[] {
  const lines = text.split('\n').map((line) => line.replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * Whether `actual` is what `expected` shows: line by line, exactly (trailing spaces aside), except
 * for placeholders (`<port>`: any text on that line) and lines of `...` (any lines, or none).
 */
export function outputMatches(expected: string, actual: string): boolean {
  const want = normalized(expected);
  const got = normalized(actual);
  const memo = new Map<string, boolean>();
  const match = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    let result: boolean;
    if (i === want.length) result = j === got.length;
    else if (want[i] === ANY_LINES) result = match(i + 1, j) || (j < got.length && match(i, j + 1));
    else result = j < got.length && lineMatcher(want[i]).test(got[j]) && match(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}
