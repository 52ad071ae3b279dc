/**
 * Tokenizer of the expression language (ARCHITECTURE §5). Hand-written and on demand, so a
 * template can stop at the `}` that closes `${...}` without scanning further.
 */
import { ExpressionError } from './expression-error.js';

export type Operator = '==' | '!=' | '<' | '<=' | '>' | '>=';
/** `${` opens a placeholder; only conditions have them (see {@link Lexer}). */
export type Punct = '(' | ')' | '[' | ']' | ',' | '.' | '}' | '${';

export type Token =
  | { kind: 'num'; value: number; pos: number; end: number }
  | { kind: 'str'; value: string; pos: number; end: number }
  /** A bare word: keyword, root name or function name. */
  | { kind: 'ident'; value: string; pos: number; end: number }
  /** A path segment after `.`: may start with a digit and contain `-`. */
  | { kind: 'seg'; value: string; pos: number; end: number }
  | { kind: 'op'; value: Operator; pos: number; end: number }
  | { kind: 'punct'; value: Punct; pos: number; end: number }
  | { kind: 'end'; pos: number; end: number };

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;
const SEGMENT_PART = /[A-Za-z0-9_-]/;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
  '/': '/',
};

/** How a token reads in an error message. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'end of expression';
    case 'str':
      return `string ${JSON.stringify(token.value)}`;
    case 'num':
      return `number ${token.value}`;
    case 'ident':
    case 'seg':
    case 'op':
    case 'punct':
      return `'${token.value}'`;
    default: {
      const never: never = token;
      return String(never);
    }
  }
}

export class Lexer {
  private index: number;
  private afterDot = false;
  private lookahead: Token | undefined;

  /**
   * @param placeholders whether `${` is a token (conditions: `${inputs.mode} == 'quick'`); in
   *   templates the expression sits inside one `${...}` and a `$` is an error.
   */
  constructor(
    private readonly text: string,
    start: number,
    private readonly placeholders = false,
  ) {
    this.index = start;
  }

  peek(): Token {
    this.lookahead ??= this.read();
    return this.lookahead;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead = undefined;
    this.afterDot = token.kind === 'punct' && token.value === '.';
    return token;
  }

  private read(): Token {
    const text = this.text;
    while (this.index < text.length && /\s/.test(text.charAt(this.index))) this.index++;
    const pos = this.index;
    if (pos >= text.length) return { kind: 'end', pos, end: pos };
    const ch = text.charAt(pos);
    if (this.afterDot) return this.readSegment(pos);
    if (ch === '"' || ch === "'") return this.readString(pos, ch);
    if (/[0-9]/.test(ch) || (ch === '-' && /[0-9]/.test(text.charAt(pos + 1)))) {
      return this.readNumber(pos);
    }
    if (IDENT_START.test(ch)) {
      let end = pos + 1;
      while (end < text.length && IDENT_PART.test(text.charAt(end))) end++;
      this.index = end;
      return { kind: 'ident', value: text.slice(pos, end), pos, end };
    }
    const two = text.slice(pos, pos + 2);
    if (two === '==' || two === '!=' || two === '<=' || two === '>=') {
      this.index = pos + 2;
      return { kind: 'op', value: two, pos, end: pos + 2 };
    }
    if (ch === '<' || ch === '>') {
      this.index = pos + 1;
      return { kind: 'op', value: ch, pos, end: pos + 1 };
    }
    if (ch === '$' && this.placeholders && text.charAt(pos + 1) === '{') {
      this.index = pos + 2;
      return { kind: 'punct', value: '${', pos, end: pos + 2 };
    }
    if ('()[],.}'.includes(ch)) {
      this.index = pos + 1;
      return { kind: 'punct', value: ch as Punct, pos, end: pos + 1 };
    }
    const hint = ch === '=' ? " ('==' compares)" : ch === '&' || ch === '|' ? ' (use and/or)' : '';
    throw new ExpressionError(pos, `an operand or operator${hint}`, `'${ch}'`);
  }

  private readSegment(pos: number): Token {
    let end = pos;
    while (end < this.text.length && SEGMENT_PART.test(this.text.charAt(end))) end++;
    if (end === pos) {
      const found = this.text.charAt(pos);
      throw new ExpressionError(pos, 'a name after "."', found === '' ? 'end' : `'${found}'`);
    }
    this.index = end;
    return { kind: 'seg', value: this.text.slice(pos, end), pos, end };
  }

  private readNumber(pos: number): Token {
    NUMBER.lastIndex = pos;
    const match = NUMBER.exec(this.text);
    const raw = match?.[0] ?? '';
    const end = pos + raw.length;
    if (end < this.text.length && IDENT_PART.test(this.text.charAt(end))) {
      throw new ExpressionError(
        end,
        'an operator or the end of a number',
        `'${this.text.charAt(end)}'`,
      );
    }
    this.index = end;
    return { kind: 'num', value: Number(raw), pos, end };
  }

  private readString(pos: number, quote: string): Token {
    const text = this.text;
    let value = '';
    let i = pos + 1;
    while (i < text.length) {
      const ch = text.charAt(i);
      if (ch === quote) {
        this.index = i + 1;
        return { kind: 'str', value, pos, end: i + 1 };
      }
      if (ch === '\\') {
        const esc = text.charAt(i + 1);
        const mapped = ESCAPES[esc];
        if (mapped !== undefined) {
          value += mapped;
          i += 2;
          continue;
        }
        if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          value += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
          continue;
        }
        throw new ExpressionError(
          i,
          'a known escape (\\\\ \\\' \\" \\n \\t \\r \\/ \\uXXXX)',
          `'\\${esc}'`,
        );
      }
      value += ch;
      i++;
    }
    throw new ExpressionError(
      pos,
      `a closing ${quote} for the string starting here`,
      'end of text',
    );
  }
}
