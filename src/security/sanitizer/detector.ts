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
  /** Cheap whole-text test (`includes`-style); the pattern only runs when it passes. */
  readonly prefilter?: (text: string) => boolean;
  /**
   * Second opinion on a match (checksums, context); false drops it. `start` is where the
   * matched string begins in `text`, so context checks never look into a neighbour.
   */
  readonly validate?: (match: RegExpExecArray, text: string, start: number) => boolean;
  /**
   * For patterns that only find an anchor (e.g. the colons of an IPv6 address): grows the
   * match into the whole token within `[start, end)` of `text` and says whether the token
   * is a hit. The scan always resumes after the token, so a long run of anchors is walked
   * once, not once per anchor.
   */
  readonly refine?: (
    match: RegExpExecArray,
    text: string,
    start: number,
    end: number,
  ) => { from: number; to: number; hit: boolean };
}

/** Shorthand used by the detector tables. */
export function detector(
  name: string,
  category: FindingCategory,
  severity: Severity,
  pattern: RegExp,
  extra: Partial<Pick<Detector, 'group' | 'prefilter' | 'validate' | 'refine'>> = {},
): Detector {
  if (!pattern.global) throw new Error(`detector ${name}: pattern must be global`);
  if (extra.group !== undefined && !pattern.hasIndices) {
    throw new Error(`detector ${name}: a redaction group needs the d flag`);
  }
  return { name, category, severity, pattern, ...extra };
}
