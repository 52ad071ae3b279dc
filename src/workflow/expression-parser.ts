/**
 * Recursive-descent parser of the expression language. It produces closures directly (no AST
 * interpreter, no eval) and records the names an expression reads, for load-time checks.
 *
 * Grammar (lowest precedence first):
 *   or      := and ('or' and)*
 *   and     := not ('and' not)*
 *   not     := 'not' not | compare
 *   compare := primary (('==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not' 'in') primary)?
 *   primary := number | string | true | false | null | '[' (or (',' or)*)? ']' | '(' or ')'
 *            | 'coalesce' '(' or (',' or)* ')' | root ('.' name | '[' (number | string) ']')*
 *            | '${' or '}'                                   (conditions only, not nested)
 *   root    := 'inputs' | 'steps' | 'context'
 *
 * In a condition a placeholder `${...}` is a value, like a parenthesised expression: the
 * Python service's `${inputs.mode} == 'quick'` compares the input, never pasted text. A quoted
 * placeholder (`'${inputs.mode}' == 'quick'`) would compare the literal text and is rejected.
 */
import { ExpressionError } from './expression-error.js';
import { Lexer, describeToken, type Token } from './expression-lexer.js';
import type { EvalScope, Evaluator } from './types.js';
import { compareValues, containsValue, isTruthy, valuesEqual } from './values.js';

/** Names an expression reads: `inputs.X`, `steps.S…`, `context.X`. */
export interface ReferenceSets {
  inputs: Set<string>;
  steps: Set<string>;
  context: Set<string>;
  /** Names read under `item` (a map step's item, docs/workflow-format.md); '' for `item` itself. */
  item: Set<string>;
}

interface Node {
  evaluate: Evaluator;
  /** Set when the node's value does not depend on the scope. */
  constant?: { value: unknown };
}

const MAX_DEPTH = 64;
const ROOTS = ['inputs', 'steps', 'context', 'item'] as const;
type Root = (typeof ROOTS)[number];
const LITERALS: Readonly<Record<string, unknown>> = { true: true, false: false, null: null };

function constant(value: unknown): Node {
  return { evaluate: () => value, constant: { value } };
}

function readSegment(value: unknown, segment: string | number): unknown {
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    const index =
      typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : NaN;
    if (!Number.isInteger(index)) return null;
    const item: unknown = value[index < 0 ? value.length + index : index];
    return item === undefined ? null : item;
  }
  const key = String(segment);
  if (!Object.hasOwn(value, key)) return null;
  const item: unknown = (value as Record<string, unknown>)[key];
  return item === undefined || typeof item === 'function' ? null : item;
}

function pathNode(root: Root, segments: readonly (string | number)[]): Node {
  return {
    evaluate: (scope: EvalScope) => {
      let value: unknown = readSegment(scope, root);
      for (const segment of segments) {
        if (value === null) return null;
        value = readSegment(value, segment);
      }
      return value;
    },
  };
}

export class Parser {
  private readonly lexer: Lexer;
  private depth = 0;
  private inPlaceholder = false;

  /** @param placeholders whether `${...}` may appear as a value (conditions). */
  constructor(
    text: string,
    start: number,
    private readonly refs: ReferenceSets,
    private readonly placeholders = false,
  ) {
    this.lexer = new Lexer(text, start, placeholders);
  }

  /** Parses one expression; the next token (end of text, or `}` in a template) is left unread. */
  parse(): { evaluate: Evaluator; constant: { value: unknown } | undefined; next: Token } {
    const node = this.parseOr();
    return { evaluate: node.evaluate, constant: node.constant, next: this.lexer.peek() };
  }

  /** Reads the token that must follow the expression. */
  expectEnd(kind: 'end' | '}'): Token {
    const token = this.lexer.next();
    const ok =
      kind === 'end' ? token.kind === 'end' : token.kind === 'punct' && token.value === '}';
    if (!ok) {
      const wanted =
        kind === 'end' ? 'an operator or the end of the expression' : "an operator or '}'";
      throw new ExpressionError(token.pos, wanted, describeToken(token));
    }
    return token;
  }

