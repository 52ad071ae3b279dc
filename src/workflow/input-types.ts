/**
 * The input types of ARCHITECTURE §5 (`string, integer, number, boolean, object, array`):
 * strict checks (for defaults and enums: "5" is not an integer), the coercion of run inputs
 * that form clients send as strings, and how values read in messages.
 */
import type { InputType } from './types.js';
import { isPlainObject } from './values.js';

/** Decimal integer text: optional sign, digits (no exponent, point, hex or separators). */
const INTEGER_TEXT = /^[+-]?\d+$/;
/** Decimal number text as JSON and YAML write it, plus a leading `+` or `.`. */
const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A run input as the workflow's type wants it: form clients (the Python service's web UI) send
 * every scalar as a string, so for `integer`, `number` and `boolean` inputs a string converts
 * when it is exactly such a value, surrounding white space aside: `"40"` → 40, `"-1.5e3"` →
 * -1500, `"TRUE"`/`"false"` → true/false (any case). Anything else stays as given and then fails
 * {@link matchesInputType}: `"4x"`, `"1.5"` for an integer, an integer beyond ±2^53 (it would
 * not survive as a number), `""`, `"NaN"`, `"0x10"`, and `"1"`/`"0"`/`"yes"` for a boolean (a
 * mistyped number must not pass as a flag). Other types and non-strings are never converted.
 */
export function coerceInput(value: unknown, type: InputType): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  switch (type) {
    case 'integer': {
      if (!INTEGER_TEXT.test(text)) return value;
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : value;
    }
    case 'number': {
      if (!NUMBER_TEXT.test(text)) return value;
      const n = Number(text);
      return Number.isFinite(n) ? n : value;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : value;
    }
    case 'string':
    case 'object':
    case 'array':
      return value;
    default: {
      const never: never = type;
      return never;
    }
  }
}

export function matchesInputType(value: unknown, type: InputType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    default: {
      const never: never = type;
      return never;
    }
  }
}

const TYPE_LABELS: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};

/** `'integer'` → `'an integer'`; JSON Schema type names too. */
export function typeLabel(type: string): string {
  return TYPE_LABELS[type] ?? type;
}

/** What a value is, for messages ("got a string"). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** A short rendering of a value for messages. */
export function showValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
