// CEL's grammar (cel-spec langdef.md) with the optional syntax cel-go enables for Kubernetes:
// `a.?b`, `m[?k]`, `[?x]`, `{?k: v}`. @bufbuild/cel's parser has no optional syntax, so policies
// are parsed here into a small tree that interpreter.ts turns into closures. Macros (`has`, `all`,
// `exists`, `exists_one`, `map`, `filter`, the two-variable forms, `optMap`, `optFlatMap`) become
// comprehension nodes at parse time, as cel-go's parser expands them.

export type Node =
  | { readonly kind: 'literal'; readonly pos: number; readonly value: Literal }
  | {
      readonly kind: 'ident';
      readonly pos: number;
      readonly name: string;
      /** `.name`: resolved from the root scope, never a comprehension variable (cel-go's leading dot). */
      readonly absolute?: boolean;
    }
  | {
      readonly kind: 'select';
      readonly pos: number;
      readonly operand: Node;
      readonly field: string;
      readonly optional: boolean;
      readonly test: boolean;
    }
  | {
      readonly kind: 'index';
      readonly pos: number;
      readonly operand: Node;
      readonly index: Node;
      readonly optional: boolean;
    }
  | {
      readonly kind: 'call';
      readonly pos: number;
      readonly fn: string;
      readonly target?: Node;
      readonly args: readonly Node[];
    }
  | {
      readonly kind: 'list';
      readonly pos: number;
      readonly elements: readonly Node[];
      readonly optional: readonly boolean[];
    }
  | {
      readonly kind: 'map';
      readonly pos: number;
      readonly entries: readonly { key: Node; value: Node; optional: boolean }[];
    }
  | {
      readonly kind: 'object';
      readonly pos: number;
      readonly type: string;
      readonly fields: readonly { name: string; value: Node; optional: boolean }[];
    }
  | {
      readonly kind: 'comprehension';
      readonly pos: number;
      readonly macro: Macro;
      readonly range: Node;
      readonly vars: readonly string[];
      readonly args: readonly Node[];
    };

export type Literal =
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'uint'; readonly value: bigint }
  | { readonly type: 'double'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'null'; readonly value: null };

export type Macro =
  | 'all'
  | 'exists'
  | 'exists_one'
  | 'map'
  | 'filter'
  | 'all2'
  | 'exists2'
  | 'existsOne2'
  | 'transformList'
  | 'transformMap'
  | 'transformMapEntry'
  | 'optMap'
  | 'optFlatMap'
  | 'sortBy';

export interface ParseOptions {
  /** Two-variable comprehensions (`all(k, v, p)`, `transformList`, ...): Kubernetes 1.33 on. */
  readonly twoVariableComprehensions: boolean;
  /** cel-go's lists extension and its `sortBy` macro: Kubernetes 1.35 on. */
  readonly listsExtension: boolean;
}

export class CelSyntaxError extends Error {
  override readonly name = 'CelSyntaxError';
  constructor(
    readonly pos: number,
    message: string,
  ) {
    super(message);
  }
}

type TokenKind = 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'ident' | 'op' | 'eof';
interface Token {
  readonly kind: TokenKind;
  readonly pos: number;
  readonly text: string;
  readonly value?: unknown;
}

