import type { Agent } from '../types.js';
import { textInput } from './text-input.js';

/** A named definition found in source text, with its 1-based line. */
export interface SourceSymbol {
  name: string;
  line: number;
}

/** What {@link parseSource} finds. */
export interface ParsedSource {
  language: 'python' | 'javascript';
  functions: SourceSymbol[];
  classes: SourceSymbol[];
  imports: string[];
  metrics: {
    total_lines: number;
    code_lines: number;
    blank_lines: number;
    comment_lines: number;
  };
}

const PY_FUNCTION = /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/;
const PY_CLASS = /^\s*class\s+([A-Za-z_]\w*)\s*[(:]/;
const PY_IMPORT = /^\s*(?:from\s+([\w.]+)\s+import\s+|import\s+([\w.]+))/;
const JS_FUNCTION = [
  /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*[<(]/,
  /^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)/,
];
const JS_CLASS = /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/;
const JS_IMPORT = [
  /^\s*import\s+(?:type\s+)?(?:[^'"]*\s+from\s+)?['"]([^'"]+)['"]/,
  /\brequire\(\s*['"]([^'"]+)['"]\s*\)/,
];

/**
 * Regex-level structure of Python or JavaScript/TypeScript source: functions, classes, imports
 * and line metrics. Not a parser of the full grammars; good enough for summaries and demos.
 */
export function parseSource(text: string, language?: string): ParsedSource {
  const lang = detectLanguage(text, language);
  const lines = text === '' ? [] : text.split(/\r?\n/);
  const result: ParsedSource = {
    language: lang,
    functions: [],
    classes: [],
    imports: [],
    metrics: { total_lines: lines.length, code_lines: 0, blank_lines: 0, comment_lines: 0 },
  };
  let inBlockComment = false;
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') {
      result.metrics.blank_lines++;
      return;
    }
    if (lang === 'javascript') {
      if (inBlockComment || trimmed.startsWith('/*')) {
        result.metrics.comment_lines++;
        inBlockComment = !trimmed.includes('*/');
        return;
      }
      if (trimmed.startsWith('//')) {
        result.metrics.comment_lines++;
        return;
      }
    } else if (trimmed.startsWith('#')) {
      result.metrics.comment_lines++;
      return;
    }
    result.metrics.code_lines++;
    scanLine(line, i + 1, lang, result);
  });
  return result;
}

function scanLine(line: string, lineNo: number, lang: ParsedSource['language'], out: ParsedSource) {
  if (lang === 'python') {
    const fn = PY_FUNCTION.exec(line);
    if (fn?.[1] !== undefined) out.functions.push({ name: fn[1], line: lineNo });
    const cls = PY_CLASS.exec(line);
    if (cls?.[1] !== undefined) out.classes.push({ name: cls[1], line: lineNo });
    const imp = PY_IMPORT.exec(line);
    const module = imp?.[1] ?? imp?.[2];
    if (module !== undefined) out.imports.push(module);
    return;
  }
  for (const pattern of JS_FUNCTION) {
    const fn = pattern.exec(line);
    if (fn?.[1] !== undefined) {
      out.functions.push({ name: fn[1], line: lineNo });
      break;
    }
  }
  const cls = JS_CLASS.exec(line);
  if (cls?.[1] !== undefined) out.classes.push({ name: cls[1], line: lineNo });
  for (const pattern of JS_IMPORT) {
    const imp = pattern.exec(line);
    if (imp?.[1] !== undefined) {
      out.imports.push(imp[1]);
      break;
    }
  }
}

function detectLanguage(text: string, language: string | undefined): ParsedSource['language'] {
  const named = language?.toLowerCase();
  if (named === 'python' || named === 'py') return 'python';
  if (named !== undefined && /^(javascript|js|typescript|ts|jsx|tsx|mjs|cjs)$/.test(named)) {
    return 'javascript';
  }
  if (/^\s*(?:async\s+)?def\s+\w+\s*\(|^\s*from\s+[\w.]+\s+import\s/m.test(text)) return 'python';
  return 'javascript';
}

/**
 * `tier0_parser`: source text (`inputs.text`/`code`/`source`, optional `inputs.language`) →
 * functions, classes, imports, line metrics and their counts.
 */
export const parserAgent: Agent = (request) => {
  const language = request.input.language;
  const parsed = parseSource(
    textInput(request.input),
    typeof language === 'string' ? language : undefined,
  );
  return Promise.resolve({
    output: {
      ...parsed,
      function_count: parsed.functions.length,
      class_count: parsed.classes.length,
      import_count: parsed.imports.length,
    },
    modelUsed: null,
    tokensUsed: null,
  });
};
