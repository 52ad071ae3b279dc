/**
 * Strict checks for client-supplied run names in paths (spec: Safety controls 2). A name is
 * accepted only when it is already in NFKC form (full-width dots and other look-alikes are
 * rejected, not normalized into something else), holds no NUL, separator or `..`, and matches
 * the run-file or run-id pattern. Only then is it looked up, and only through the history index.
 */
import { RUN_FILE_NAME, RUN_ID } from '../store/history.js';

export type RunName = { kind: 'file'; name: string } | { kind: 'id'; name: string };

export function parseRunName(raw: string): RunName | undefined {
  if (raw.length === 0 || raw.length > 255) return undefined;
  if (raw.normalize('NFKC') !== raw) return undefined;
  if (/[\0/\\]/.test(raw) || raw.includes('..') || raw.includes('%')) return undefined;
  if (RUN_ID.test(raw)) return { kind: 'id', name: raw };
  if (RUN_FILE_NAME.test(raw)) return { kind: 'file', name: raw };
  return undefined;
}