  private fail(token: Token, expected: string): never {
    throw new ExpressionError(token.pos, expected, describeToken(token));
  }

  private isWord(token: Token, word: string): boolean {
    return token.kind === 'ident' && token.value === word;
  }

  private isPunct(token: Token, punct: string): boolean {
    return token.kind === 'punct' && token.value === punct;
  }

  private expectPunct(punct: string, expected: string): Token {
    const token = this.lexer.next();
    if (!this.isPunct(token, punct)) this.fail(token, expected);
    return token;
  }

  private parseOr(): Node {
    if (++this.depth > MAX_DEPTH)
      this.fail(this.lexer.peek(), `at most ${MAX_DEPTH} levels of nesting`);
    let left = this.parseAnd();
    while (this.isWord(this.lexer.peek(), 'or')) {
      this.lexer.next();
      const a = left.evaluate;
      const b = this.parseAnd().evaluate;
      left = { evaluate: (scope) => isTruthy(a(scope)) || isTruthy(b(scope)) };
    }
    this.depth--;
    return left;
  }

  private parseAnd(): Node {
    let left = this.parseNot();
    while (this.isWord(this.lexer.peek(), 'and')) {
      this.lexer.next();
      const a = left.evaluate;
      const b = this.parseNot().evaluate;
      left = { evaluate: (scope) => isTruthy(a(scope)) && isTruthy(b(scope)) };
    }
    return left;
  }

  private parseNot(): Node {
    if (this.isWord(this.lexer.peek(), 'not')) {
      this.lexer.next();
      if (++this.depth > MAX_DEPTH)
        this.fail(this.lexer.peek(), `at most ${MAX_DEPTH} levels of nesting`);
      const inner = this.parseNot().evaluate;
      this.depth--;
      return { evaluate: (scope) => !isTruthy(inner(scope)) };
    }
    return this.parseCompare();
  }

