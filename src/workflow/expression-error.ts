/**
 * A syntax error in a `${...}` expression or a template. Raised only at compile time (load,
 * PUT, validate); compiled evaluators never throw.
 */
export class ExpressionError extends Error {
  /** Zero-based character offset in the text that was compiled. */
  readonly position: number;
  /** What the parser expected at {@link position}. */
  readonly expected: string;

  constructor(position: number, expected: string, found: string) {
    super(`at position ${position}: expected ${expected}, found ${found}`);
    this.name = 'ExpressionError';
    this.position = position;
    this.expected = expected;
  }
}
