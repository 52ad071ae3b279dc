/**
 * YAML text → plain data, with the limits a service needs: one document only, unique keys,
 * YAML 1.2 core schema (no custom tags), a cap on alias expansion (billion-laughs documents).
 */
import { parseDocument, type YAMLError } from 'yaml';
import { ERROR_CODES, ValidationError, type ErrorDetail, type ErrorCode } from '../errors.js';

/** Aliases a document may expand; ordinary workflows use none or a few. */
export const MAX_ALIAS_COUNT = 100;

export interface ParseYamlOptions {
  /** First element of every error `loc`. @default 'yaml_text' */
  field?: string;
  /** Error code of the thrown ValidationError. @default ERROR_CODES.WORKFLOW_INVALID */
  code?: ErrorCode;
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
      : firstLine(error.message);
  return { loc, msg: `invalid YAML${where}: ${text}`, type: 'value_error.yaml' };
}

/**
 * Parses workflow YAML. Throws {@link ValidationError} (code `workflow_invalid` unless told
 * otherwise) with `loc: [field, line, column]` for a syntax error, a duplicate key, several
 * documents or too many aliases.
 */
export function parseWorkflowYaml(text: string, options: ParseYamlOptions = {}): unknown {
  const field = options.field ?? 'yaml_text';
  const code = options.code ?? ERROR_CODES.WORKFLOW_INVALID;
  if (typeof text !== 'string') {
    throw new ValidationError(
      'YAML text must be a string',
      [{ loc: [field], msg: 'YAML text must be a string', type: 'type_error' }],
      code,
    );
  }
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true, strict: true });
  if (document.errors.length > 0) {
    const details = document.errors.map((error) => detailOf(error, field));
    throw new ValidationError(details[0]?.msg ?? 'invalid YAML', details, code);
  }
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const msg = `invalid YAML: ${error instanceof Error ? firstLine(error.message) : 'cannot be read'}`;
    throw new ValidationError(msg, [{ loc: [field], msg, type: 'value_error.yaml' }], code);
  }
}
