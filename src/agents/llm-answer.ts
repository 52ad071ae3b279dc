/**
 * Reading a model's answer into a step's outputs: a JSON object (bare, or in a fenced code
 * block, or the first `{...}` in prose) fills the declared output keys.
 */
import { AppError, ERROR_CODES } from '../errors.js';

const FENCE = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/;

/** The answer's JSON object, or undefined when it holds none. */
export function jsonAnswer(text: string): Record<string, unknown> | undefined {
  const candidates: string[] = [text.trim()];
  const fenced = FENCE.exec(text);
  if (fenced?.[1] !== undefined) candidates.push(fenced[1].trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first !== -1 && last > first) candidates.push(text.slice(first, last + 1));
  for (const candidate of candidates) {
    if (!candidate.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(candidate);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        return value as Record<string, unknown>;
      }
    } catch {
      // Not this candidate; try the next form.
    }
  }
  return undefined;
}

/**
 * The step output of an answer: the JSON object's fields plus `raw_response`. `required` are
 * the step's declared output keys: an answer missing one fails the attempt (retried per
 * `max_attempts`), except that a plain-text answer fills a single declared key.
 */
export function outputsFromAnswer(
  text: string,
  fields: Record<string, unknown> | undefined,
  required: readonly string[],
): Record<string, unknown> {
  const parsed = jsonAnswer(text);
  const output: Record<string, unknown> = { ...parsed, ...fields, raw_response: text };
  const missing = required.filter((key) => output[key] === undefined);
  if (missing.length === 0) return output;
  if (parsed === undefined && fields === undefined && required.length === 1) {
    output[required[0] ?? ''] = text;
    return output;
  }
  const why =
    parsed === undefined
      ? 'the answer is not a JSON object'
      : `the JSON answer has no ${missing.map((key) => `"${key}"`).join(', ')}`;
  throw new AppError(
    ERROR_CODES.LLM_OUTPUT,
    `model answer cannot fill the declared outputs (${required.join(', ')}): ${why}`,
    { status: 502, expose: true },
  );
}