/** CEL's reserved words: never identifiers. */
export const RESERVED = new Set([
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);
const OPERATORS = [
  '.?',
  '[?',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '?',
  ':',
  '.',
  ',',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
];
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

const ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '`': '`',
  '?': '?',
};

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  function fail(pos: number, message: string): never {
    throw new CelSyntaxError(pos, message);
  }
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    const start = i;
    // Strings and bytes, with the optional r/b prefixes in either order.
    const prefix = /^(?:[rR][bB]?|[bB][rR]?)?(?=['"])/.exec(text.slice(i, i + 3))?.[0];
    if (prefix !== undefined && (prefix !== '' || c === '"' || c === "'")) {
      const raw = /r/i.test(prefix);
      const bytes = /b/i.test(prefix);
      i += prefix.length;
      const quote = text.startsWith(text[i].repeat(3), i) ? text[i].repeat(3) : text[i];
      i += quote.length;
      const units: number[] = [];
      let out = '';
      const push = (s: string) => {
        if (bytes) units.push(...Buffer.from(s, 'utf8'));
        else out += s;
      };
      for (;;) {
        if (i >= text.length) fail(start, `Syntax error: token recognition error at: '${text.slice(start)}'`);
        if (text.startsWith(quote, i)) {
          i += quote.length;
          break;
        }
        const ch = text[i];
        if (quote.length === 1 && (ch === '\n' || ch === '\r'))
          fail(start, `Syntax error: token recognition error at: '${text.slice(start, i + 1)}'`);
        if (ch === '\\' && !raw) {
          const e = text[i + 1];
          if (e in ESCAPES) {
            push(ESCAPES[e]);
            i += 2;
          } else if (e === 'x' || e === 'X' || e === 'u' || e === 'U') {
            const len = e === 'x' || e === 'X' ? 2 : e === 'u' ? 4 : 8;
            const hex = text.slice(i + 2, i + 2 + len);
            if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail(i, 'Syntax error: invalid escape sequence');
            const code = parseInt(hex, 16);
            if (bytes && len === 2) units.push(code);
            else {
              if (code > 0x10ffff || (code >= 0xd800 && code < 0xe000))
                fail(i, 'Syntax error: invalid unicode code point');
              push(String.fromCodePoint(code));
            }
            i += 2 + len;
          } else if (/[0-3]/.test(e) && /^[0-7]{2}$/.test(text.slice(i + 2, i + 4))) {
            const code = parseInt(text.slice(i + 1, i + 4), 8);
            if (bytes) units.push(code);
            else push(String.fromCodePoint(code));
            i += 4;
          } else fail(i, `Syntax error: token recognition error at: '${text.slice(start, i + 2)}'`);
          continue;
        }
        const cp = text.codePointAt(i);
        if (cp === undefined) fail(start, `Syntax error: token recognition error at: '${text.slice(start)}'`);
        push(String.fromCodePoint(cp));
        i += cp > 0xffff ? 2 : 1;
      }
      tokens.push(
        bytes
          ? { kind: 'bytes', pos: start, text: text.slice(start, i), value: new Uint8Array(units) }
          : { kind: 'string', pos: start, text: text.slice(start, i), value: out },
      );
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      const hex = /^0[xX][0-9a-fA-F]+[uU]?/.exec(text.slice(i));
      if (hex) {
        i += hex[0].length;
        const unsigned = /[uU]$/.test(hex[0]);
        tokens.push({
          kind: unsigned ? 'uint' : 'int',
          pos: start,
          text: hex[0],
          value: BigInt(hex[0].replace(/[uU]$/, '')),
        });
        continue;
      }
      const m = /^(?:[0-9]*\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+\.?(?![0-9]))|^[0-9]+/.exec(
        text.slice(i),
      );
      if (!m) fail(i, `Syntax error: token recognition error at: '${c}'`);
      let lexeme = m[0];
      // `1.` followed by an identifier is a selection on an int (`1.size()` is not a double).
      if (lexeme.endsWith('.') && !/[eE]/.test(lexeme) && /[A-Za-z_?]/.test(text[i + lexeme.length] ?? ''))
        lexeme = lexeme.slice(0, -1);
      i += lexeme.length;
      if (/[.eE]/.test(lexeme)) {
        tokens.push({ kind: 'double', pos: start, text: lexeme, value: Number(lexeme) });
      } else if (text[i] === 'u' || text[i] === 'U') {
        i++;
        tokens.push({ kind: 'uint', pos: start, text: `${lexeme}u`, value: BigInt(lexeme) });
      } else tokens.push({ kind: 'int', pos: start, text: lexeme, value: BigInt(lexeme) });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
      if (!m) fail(i, `Syntax error: token recognition error at: '${c}'`);
      i += m[0].length;
      tokens.push({ kind: 'ident', pos: start, text: m[0] });
      continue;
    }
    if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) fail(i, `Syntax error: token recognition error at: '${text.slice(i)}'`);
      tokens.push({ kind: 'ident', pos: start, text: text.slice(i, end + 1), value: 'quoted' });
      i = end + 1;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) fail(i, `Syntax error: token recognition error at: '${c}'`);
    tokens.push({ kind: 'op', pos: start, text: op });
    i += op.length;
  }
  tokens.push({ kind: 'eof', pos: text.length, text: '<EOF>' });
  return tokens;
}

class Parser {
  private readonly tokens: Token[];
  private at = 0;
  private depth = 0;

  constructor(
    text: string,
    private readonly options: ParseOptions,
    private readonly field: (name: string) => string,
  ) {
    this.tokens = tokenize(text);
  }

