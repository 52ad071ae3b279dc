import type { FindingCategory, Severity } from './types.js';

/**
 * One pattern detector. Patterns are compiled once at module load, use bounded quantifiers
 * only (no nested unbounded repetition, so no catastrophic backtracking) and are always
 * global. When `group` is set the pattern carries the `d` flag and only that capture group
 * is redacted (e.g. the password inside a connection string, not the host).
 */
export interface Detector {
  readonly name: string;
  readonly category: FindingCategory;
  readonly severity: Severity;
  readonly pattern: RegExp;
  readonly group?: number;
  /** Cheap whole-string test; the pattern only runs when it passes. */
  readonly prefilter?: (text: string) => boolean;
  /** Second opinion on a match (checksums, context); false drops the match. */
  readonly validate?: (match: RegExpExecArray, text: string) => boolean;
}

/** A matched span of a string and the detector that matched it. */
export interface Span {
  start: number;
  end: number;
  detector: Detector;
}

/** Runs one detector over `text`, appending its spans. */
export function runDetector(detector: Detector, text: string, out: Span[]): void {
  if (detector.prefilter && !detector.prefilter(text)) return;
  const pattern = detector.pattern;
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    if (match[0].length === 0) {
      pattern.lastIndex += 1;
      continue;
    }
    if (detector.validate && !detector.validate(match, text)) continue;
    const range = detector.group === undefined ? undefined : match.indices?.[detector.group];
    const start = range ? range[0] : match.index;
    const end = range ? range[1] : match.index + match[0].length;
    out.push({ start, end, detector });
  }
}

/** Shorthand used by the detector tables. */
export function detector(
  name: string,
  category: FindingCategory,
  severity: Severity,
  pattern: RegExp,
  extra: Partial<Pick<Detector, 'group' | 'prefilter' | 'validate'>> = {},
): Detector {
  if (!pattern.global) throw new Error(`detector ${name}: pattern must be global`);
  return { name, category, severity, pattern, ...extra };
}
