/**
 * Sizes of JSON-like values and truncation markers (docs/limits.md). A value over its bound is
 * never dropped: it is replaced by a marker `{"__truncated__": true, "bytes": N, "preview": …}`
 * that says what was there, and the object that held it carries the keys it lost (see
 * {@link truncatedKeys}) so the run record and the log can warn.
 */
import { isPlainObject } from './values.js';

/** The marker's flag key. */
export const TRUNCATED_FLAG = '__truncated__';
/** Characters of a value kept in its marker's `preview`. */
export const PREVIEW_CHARS = 200;
/** Sizes are measured up to this multiple of the bound (a marker's `bytes` is then "at least"). */
const MEASURE_FACTOR = 16;

const TRUNCATED_KEYS = Symbol('truncatedKeys');
/** Why a value was truncated, when not by the step I/O bound (see {@link truncationReason}). */
const TRUNCATION_REASON = Symbol('truncationReason');

/** A value replaced by its marker (a type alias: assignable to `Record<string, unknown>`). */
export type TruncationMarker = {
  [TRUNCATED_FLAG]: true;
  /** Size of the value (JSON bytes, counted up to 16 times the bound it exceeded). */
  bytes: number;
  /** The start of the value's text (strings), or what it was (a list of N items). */
  preview: string;
};

/**
 * Approximate size of `value` as compact JSON: string escapes are not counted and non-ASCII
 * text counts one per UTF-16 unit. Stops as soon as the size passes `cap` (returns a number above
 * it) so a huge or shared-reference value costs no more than `cap` to measure. Iterative: a
 * deeply nested value cannot overflow the stack.
 */
export function jsonSize(value: unknown, cap: number): number {
  let size = 0;
  // The stack is made on the first container with entries: most values a run record or the
  // held-bytes budget measures are null, strings or empty objects (no array per call).
  let stack: unknown[] | undefined;
  let item = value;
  for (;;) {
    if (typeof item === 'string') size += item.length + 2;
    else if (typeof item === 'number') size += Number.isFinite(item) ? String(item).length : 4;
    else if (typeof item === 'boolean') size += item ? 4 : 5;
    else if (Array.isArray(item)) {
      size += 1 + Math.max(1, item.length);
      for (let i = 0; i < item.length; i++) (stack ??= []).push(item[i]);
    } else if (isPlainObject(item)) {
      // Braces, then `"key":` per entry and a comma before each but the first.
      size += 2;
      let entries = 0;
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue;
        size += key.length + (entries++ === 0 ? 3 : 4);
        (stack ??= []).push(item[key]);
      }
    } else size += 4;
    if (size > cap || stack === undefined || stack.length === 0) return size;
    item = stack.pop();
  }
}

/**
 * The first {@link PREVIEW_CHARS} characters of `value` as JSON (a string's own text), built
 * without serialising the whole value: it stops once the preview is long enough, and writes
 * `…` for what lies deeper than a few levels.
 */
function previewOf(value: unknown): string {
  if (typeof value === 'string') return value.slice(0, PREVIEW_CHARS);
  let out = '';
  const write = (item: unknown, depth: number): void => {
    if (out.length >= PREVIEW_CHARS) return;
    if (typeof item === 'string') out += JSON.stringify(item.slice(0, PREVIEW_CHARS - out.length));
    else if (Array.isArray(item) || isPlainObject(item)) {
      if (depth >= 8) {
        out += '…';
        return;
      }
      const list = Array.isArray(item);
      const entries: [string, unknown][] = list
        ? item.slice(0, PREVIEW_CHARS).map((element: unknown, i) => [String(i), element])
        : Object.entries(item);
      out += list ? '[' : '{';
      for (let i = 0; i < entries.length; i++) {
        if (out.length >= PREVIEW_CHARS) return;
        if (i > 0) out += ',';
        const [key, element] = entries[i]!;
        if (!list) out += `${JSON.stringify(key)}:`;
        write(element, depth + 1);
      }
      out += list ? ']' : '}';
    } else out += typeof item === 'number' || typeof item === 'boolean' ? String(item) : 'null';
  };
  write(value, 0);
  return out.slice(0, PREVIEW_CHARS);
}

/**
 * The marker that replaces `value`, which exceeded `bound`. Its size is measured up to
 * `measureCap` (default 16 times the bound); `reason` says which bound, when not the step I/O
 * bound (read back with {@link truncationReason}; not serialised).
 */
export function truncationMarker(
  value: unknown,
  bound: number,
  reason?: string,
  measureCap: number = bound * MEASURE_FACTOR,
): TruncationMarker {
  const marker: TruncationMarker = {
    [TRUNCATED_FLAG]: true,
    bytes: jsonSize(value, measureCap),
    preview: previewOf(value),
  };
  if (reason !== undefined) {
    Object.defineProperty(marker, TRUNCATION_REASON, { value: reason, enumerable: false });
  }
  return marker;
}

/** Why `value` (a marker, or a record with markers) was truncated, when not by the step I/O bound. */
export function truncationReason(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as { [TRUNCATION_REASON]?: string })[TRUNCATION_REASON];
}

/** Whether `value` is a truncation marker. */
export function isTruncationMarker(value: unknown): value is TruncationMarker {
  return isPlainObject(value) && value[TRUNCATED_FLAG] === true;
}

/** The keys of `value` replaced by markers when it was bounded, or undefined. */
export function truncatedKeys(value: unknown): readonly string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as { [TRUNCATED_KEYS]?: readonly string[] })[TRUNCATED_KEYS];
}

const MARKER_SIZE = PREVIEW_CHARS + 64;

/**
 * `record` when its JSON size is at most `bound`; otherwise a copy whose biggest entries are
 * replaced by markers until it fits (the whole record becomes one marker when small entries alone
 * exceed the bound). The copy remembers the keys it lost ({@link truncatedKeys}) and, when given,
 * the `reason` ({@link truncationReason}); sizes are measured up to `measureCap`.
 */
export function boundRecord<T extends Record<string, unknown>>(
  record: T,
  bound: number,
  reason?: string,
  measureCap: number = bound * MEASURE_FACTOR,
): T | TruncationMarker {
  const cap = measureCap;
  if (jsonSize(record, bound) <= bound) return record;
  const entries = Object.entries(record).map(([key, value]) => ({
    key,
    value,
    size: key.length + 4 + jsonSize(value, cap),
  }));
  let total = 2 + entries.reduce((sum, entry) => sum + entry.size, 0);
  const lost: string[] = [];
  const replaced = new Map<string, TruncationMarker>();
  for (const entry of [...entries].sort((a, b) => b.size - a.size)) {
    if (total <= bound || entry.size <= MARKER_SIZE) break;
    replaced.set(entry.key, truncationMarker(entry.value, bound, reason, cap));
    total -= entry.size - MARKER_SIZE;
    lost.push(entry.key);
  }
  if (total > bound) return truncationMarker(record, bound, reason, cap);
  const bounded: Record<string, unknown> = {};
  for (const { key, value } of entries) {
    const kept = replaced.get(key) ?? value;
    // A `__proto__` key is an own data property (assignment would set the prototype).
    Object.defineProperty(bounded, key, {
      value: kept,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  Object.defineProperty(bounded, TRUNCATED_KEYS, { value: lost.sort(), enumerable: false });
  if (reason !== undefined) {
    Object.defineProperty(bounded, TRUNCATION_REASON, { value: reason, enumerable: false });
  }
  return bounded as T;
}
