/**
 * The input types of ARCHITECTURE §5 (`string, integer, number, boolean, object, array`):
 * strict checks (no coercion: "5" is not an integer) and how values read in messages.
 */
import type { InputType } from './types.js';
import { isPlainObject } from './values.js';

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
