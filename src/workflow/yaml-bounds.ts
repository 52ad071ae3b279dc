/**
 * Checks that keep a YAML document from costing more than its size: nesting depth before the
 * parser runs, and the size of the document once its aliases are expanded, before it is turned
 * into data. Both are iterative or bounded by the depth check: neither can overflow the stack.
 */
import { Lexer, isAlias, isMap, isPair, isScalar, isSeq, type Document } from 'yaml';

/** Where a document first nests deeper than allowed (1-based line and column). */
export interface DepthExcess {
  line: number;
  col: number;
}

/** CST control tokens the lexer adds (document, flow end, scalar): not text of the source. */
const CONTROL_TOKENS = new Set(['\x02', '\x18', '\x1f']);
const BLANK = /^[ \t]+$/;

/**
 * Scans `text` with the YAML lexer (linear, not recursive) and returns where nesting first goes
 * past `maxDepth`, else undefined. Flow collections (`[`, `{`) count exactly; block collections
 * count once per deeper indentation column (a block sequence at its parent key's column is not
 * counted, so the real depth is at most twice the counted one: still far from the parser's
 * stack limit).
 */
export function yamlDepthExcess(text: string, maxDepth: number): DepthExcess | undefined {
  let flow = 0;
  let block: number[] = [];
  let line = 1;
  let col = 0;
  let lineStart = true;
  for (const token of new Lexer().lex(text)) {
    if (CONTROL_TOKENS.has(token)) continue;
    if (token === '\n' || token === '\r\n') {
      line++;
      col = 0;
      lineStart = true;
      continue;
    }
    if (BLANK.test(token) || token.startsWith('#')) {
      col += token.length;
      continue;
    }
    if (flow === 0) {
      if (lineStart && col === 0 && (token === '---' || token === '...')) block = [];
      else if (lineStart || token === '-' || token === '?') {
        while (block.length > 0 && block[block.length - 1]! > col) block.pop();
        if (block.length === 0 || block[block.length - 1]! < col) block.push(col);
      }
    }
    if (token === '[' || token === '{') flow++;
    else if ((token === ']' || token === '}') && flow > 0) flow--;
    if (block.length + flow > maxDepth) return { line, col: col + 1 };
    const last = token.lastIndexOf('\n');
    if (last >= 0) {
      for (let at = token.indexOf('\n'); at >= 0; at = token.indexOf('\n', at + 1)) line++;
      col = token.length - last - 1;
      lineStart = col === 0;
    } else {
      col += token.length;
      lineStart = false;
    }
  }
  return undefined;
}

/**
 * Size of the document's data as compact JSON once aliases are expanded, counting each alias as
 * the size of its anchor's value (memoised: a chain of aliases costs one visit per node). Stops
 * and returns a number above `cap` as soon as the size passes it; an alias inside its own anchor
 * (infinite when expanded) counts as above `cap`. Recursion is bounded by the depth check that
 * runs before parsing.
 */
export function expandedYamlSize(document: Document, cap: number): number {
  const sizes = new Map<unknown, number>();
  const visiting = new Set<unknown>();
  const over = cap + 1;

  const sizeOf = (node: unknown): number => {
    if (node === null || node === undefined) return 4;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (isAlias(node)) {
      const target = node.resolve(document);
      if (target === undefined || visiting.has(target)) return over;
      return sizeOf(target);
    }
    if (isScalar(node)) {
      const value = node.value;
      return typeof value === 'string' ? value.length + 2 : String(value).length;
    }
    if (isPair(node)) return sizeOf(node.key) + 1 + sizeOf(node.value);
    if (!isMap(node) && !isSeq(node)) return 4;
    visiting.add(node);
    let size = 2 + Math.max(0, node.items.length - 1);
    for (const item of node.items as unknown[]) {
      size += sizeOf(item);
      if (size > cap) break;
    }
    visiting.delete(node);
    const result = Math.min(size, over);
    sizes.set(node, result);
    return result;
  };

  return sizeOf(document.contents);
}