  parse(): Node {
    const expr = this.expr();
    const next = this.peek();
    if (next.kind !== 'eof') this.fail(next, `Syntax error: extraneous input '${next.text}' expecting <EOF>`);
    return expr;
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.at + offset, this.tokens.length - 1)];
  }

  private next(): Token {
    return this.tokens[this.at++];
  }

  private is(op: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.text === op;
  }

  private accept(op: string): boolean {
    if (!this.is(op)) return false;
    this.at++;
    return true;
  }

  private expect(op: string): Token {
    const t = this.peek();
    if (!this.accept(op)) this.fail(t, `Syntax error: mismatched input '${t.text}' expecting '${op}'`);
    return t;
  }

  private fail(token: Token, message: string): never {
    throw new CelSyntaxError(token.pos, message);
  }

  private expr(): Node {
    // cel-go's default maximum recursion depth of the parser.
    if (++this.depth > 250) this.fail(this.peek(), 'expression recursion limit exceeded: 250');
    try {
      const condition = this.binary(0);
      if (!this.is('?')) return condition;
      const q = this.next();
      const then = this.binary(0);
      this.expect(':');
      const otherwise = this.expr();
      return { kind: 'call', pos: q.pos, fn: '_?_:_', args: [condition, then, otherwise] };
    } finally {
      this.depth--;
    }
  }

  private static readonly LEVELS: readonly (readonly string[])[] = [
    ['||'],
    ['&&'],
    ['<', '<=', '>=', '>', '==', '!=', 'in'],
    ['+', '-'],
    ['*', '/', '%'],
  ];
  private static readonly NAMES: Record<string, string> = {
    '||': '_||_',
    '&&': '_&&_',
    '<': '_<_',
    '<=': '_<=_',
    '>=': '_>=_',
    '>': '_>_',
    '==': '_==_',
    '!=': '_!=_',
    in: '@in',
    '+': '_+_',
    '-': '_-_',
    '*': '_*_',
    '/': '_/_',
    '%': '_%_',
  };

  private binary(level: number): Node {
    if (level === Parser.LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      const op =
        (t.kind === 'op' || (t.kind === 'ident' && t.text === 'in')) && Parser.LEVELS[level].includes(t.text)
          ? t.text
          : undefined;
      if (!op) return left;
      this.at++;
      const right = this.binary(level + 1);
      left = { kind: 'call', pos: t.pos, fn: Parser.NAMES[op], args: [left, right] };
    }
  }

  private unary(): Node {
    const t = this.peek();
    if (this.is('!') || this.is('-')) {
      const ops: Token[] = [];
      while (this.is(t.text)) ops.push(this.next());
      const next = this.peek();
      // A minus directly on a number literal is part of the literal (so INT64_MIN parses).
      if (
        t.text === '-' &&
        ops.length % 2 === 1 &&
        (next.kind === 'int' || next.kind === 'double') &&
        !this.isMemberSuffix(1)
      ) {
        this.at++;
        let operand: Node =
          next.kind === 'int'
            ? this.intLiteral(next, true)
            : { kind: 'literal', pos: t.pos, value: { type: 'double', value: -(next.value as number) } };
        for (let i = 1; i < ops.length; i++)
          operand = { kind: 'call', pos: ops[ops.length - 1 - i].pos, fn: '-_', args: [operand] };
        return operand;
      }
      let operand = this.member();
      for (let i = ops.length - 1; i >= 0; i--)
        operand = { kind: 'call', pos: ops[i].pos, fn: t.text === '!' ? '!_' : '-_', args: [operand] };
      return operand;
    }
    return this.member();
  }

  private isMemberSuffix(offset: number): boolean {
    const t = this.peek(offset);
    return t.kind === 'op' && (t.text === '.' || t.text === '.?' || t.text === '[' || t.text === '[?');
  }

  private intLiteral(t: Token, negative: boolean): Node {
    const value = negative ? -(t.value as bigint) : (t.value as bigint);
    if (value > INT64_MAX || value < -INT64_MAX - 1n) this.fail(t, 'invalid int literal');
    return { kind: 'literal', pos: negative ? t.pos - 1 : t.pos, value: { type: 'int', value } };
  }

  private member(): Node {
    let node = this.primary();
    for (;;) {
      const t = this.peek();
      if (this.accept('.') || this.accept('.?')) {
        const optional = t.text === '.?';
        const name = this.next();
        if (name.kind !== 'ident')
          this.fail(name, `Syntax error: mismatched input '${name.text}' expecting IDENTIFIER`);
        // cel-go 0.26 parses `a.\`b-c\`` but Kubernetes does not enable the escape syntax.
        if (name.value === 'quoted') this.fail(name, "unsupported syntax: '`'");
        const field = this.field(name.text);
        if (!optional && this.is('(')) {
          const open = this.next();
          const args = this.arguments(')');
          node = this.receiverCall(name, open.pos, node, args);
          continue;
        }
        node = { kind: 'select', pos: t.pos, operand: node, field, optional, test: false };
        // `a.b.C{...}`: construction of a message with a qualified name.
        const qualified = !optional && this.is('{') ? qualifiedIdent(node) : undefined;
        if (qualified !== undefined) node = this.objectLiteral(qualified);
        continue;
      }
      if (this.accept('[') || this.accept('[?')) {
        const index = this.expr();
        this.expect(']');
        node = { kind: 'index', pos: t.pos, operand: node, index, optional: t.text === '[?' };
        continue;
      }
      return node;
    }
  }

  private arguments(close: string): Node[] {
    const args: Node[] = [];
    if (this.accept(close)) return args;
    do {
      if (this.is(close)) break;
      args.push(this.expr());
    } while (this.accept(','));
    this.expect(close);
    return args;
  }

  private primary(): Node {
    const t = this.next();
    switch (t.kind) {
      case 'int':
        return this.intLiteral(t, false);
      case 'uint':
        if ((t.value as bigint) > UINT64_MAX) this.fail(t, 'invalid uint literal');
        return { kind: 'literal', pos: t.pos, value: { type: 'uint', value: t.value as bigint } };
      case 'double':
        return { kind: 'literal', pos: t.pos, value: { type: 'double', value: t.value as number } };
      case 'string':
        return { kind: 'literal', pos: t.pos, value: { type: 'string', value: t.value as string } };
      case 'bytes':
        return { kind: 'literal', pos: t.pos, value: { type: 'bytes', value: t.value as Uint8Array } };
      case 'ident':
        return this.identifier(t, false);
      case 'op':
        if (t.text === '.') {
          const name = this.next();
          if (name.kind !== 'ident')
            this.fail(name, `Syntax error: mismatched input '${name.text}' expecting IDENTIFIER`);
          return this.identifier(name, true);
        }
        if (t.text === '(') {
          const inner = this.expr();
          this.expect(')');
          return inner;
        }
        if (t.text === '[' || t.text === '[?') return this.listLiteral(t, t.text === '[?');
        if (t.text === '{') return this.mapLiteral(t);
        break;
      default:
        break;
    }
    return this.fail(
      t,
      t.kind === 'eof'
        ? "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
        : `Syntax error: extraneous input '${t.text}' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}`,
    );
  }

  private identifier(t: Token, leadingDot: boolean): Node {
    const name = t.text;
    if (t.value === 'quoted') this.fail(t, `Syntax error: unsupported syntax '\`'`);
    if (!leadingDot && name === 'true') return { kind: 'literal', pos: t.pos, value: { type: 'bool', value: true } };
    if (!leadingDot && name === 'false') return { kind: 'literal', pos: t.pos, value: { type: 'bool', value: false } };
    if (!leadingDot && name === 'null') return { kind: 'literal', pos: t.pos, value: { type: 'null', value: null } };
    if (RESERVED.has(name) || name === 'in') this.fail(t, `Syntax error: reserved identifier: ${name}`);
    if (this.is('(')) {
      const open = this.next();
      const args = this.arguments(')');
      if (name === 'has' && !leadingDot) {
        const arg = args[0];
        if (args.length !== 1 || arg.kind !== 'select' || arg.optional)
          this.fail(open, 'invalid argument to has() macro');
        return { ...arg, test: true };
      }
      return { kind: 'call', pos: open.pos, fn: name, args };
    }
    // `Name{field: value}`: message construction.
    if (this.is('{')) return this.objectLiteral(name);
    return leadingDot ? { kind: 'ident', pos: t.pos, name, absolute: true } : { kind: 'ident', pos: t.pos, name };
  }

  /** `Name{field: value, ?field: optional}`, the `{` next; Name may be qualified (`Object.spec`). */
  private objectLiteral(type: string): Node {
    const open = this.next();
    const fields: { name: string; value: Node; optional: boolean }[] = [];
    if (!this.accept('}')) {
      do {
        if (this.is('}')) break;
        const optional = this.accept('?');
        const field = this.next();
        if (field.kind !== 'ident')
          this.fail(field, `Syntax error: mismatched input '${field.text}' expecting IDENTIFIER`);
        this.expect(':');
        fields.push({ name: field.text, value: this.expr(), optional });
      } while (this.accept(','));
      this.expect('}');
    }
    return { kind: 'object', pos: open.pos, type, fields };
  }

  private listLiteral(open: Token, firstOptional: boolean): Node {
    const elements: Node[] = [];
    const optional: boolean[] = [];
    if (firstOptional || !this.accept(']')) {
      do {
        if (this.is(']')) break;
        optional.push((elements.length === 0 && firstOptional) || this.accept('?'));
        elements.push(this.expr());
      } while (this.accept(','));
      this.expect(']');
    }
    return { kind: 'list', pos: open.pos, elements, optional };
  }

  private mapLiteral(open: Token): Node {
    const entries: { key: Node; value: Node; optional: boolean }[] = [];
    if (!this.accept('}')) {
      do {
        if (this.is('}')) break;
        const optional = this.accept('?');
        const key = this.expr();
        this.expect(':');
        entries.push({ key, value: this.expr(), optional });
      } while (this.accept(','));
      this.expect('}');
    }
    return { kind: 'map', pos: open.pos, entries };
  }

  /** `target.name(args)`: a macro when the name and arity are one, else a method call. */
  private receiverCall(name: Token, pos: number, target: Node, args: Node[]): Node {
    const fn = name.text;
    const macro = this.macroOf(fn, args.length);
    if (!macro) return { kind: 'call', pos, fn, target, args };
    const variables = macro.vars;
    const vars: string[] = [];
    for (let i = 0; i < variables; i++) {
      const v = args[i];
      const at: Token = { kind: 'op', pos: v.pos, text: '' };
      if (v.kind !== 'ident')
        this.fail(
          at,
          macro.macro === 'optMap' || macro.macro === 'optFlatMap'
            ? `${fn}() variable name must be a simple identifier`
            : 'argument must be a simple name',
        );
      if (v.name === '__result__') this.fail(at, 'iteration variable overwrites accumulator variable');
      vars.push(v.name);
    }
    if (variables === 2 && vars[0] === vars[1])
      this.fail({ kind: 'op', pos: args[1].pos, text: '' }, `duplicate variable name: ${vars[0]}`);
    return { kind: 'comprehension', pos, macro: macro.macro, range: target, vars, args: args.slice(variables) };
  }

  private macroOf(fn: string, arity: number): { macro: Macro; vars: number } | undefined {
    switch (fn) {
      case 'all':
      case 'exists':
        if (arity === 2) return { macro: fn, vars: 1 };
        if (arity === 3 && this.options.twoVariableComprehensions)
          return { macro: fn === 'all' ? 'all2' : 'exists2', vars: 2 };
        return undefined;
      case 'exists_one':
        if (arity === 2) return { macro: 'exists_one', vars: 1 };
        return arity === 3 && this.options.twoVariableComprehensions ? { macro: 'existsOne2', vars: 2 } : undefined;
      case 'existsOne':
        if (arity === 2 && this.options.twoVariableComprehensions) return { macro: 'exists_one', vars: 1 };
        return arity === 3 && this.options.twoVariableComprehensions ? { macro: 'existsOne2', vars: 2 } : undefined;
      case 'map':
      case 'filter':
        return arity === 2 || (arity === 3 && fn === 'map') ? { macro: fn, vars: 1 } : undefined;
      case 'transformList':
      case 'transformMap':
      case 'transformMapEntry':
        return (arity === 3 || arity === 4) && this.options.twoVariableComprehensions
          ? { macro: fn, vars: 2 }
          : undefined;
      case 'optMap':
      case 'optFlatMap':
        return arity === 2 ? { macro: fn, vars: 1 } : undefined;
      case 'sortBy':
        return arity === 2 && this.options.listsExtension ? { macro: fn, vars: 1 } : undefined;
      default:
        return undefined;
    }
  }
}

/** `field` maps selected names (Kubernetes unescapes `x__dash__y` to `x-y`). */
export function parseCel(text: string, options: ParseOptions, field: (name: string) => string = (n) => n): Node {
  return new Parser(text, options, field).parse();
}

/** `a.b.c` when the node is identifiers and plain selections only. */
function qualifiedIdent(node: Node): string | undefined {
  if (node.kind === 'ident') return node.name;
  if (node.kind === 'select' && !node.optional && !node.test) {
    const operand = qualifiedIdent(node.operand);
    return operand === undefined ? undefined : `${operand}.${node.field}`;
  }
  return undefined;
}
