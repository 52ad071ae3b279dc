/**
 * YAML text → plain data, with the limits a service needs (docs/limits.md): one document
 * only, unique keys, YAML 1.2 core schema (a custom tag such as `!!js/function` or
 * `!!python/object` is refused, not read as a string), a bound on the text's bytes, on its
 * nesting depth (checked before parsing) and on its size once aliases are expanded (checked
 * before it is materialised: billion-laughs documents).
 */
import { parseDocument, type YAMLError } from 'yaml';
import { ERROR_CODES, ValidationError, type ErrorDetail, type ErrorCode } from '../errors.js';
import {
  CONTENT_LIMIT_VARIABLES,
  DEFAULT_CONTENT_LIMITS,
  MAX_YAML_DEPTH,
  type ContentLimits,
} from './limits.js';
import { expandedYaml, scanYamlText } from './yaml-bounds.js';

/**
 * Aliases a document may hold, and alias expansions its data may take (an alias inside an anchor
 * counts each time the anchor is used); ordinary workflows use none or a few.
 */
export const MAX_ALIAS_COUNT = 100;

export interface ParseYamlOptions {
  /** First element of every error `loc`. @default 'yaml_text' */
  field?: string;
  /** Error code of the thrown ValidationError. @default ERROR_CODES.WORKFLOW_INVALID */
  code?: ErrorCode;
  /** Byte bounds of the text and of its expanded data. @default {@link DEFAULT_CONTENT_LIMITS} */
  limits?: Pick<ContentLimits, 'maxYamlBytes' | 'maxExpandedYamlBytes'>;
}

function firstLine(message: string): string {
  const line = message.split('\n', 1)[0] ?? message;
  // yaml appends " at line L, column C:"; the loc already carries the position.
  return line.replace(/ at line \d+, column \d+:?$/, '');
}

function detailOf(error: YAMLError, field: string): ErrorDetail {
  const pos = error.linePos?.[0];
  const loc: (string | number)[] = pos === undefined ? [field] : [field, pos.line, pos.col];
  const where = pos === undefined ? '' : ` (line ${pos.line}, column ${pos.col})`;
  const text =
    error.code === 'MULTIPLE_DOCS'
      ? 'several YAML documents (---) in one text; a workflow is exactly one document'
      : error.code === 'TAG_RESOLVE_FAILED'
        ? `${firstLine(error.message).replace('Unresolved tag', 'unsupported tag')} (only the YAML 1.2 core schema's tags are read)`
        : firstLine(error.message);
  return { loc, msg: `invalid YAML${where}: ${text}`, type: 'value_error.yaml' };
}

/** UTF-8 size of `text`, computed only when its length does not settle the comparison. */
function overBytes(text: string, max: number): number | undefined {
  if (text.length * 3 <= max) return undefined;
  const bytes = text.length > max ? text.length : Buffer.byteLength(text);
  return bytes > max ? bytes : undefined;
}

/**
 * Parses workflow YAML. Throws {@link ValidationError} (code `workflow_invalid` unless told
 * otherwise) with `loc: [field, line, column]` for a syntax error, a duplicate key, several
 * documents, a custom tag or too deep nesting, and `loc: [field]` for too many aliases or a
 * text or expanded document over its byte bound.
 */
export function parseWorkflowYaml(text: string, options: ParseYamlOptions = {}): unknown {
  const field = options.field ?? 'yaml_text';
  const code = options.code ?? ERROR_CODES.WORKFLOW_INVALID;
  const limits = options.limits ?? DEFAULT_CONTENT_LIMITS;
  const fail = (msg: string, loc: (string | number)[] = [field]): never => {
    throw new ValidationError(msg, [{ loc, msg, type: 'value_error.yaml' }], code);
  };
  if (typeof text !== 'string') {
    throw new ValidationError(
      'YAML text must be a string',
      [{ loc: [field], msg: 'YAML text must be a string', type: 'type_error' }],
      code,
    );
  }
  const bytes = overBytes(text, limits.maxYamlBytes);
  if (bytes !== undefined) {
    fail(
      `invalid YAML: ${bytes} bytes of text, more than ${limits.maxYamlBytes} (${CONTENT_LIMIT_VARIABLES.maxYamlBytes})`,
    );
  }
  const excess = scanYamlText(text, MAX_YAML_DEPTH, MAX_ALIAS_COUNT);
  if (excess?.kind === 'depth') {
    fail(
      `invalid YAML (line ${excess.line}, column ${excess.col}): nested more than ${MAX_YAML_DEPTH} levels deep`,
      [field, excess.line, excess.col],
    );
  }
  if (excess?.kind === 'aliases') fail(`invalid YAML: more than ${MAX_ALIAS_COUNT} aliases`);
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true, strict: true });
  const problems = [
    ...document.errors,
    ...document.warnings.filter((warning) => warning.code === 'TAG_RESOLVE_FAILED'),
  ];
  if (problems.length > 0) {
    const details = problems.map((error) => detailOf(error, field));
    throw new ValidationError(details[0]?.msg ?? 'invalid YAML', details, code);
  }
  const max = limits.maxExpandedYamlBytes;
  const expanded = expandedYaml(document, { bytes: max, expansions: MAX_ALIAS_COUNT });
  if (expanded.bytes > max) {
    fail(
      `invalid YAML: more than ${max} bytes once its aliases are expanded (${CONTENT_LIMIT_VARIABLES.maxExpandedYamlBytes})`,
    );
  }
  if (expanded.expansions > MAX_ALIAS_COUNT) {
    fail(`invalid YAML: more than ${MAX_ALIAS_COUNT} alias expansions`);
  }
  try {
    // Both alias bounds are checked above, linearly; yaml's own count (maxAliasCount) walks the
    // whole document again for each anchor it meets, so it is turned off.
    return document.toJS({ maxAliasCount: -1 });
  } catch (error) {
    return fail(
      `invalid YAML: ${error instanceof Error ? firstLine(error.message) : 'cannot be read'}`,
    );
  }
}