  private parseCompare(): Node {
    const left = this.parsePrimary();
    const token = this.lexer.peek();
    let op: string;
    if (token.kind === 'op') {
      op = token.value;
      this.lexer.next();
    } else if (this.isWord(token, 'in')) {
      op = 'in';
      this.lexer.next();
    } else if (this.isWord(token, 'not')) {
      this.lexer.next();
      const after = this.lexer.next();
      if (!this.isWord(after, 'in')) this.fail(after, "'in' after 'not'");
      op = 'not in';
    } else {
      return left;
    }
    const a = left.evaluate;
    const b = this.parsePrimary().evaluate;
    switch (op) {
      case '==':
        return { evaluate: (scope) => valuesEqual(a(scope), b(scope)) };
      case '!=':
        return { evaluate: (scope) => !valuesEqual(a(scope), b(scope)) };
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const ordering = op;
        return { evaluate: (scope) => compareValues(a(scope), b(scope), ordering) };
      }
      case 'in':
        return { evaluate: (scope) => containsValue(b(scope), a(scope)) };
      default:
        return { evaluate: (scope) => !containsValue(b(scope), a(scope)) };
    }
  }

  private parsePrimary(): Node {
    const token = this.lexer.next();
    switch (token.kind) {
      case 'num':
        return constant(token.value);
      case 'str':
        if (this.placeholders && token.value.includes('${')) {
          this.fail(token, 'a placeholder without quotes (${...} is a value here, not text)');
        }
        return constant(token.value);
      case 'ident':
        return this.parseWord(token.value, token);
      case 'punct':
        if (token.value === '(') {
          const inner = this.parseOr();
          this.expectPunct(')', "')'");
          return inner;
        }
        if (token.value === '[') return this.parseList();
        if (token.value === '${') return this.parsePlaceholder(token);
        return this.fail(token, 'a value, a path, a list or (');
      case 'seg':
      case 'op':
      case 'end':
        return this.fail(token, 'a value, a path, a list or (');
      default: {
        const never: never = token;
        return never;
      }
    }
  }

  private parseWord(word: string, token: Token): Node {
    if (Object.hasOwn(LITERALS, word)) return constant(LITERALS[word]);
    if ((ROOTS as readonly string[]).includes(word)) return this.parsePath(word as Root, token);
    if (this.isPunct(this.lexer.peek(), '(')) {
      if (word !== 'coalesce') this.fail(token, 'a known function (only coalesce)');
      return this.parseCoalesce();
    }
    return this.fail(token, 'inputs.…, steps.…, context.…, a literal or coalesce(…)');
  }

  private parsePlaceholder(open: Token): Node {
    if (this.inPlaceholder) this.fail(open, 'a value (a placeholder inside a placeholder)');
    this.inPlaceholder = true;
    const inner = this.parseOr();
    this.expectPunct('}', "an operator or '}' closing the placeholder");
    this.inPlaceholder = false;
    return inner;
  }

  private parseList(): Node {
    const items: Node[] = [];
    if (this.isPunct(this.lexer.peek(), ']')) {
      this.lexer.next();
    } else {
      for (;;) {
        items.push(this.parseOr());
        const sep = this.lexer.next();
        if (this.isPunct(sep, ']')) break;
        if (!this.isPunct(sep, ',')) this.fail(sep, "',' or ']'");
      }
    }
    const evaluators = items.map((item) => item.evaluate);
    return { evaluate: (scope) => evaluators.map((evaluate) => evaluate(scope)) };
  }

  private parseCoalesce(): Node {
    this.lexer.next();
    const args: Evaluator[] = [this.parseOr().evaluate];
    for (;;) {
      const sep = this.lexer.next();
      if (this.isPunct(sep, ')')) break;
      if (!this.isPunct(sep, ',')) this.fail(sep, "',' or ')'");
      args.push(this.parseOr().evaluate);
    }
    return {
      evaluate: (scope) => {
        for (const arg of args) {
          const value = arg(scope);
          if (value !== null && value !== undefined) return value;
        }
        return null;
      },
    };
  }

  private parsePath(root: Root, rootToken: Token): Node {
    const segments: (string | number)[] = [];
    for (;;) {
      const token = this.lexer.peek();
      if (this.isPunct(token, '.')) {
        this.lexer.next();
        const seg = this.lexer.next();
        if (seg.kind !== 'seg') this.fail(seg, 'a name after "."');
        segments.push(seg.value);
      } else if (this.isPunct(token, '[')) {
        this.lexer.next();
        const key = this.lexer.next();
        if (key.kind !== 'num' && key.kind !== 'str') this.fail(key, 'a number or a quoted key');
        if (key.kind === 'num' && !Number.isInteger(key.value)) this.fail(key, 'an integer index');
        segments.push(key.value);
        this.expectPunct(']', "']'");
      } else {
        break;
      }
    }
    this.checkPath(root, segments, rootToken);
    const first = segments[0];
    if (first !== undefined) this.refs[root].add(String(first));
    // `item` alone is a reference too: validation allows it only in a map step's inputs.
    else if (root === 'item') this.refs.item.add('');
    return pathNode(root, segments);
  }

  /** `steps` paths must name a step and then its `outputs` or `status`. */
  private checkPath(root: Root, segments: readonly (string | number)[], rootToken: Token): void {
    if (root !== 'steps') return;
    const field = segments[1];
    if (segments.length === 0 || typeof segments[0] !== 'string') {
      this.fail(this.lexer.peek(), "a step name after 'steps.'");
    }
    if (field !== 'outputs' && field !== 'status') {
      throw new ExpressionError(
        rootToken.pos,
        `steps.${String(segments[0])}.outputs… or steps.${String(segments[0])}.status`,
        field === undefined ? 'nothing after the step name' : `'${String(field)}'`,
      );
    }
    if (field === 'status' && segments.length > 2) {
      throw new ExpressionError(rootToken.pos, 'nothing after .status', `'${String(segments[2])}'`);
    }
  }
}
