import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { isSecretKeyName, isSecretPlaceholder } from './detectors/secrets.js';
import { classify } from './policy.js';
import { REDACTED, scanString } from './scan-string.js';
import {
  CLASSIFICATIONS,
  FINDING_CATEGORIES,
  SEVERITIES,
  SEVERITY_RANK,
  type Finding,
  type SanitizationResult,
} from './types.js';

/** Deeper input is refused outright rather than walked (see {@link SanitizerDepthError}). */
export const MAX_DEPTH = 128;

/** The input nests deeper than {@link MAX_DEPTH}: callers reject it (400), never fail open. */
export class SanitizerDepthError extends Error {
  constructor() {
    super(`Input nests deeper than ${MAX_DEPTH} levels`);
    this.name = 'SanitizerDepthError';
  }
}

export interface SanitizeOptions {
  /** The raw text the value was parsed from; `input_hash` is taken over it when given. */
  raw?: string;
}

/** A path step: property name, array index, or a key that had findings (by position). */
type Segment = string | number | { keyIndex: number };

/**
 * Sanitizes a decoded JSON value (or a plain string): walks every string value and every
 * object key, runs the detectors, classifies by the policy table and redacts. Findings
 * carry the JSON path of the string (`$.input_data.notes`, `$.steps[2].inputs.prompt`); a
 * key with findings appears in paths as `[<key N>]` (its N-th position in the object), so a
 * location never repeats the matched text.
 */
export function sanitize(value: unknown, options: SanitizeOptions = {}): SanitizationResult {
  const started = performance.now();
  const findings: Finding[] = [];
  const path: Segment[] = [];

  const report = (
    category: Finding['category'],
    patternName: string,
    severity: Finding['severity'],
    suffix?: Segment,
  ): void => {
    const location = formatPath(suffix === undefined ? path : [...path, suffix]);
    if (
      findings.some(
        (f) => f.location === location && f.pattern_name === patternName && f.category === category,
      )
    ) {
      return;
    }
    findings.push(Object.freeze({ category, pattern_name: patternName, location, severity }));
  };

  const cleanString = (text: string, suffix?: Segment): string => {
    const scan = scanString(text);
    for (const span of scan.spans) {
      report(span.detector.category, span.detector.name, span.detector.severity, suffix);
    }
    return scan.cleaned;
  };

  const walk = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') return cleanString(node);
    if (node === null || typeof node !== 'object') return node;
    if (depth >= MAX_DEPTH) throw new SanitizerDepthError();
    if (Array.isArray(node)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < node.length; i += 1) {
        path.push(i);
        const item: unknown = node[i];
        const cleaned = walk(item, depth + 1);
        path.pop();
        if (cleaned !== item) {
          copy ??= node.slice();
          copy[i] = cleaned;
        }
      }
      return copy ?? node;
    }
    const source = node as Record<string, unknown>;
    const keys = Object.keys(source);
    let changed = false;
    const entries: [string, unknown][] = [];
    const used = new Set<string>();
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index] as string;
      const before = findings.length;
      let cleanedKey = cleanString(key, { keyIndex: index });
      const keyHadFindings = findings.length > before;
      if (cleanedKey !== key) {
        cleanedKey = uniqueKey(cleanedKey, used, source);
        changed = true;
      }
      used.add(cleanedKey);
      path.push(keyHadFindings ? { keyIndex: index } : key);
      const item = source[key];
      let cleaned: unknown;
      if (typeof item === 'string' && isSecretKeyName(key) && !isSecretPlaceholder(item)) {
        report(FINDING_CATEGORIES.CREDENTIAL, 'secret_named_field', SEVERITIES.HIGH);
        cleanString(item);
        cleaned = REDACTED;
      } else {
        cleaned = walk(item, depth + 1);
      }
      path.pop();
      if (cleaned !== item) changed = true;
      entries.push([cleanedKey, cleaned]);
    }
    if (!changed) return node;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of entries) {
      // defineProperty, not assignment: a `__proto__` key must stay a plain own property.
      Object.defineProperty(copy, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  };

  const cleanedValue = walk(value, 0);
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  const classification = classify(findings);
  const blocked = classification === CLASSIFICATIONS.BLOCKED;
  const input_hash = createHash('sha256')
    .update(options.raw ?? serialize(value))
    .digest('hex');
  return Object.freeze({
    classification,
    findings: Object.freeze(findings),
    cleaned_content: blocked ? null : serialize(cleanedValue),
    cleaned_value: blocked ? undefined : cleanedValue,
    input_hash,
    processing_time_ms: performance.now() - started,
  });
}

function serialize(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}

function uniqueKey(key: string, used: Set<string>, source: Record<string, unknown>): string {
  let candidate = key;
  for (let n = 2; used.has(candidate) || Object.hasOwn(source, candidate); n += 1) {
    candidate = `${key}_${n}`;
  }
  return candidate;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `$`, `.name`, `[3]`, `["odd key"]`, and `[<key N>]` for a key that had findings. */
export function formatPath(segments: readonly Segment[]): string {
  let out = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'object') out += `[<key ${segment.keyIndex}>]`;
    else if (IDENTIFIER.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
