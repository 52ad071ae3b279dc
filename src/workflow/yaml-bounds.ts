/**
 * Checks that keep a YAML document from costing more than its size: nesting depth and the number
 * of aliases before the parser runs, and the size and alias expansions of the document once its
 * aliases are expanded, before it is turned into data. All are linear in the text; they are
 * iterative or bounded by the depth check: none can overflow the stack.
 */
import {
  Lexer,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  visit,
  type Alias,
  type Document,
  type Node,
} from 'yaml';

/** Where a document first nests deeper than allowed (1-based line and column). */
export interface DepthExcess {
  line: number;
  col: number;
}

/** What a scan of the text found over its bounds: nesting (where) or aliases (how many seen). */
export type YamlTextExcess = ({ kind: 'depth' } & DepthExcess) | { kind: 'aliases'; count: number };

/** CST control tokens the lexer adds (document, flow end, scalar): not text of the source. */
const SCALAR = '\x1f';
const CONTROL_TOKENS = new Set(['\x02', '\x18', SCALAR]);
const BLANK = /^[ \t]+$/;

/**
 * Scans `text` with the YAML lexer (linear, not recursive) and returns where nesting first goes
 * past `maxDepth`, or that it holds more than `maxAliases` aliases, else undefined. Counting
 * aliases here refuses a document of 100 000 aliases before the parser spends most of a second
 * building their nodes. The lexer marks every scalar with a control token before it, so `*x` in
 * a quoted or block scalar is not counted. Flow collections (`[`, `{`) count exactly; block collections
 * count once per deeper indentation column (a block sequence at its parent key's column is not
 * counted, so the real depth is at most twice the counted one: still far from the parser's
 * stack limit).
 */
export function scanYamlText(
  text: string,
  maxDepth: number,
  maxAliases: number,
): YamlTextExcess | undefined {
  let aliases = 0;
  let previous = '';
  let flow = 0;
  let block: number[] = [];
  let line = 1;
  let col = 0;
  let lineStart = true;
  for (const token of new Lexer().lex(text)) {
    const afterScalarMark = previous === SCALAR;
    previous = token;
    if (CONTROL_TOKENS.has(token)) continue;
    if (token.startsWith('*') && !afterScalarMark && ++aliases > maxAliases) {
      return { kind: 'aliases', count: aliases };
    }
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
    if (block.length + flow > maxDepth) return { kind: 'depth', line, col: col + 1 };
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

/** {@link scanYamlText} for nesting alone. */
export function yamlDepthExcess(text: string, maxDepth: number): DepthExcess | undefined {
  const excess = scanYamlText(text, maxDepth, Number.POSITIVE_INFINITY);
  return excess?.kind === 'depth' ? { line: excess.line, col: excess.col } : undefined;
}

/** The alias nodes of a document, each with the node it stands for (undefined: no anchor). */
type AliasTargets = Map<Alias, Node | undefined>;

/**
 * Resolves every alias in one walk, in document order, to the last node anchored with its name
 * before it (yaml's own rule). `Alias.resolve(document)` walks the whole document per alias: 16 000
 * aliases took 24 s that way, 100 000 more than 15 minutes.
 */
function aliasTargets(document: Document): AliasTargets {
  const latest = new Map<string, Node>();
  const targets: AliasTargets = new Map();
  visit(document, {
    Node(_key, node) {
      if (isAlias(node)) targets.set(node, latest.get(node.source));
      else if (node.anchor !== undefined) latest.set(node.anchor, node);
    },
  });
  return targets;
}

/** What a document's data comes to once its aliases are expanded. */
export interface ExpandedYaml {
  /** Size as compact JSON (above the byte cap: measuring stopped there). */
  bytes: number;
  /** Aliases met while expanding, an alias inside an anchor once per use (above the cap: stopped). */
  expansions: number;
}

/**
 * Size of the document's data as compact JSON once aliases are expanded, and the number of alias
 * expansions, counting each alias as its anchor's value. Both are memoised per node, and each
 * alias is resolved once in {@link aliasTargets}, so the whole measure is linear in the document.
 * Stops with numbers above the caps as soon as either is passed; an alias inside its own anchor
 * (infinite when expanded) counts as above both. Recursion is bounded by the depth check that
 * runs before parsing and by the alias count.
 */
export function expandedYaml(
  document: Document,
  caps: { bytes: number; expansions: number },
): ExpandedYaml {
  const targets = aliasTargets(document);
  const known = new Map<unknown, ExpandedYaml>();
  const visiting = new Set<unknown>();
  const over: ExpandedYaml = { bytes: caps.bytes + 1, expansions: caps.expansions + 1 };
  const leaf = (bytes: number): ExpandedYaml => ({ bytes, expansions: 0 });

  const measure = (node: unknown): ExpandedYaml => {
    if (node === null || node === undefined) return leaf(4);
    const memo = known.get(node);
    if (memo !== undefined) return memo;
    if (isAlias(node)) {
      const target = targets.get(node);
      if (target === undefined || visiting.has(target)) return over;
      const expanded = measure(target);
      return { bytes: expanded.bytes, expansions: expanded.expansions + 1 };
    }
    if (isScalar(node)) {
      const value = node.value;
      return leaf(typeof value === 'string' ? value.length + 2 : String(value).length);
    }
    if (isPair(node)) {
      const key = measure(node.key);
      const value = measure(node.value);
      return { bytes: key.bytes + 1 + value.bytes, expansions: key.expansions + value.expansions };
    }
    if (!isMap(node) && !isSeq(node)) return leaf(4);
    visiting.add(node);
    let bytes = 2 + Math.max(0, node.items.length - 1);
    let expansions = 0;
    for (const item of node.items as unknown[]) {
      const expanded = measure(item);
      bytes += expanded.bytes;
      expansions += expanded.expansions;
      if (bytes > caps.bytes || expansions > caps.expansions) break;
    }
    visiting.delete(node);
    const result = {
      bytes: Math.min(bytes, over.bytes),
      expansions: Math.min(expansions, over.expansions),
    };
    known.set(node, result);
    return result;
  };

  return measure(document.contents);
}

/** {@link expandedYaml}'s size alone (expansions not bounded). */
export function expandedYamlSize(document: Document, cap: number): number {
  return expandedYaml(document, { bytes: cap, expansions: Number.MAX_SAFE_INTEGER - 1 }).bytes;
}
