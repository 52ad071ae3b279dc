/**
 * The text a deterministic agent works on: `inputs.text`, else `inputs.code`, `inputs.source`
 * or `inputs.content`; non-strings are rendered as JSON, a missing value is the empty string.
 */
export function textInput(input: Record<string, unknown>): string {
  for (const key of ['text', 'code', 'source', 'content']) {
    const value = input[key];
    if (value === undefined || value === null) continue;
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  return '';
}
