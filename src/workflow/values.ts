/**
 * Value semantics shared by the expression language and the engines (ARCHITECTURE §5):
 * equality, ordering, membership and truthiness over JSON-like data. None of these throw for
 * well-formed data; a missing value is `null`.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep equality of JSON-like values; `null` and `undefined` are the same missing value. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) {
    return (a === null || a === undefined) && (b === null || b === undefined);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(b, key) || !valuesEqual(a[key], b[key])) return false;
    }
    return true;
  }
  return false;
}

/**
 * Ordering comparison: numbers with numbers, strings with strings; anything else (a missing
 * value included) yields false, never an exception.
 */
export function compareValues(a: unknown, b: unknown, op: '<' | '<=' | '>' | '>='): boolean {
  const comparable =
    (typeof a === 'number' && typeof b === 'number') ||
    (typeof a === 'string' && typeof b === 'string');
  if (!comparable) return false;
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default: {
      const never: never = op;
      return never;
    }
  }
}

/**
 * `needle in haystack`: element of a list (deep equality), substring of a string, or key of a
 * map. A missing haystack contains nothing.
 */
export function containsValue(haystack: unknown, needle: unknown): boolean {
  if (Array.isArray(haystack)) return haystack.some((item) => valuesEqual(item, needle));
  if (typeof haystack === 'string') return typeof needle === 'string' && haystack.includes(needle);
  if (isPlainObject(haystack)) return typeof needle === 'string' && Object.hasOwn(haystack, needle);
  return false;
}

/**
 * Truthiness for `when:`, `loop_until`, `and`, `or` and `not` (Python-like, as the service this
 * replaces): null, false, 0, NaN, '' and empty lists and maps are false; everything else true.
 */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Text of a value interpolated into a longer string: '' for missing, JSON for lists and maps. */
export function interpolationText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'object') return JSON.stringify(value) ?? '';
  return '';
}

/** A deep copy of JSON-like data, frozen, so a compiled constant can be shared safely. */
export function frozenCopy<T>(value: T): T {
  if (Array.isArray(value))
    return Object.freeze(value.map((item: unknown) => frozenCopy(item))) as T;
  if (isPlainObject(value)) {
    return Object.freeze(
      Object.fromEntries(Object.entries(value).map(([key, item]) => [key, frozenCopy(item)])),
    ) as T;
  }
  return value;
}
