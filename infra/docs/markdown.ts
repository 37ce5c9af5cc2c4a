// The few things the documentation tooling reads in Markdown: generated regions (the generator
// replaces them, the drift test compares them), fenced code blocks (the example tests run or parse
// them), headings as GitHub turns them into anchors, and relative links (the link check).
// Only what GitHub-flavoured Markdown needs for those four; not a Markdown parser.

/** `<!-- BEGIN GENERATED: name -->` ... `<!-- END GENERATED -->`: the generator owns what is between. */
const BEGIN = /^<!-- BEGIN GENERATED: ([a-z0-9-]+) -->$/;
const END = '<!-- END GENERATED -->';

export class MarkdownError extends Error {
  override readonly name = 'MarkdownError';
}

/** The names of the generated regions of a page, in order. */
export function regionNames(text: string): string[] {
  return text
    .split('\n')
    .map((line) => BEGIN.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

/**
 * The page with each region's body replaced by `bodies(name)`; the text around the regions is kept
 * byte for byte. A region without an end marker, or nested in another, is an error naming the page.
 */
export function fillRegions(text: string, page: string, bodies: (name: string) => string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const name = BEGIN.exec(lines[i])?.[1];
    out.push(lines[i]);
    if (name === undefined) {
      if (lines[i] === END) throw new MarkdownError(`${page}:${i + 1}: ${END} without a BEGIN`);
      continue;
    }
    let end = i + 1;
    while (end < lines.length && lines[end] !== END) {
      if (BEGIN.test(lines[end])) throw new MarkdownError(`${page}:${end + 1}: a region inside region ${name}`);
      end++;
    }
    if (end === lines.length) throw new MarkdownError(`${page}:${i + 1}: region ${name} has no ${END}`);
    const body = bodies(name).replace(/\n+$/, '');
    if (body !== '') out.push(body);
    out.push(END);
    i = end;
  }
  return out.join('\n');
}

/** A fenced code block: its info string split into language and flags, and its text. */
export interface Fence {
  /** `sh`, `text`, `yaml`, `mermaid`... (the info string's first word). */
  readonly lang: string;
  /** The info string's other words: `sh aws` -> ['aws'], `sh exit=1` -> ['exit=1']. */
  readonly flags: readonly string[];
  readonly body: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** True when only blank lines separate this block from the previous block's closing fence. */
  readonly followsBlock: boolean;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced block of a page, in order. */
export function fences(text: string): Fence[] {
  const lines = text.split('\n');
  const found: Fence[] = [];
  let lastClose = -2;
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, marker, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]);
      if (close && close[2][0] === marker[0] && close[2].length >= marker.length && close[3].trim() === '') break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    }
    const [lang = '', ...flags] = info.trim().split(/\s+/).filter(Boolean);
    const between = lines.slice(lastClose + 1, i);
    found.push({
      lang,
      flags,
      body: body.join('\n'),
      line: i + 1,
      followsBlock: lastClose >= 0 && between.every((l) => l.trim() === ''),
    });
    lastClose = j;
    i = j;
  }
  return found;
}

/** The page with fenced blocks and inline code blanked out (same line count), for heading and link scans. */
export function withoutCode(text: string): string {
  const lines = text.split('\n');
  let fence: string | undefined;
  return lines
    .map((line) => {
      const open = FENCE.exec(line);
      if (fence === undefined && open) {
        fence = open[2];
        return '';
      }
      if (fence !== undefined) {
        if (open && open[2][0] === fence[0] && open[2].length >= fence.length && open[3].trim() === '')
          fence = undefined;
        return '';
      }
      return line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (code) => ' '.repeat(code.length));
    })
    .join('\n');
}

/**
 * GitHub's anchor for a heading: lower case, markup and punctuation dropped (letters, digits,
 * spaces, `-` and `_` stay), each space a `-`; a repeated heading gets `-1`, `-2`...
 */
export function slug(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page: its headings' slugs (with GitHub's numbering of repeats) and explicit `<a id>`s. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  const raw = text.split('\n');
  let fence: string | undefined;
  for (const line of raw) {
    const open = FENCE.exec(line);
    if (fence === undefined && open) {
      fence = open[2];
      continue;
    }
    if (fence !== undefined) {
      if (open && open[2][0] === fence[0] && open[2].length >= fence.length && open[3].trim() === '') fence = undefined;
      continue;
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id[1]);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

export interface Link {
  readonly target: string;
  /** 1-based line. */
  readonly line: number;
}

/** Markdown links and images outside code: `[text](target)`, `![alt](target "title")`, and `<a href>`. */
export function links(text: string): Link[] {
  const found: Link[] = [];
  withoutCode(text)
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
        found.push({ target: m[1], line: i + 1 });
      for (const m of line.matchAll(/<a\s+[^>]*href="([^"]+)"/g)) found.push({ target: m[1], line: i + 1 });
    });
  return found;
}

/** True for a link the link check follows: no scheme (http:, mailto:...), not protocol-relative. */
export function isRelative(target: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('//');
}
