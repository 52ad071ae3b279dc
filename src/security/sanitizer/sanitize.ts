import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { isSecretKeyName, isSecretPlaceholder } from './detectors/secrets.js';
import { classify } from './policy.js';
import { REDACTED, scanBatch } from './scan.js';
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
  /**
   * The raw body the value was parsed from (bytes as received, or text, hashed as UTF-8);
   * `input_hash` is taken over it when given, else over the value serialized as JSON.
   */
  raw?: string | Uint8Array;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * One step of a path: an array index, an object member, or the key itself of a member.
 * `owner` numbers the containing object in walk order, so a key can be recognised later.
 */
type Step =
  | { kind: 'index'; index: number }
  | { kind: 'member'; name: string; keyIndex: number; owner: number }
  | { kind: 'key'; keyIndex: number; owner: number };

/**
 * Sanitizes a decoded JSON value (or a plain string): collects every string value and every
 * object key, scans them in one batch, classifies by the policy table and redacts. Findings
 * carry the JSON path of the string (`$.input_data.notes`, `$.steps[2].inputs.prompt`); a
 * key with findings appears in paths as `[<key N>]` (its position in the object), so a
 * location never repeats the matched text.
 */
export function sanitize(value: unknown, options: SanitizeOptions = {}): SanitizationResult {
  const started = performance.now();
  const texts: string[] = [];
  const secretFields: number[] = [];

  // Pass 1: collect strings in a fixed order (each key, then its value; Object.keys order).
  // Nothing else is allocated per string: paths are only rebuilt for strings with findings.
  const collect = (node: unknown, depth: number): void => {
    if (typeof node === 'string') {
      texts.push(node);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth >= MAX_DEPTH) throw new SanitizerDepthError();
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i += 1) collect(node[i], depth + 1);
      return;
    }
    const source = node as Record<string, unknown>;
    // for-in visits own keys in Object.keys order without allocating the key array.
    for (const key in source) {
      if (!Object.hasOwn(source, key)) continue;
      texts.push(key);
      const item = source[key];
      if (typeof item === 'string' && isSecretKeyName(key) && !isSecretPlaceholder(item)) {
        secretFields.push(texts.length);
        texts.push(item);
      } else {
        collect(item, depth + 1);
      }
    }
  };
  collect(value, 0);

  const scan = scanBatch(texts);
  const findings: Finding[] = [];
  if (scan.spans.length > 0 || secretFields.length > 0) {
    const needed = new Set<number>(secretFields);
    for (const span of scan.spans) needed.add(span.index);
    const paths = locate(value, needed);
    // Keys with findings are hidden in every path, so collect them before formatting.
    const flaggedKeys = new Set<string>();
    for (const span of scan.spans) {
      const last = paths.get(span.index)?.at(-1);
      if (last?.kind === 'key') flaggedKeys.add(`${last.owner}:${last.keyIndex}`);
    }
    const seen = new Set<string>();
    const report = (
      index: number,
      category: Finding['category'],
      name: string,
      severity: Finding['severity'],
    ): void => {
      const location = formatPath(paths.get(index) ?? [], flaggedKeys);
      const id = `${location}\u0000${category}\u0000${name}`;
      if (seen.has(id)) return;
      seen.add(id);
      findings.push(Object.freeze({ category, pattern_name: name, location, severity }));
    };
    for (const span of scan.spans) {
      report(span.index, span.detector.category, span.detector.name, span.detector.severity);
    }
    for (const index of secretFields) {
      report(index, FINDING_CATEGORIES.CREDENTIAL, 'secret_named_field', SEVERITIES.HIGH);
      scan.cleaned[index] = REDACTED;
    }
  }
  const cleanedTexts = scan.cleaned;

  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  const classification = classify(findings);
  const blocked = classification === CLASSIFICATIONS.BLOCKED;
  const cleanedValue = blocked ? undefined : rebuild(value, cleanedTexts);
  const input_hash = createHash('sha256')
    .update(options.raw ?? serialize(value))
    .digest('hex');
  // cleaned_content is serialized on first read: the HTTP path never needs it.
  let content: string | null | undefined;
  const result = {
    classification,
    findings: Object.freeze(findings),
    cleaned_value: cleanedValue,
    input_hash,
    processing_time_ms: performance.now() - started,
  };
  Object.defineProperty(result, 'cleaned_content', {
    enumerable: true,
    get: (): string | null => (content ??= blocked ? null : serialize(cleanedValue)),
  });
  return Object.freeze(result) as SanitizationResult;
}

/**
 * Pass 2: the value with cleaned strings put back, walking in the collection order. Only
 * containers on the way to a changed string are copied; the input is never mutated.
 */
function rebuild(value: unknown, cleaned: readonly (string | undefined)[]): unknown {
  if (!cleaned.some((text) => text !== undefined)) return value;
  let cursor = 0;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const replacement = cleaned[cursor];
      cursor += 1;
      return replacement ?? node;
    }
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < node.length; i += 1) {
        const item: unknown = node[i];
        const next = walk(item);
        if (next !== item) {
          copy ??= node.slice();
          copy[i] = next;
        }
      }
      return copy ?? node;
    }
    const source = node as Record<string, unknown>;
    const entries: [string, unknown][] = [];
    const used = new Set<string>();
    let changed = false;
    for (const key of Object.keys(source)) {
      const cleanedKey = cleaned[cursor];
      cursor += 1;
      let outKey = key;
      if (cleanedKey !== undefined) {
        outKey = uniqueKey(cleanedKey, used, source);
        changed = true;
      }
      used.add(outKey);
      const item = source[key];
      const next = walk(item);
      if (next !== item) changed = true;
      entries.push([outKey, next]);
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
  return walk(value);
}

/** Pass 1 again, recording the path of each string whose batch index is in `needed`. */
function locate(value: unknown, needed: ReadonlySet<number>): Map<number, Step[]> {
  const found = new Map<number, Step[]>();
  const steps: Step[] = [];
  let cursor = 0;
  let owners = 0;
  const visit = (node: unknown): void => {
    if (typeof node === 'string') {
      if (needed.has(cursor)) found.set(cursor, steps.slice());
      cursor += 1;
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i += 1) {
        steps.push({ kind: 'index', index: i });
        visit(node[i]);
        steps.pop();
      }
      return;
    }
    owners += 1;
    const owner = owners;
    const source = node as Record<string, unknown>;
    const keys = Object.keys(source);
    for (let keyIndex = 0; keyIndex < keys.length; keyIndex += 1) {
      const name = keys[keyIndex] as string;
      if (needed.has(cursor)) found.set(cursor, [...steps, { kind: 'key', keyIndex, owner }]);
      cursor += 1;
      steps.push({ kind: 'member', name, keyIndex, owner });
      visit(source[name]);
      steps.pop();
    }
  };
  visit(value);
  return found;
}

function formatPath(steps: readonly Step[], flaggedKeys: ReadonlySet<string>): string {
  let out = '$';
  for (const step of steps) {
    switch (step.kind) {
      case 'index':
        out += `[${step.index}]`;
        break;
      case 'key':
        out += `[<key ${step.keyIndex}>]`;
        break;
      case 'member':
        if (flaggedKeys.has(`${step.owner}:${step.keyIndex}`)) out += `[<key ${step.keyIndex}>]`;
        else if (IDENTIFIER.test(step.name)) out += `.${step.name}`;
        else out += `[${JSON.stringify(step.name)}]`;
        break;
      default: {
        const exhaustive: never = step;
        throw new Error(`unknown step ${String(exhaustive)}`);
      }
    }
  }
  return out;
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
