/**
 * Reading a run's journal back once its owner is gone (start-up recovery, and the scale
 * finaliser of a dead worker's run). A journal is read only up to the run-record bound: its
 * size is checked first and at most `maxBytes + 1` bytes are ever read, so a journal left by an
 * older version or a runaway run (the fault campaign left 180 MB ones, whose folding aborted every
 * later start-up) cannot exhaust the heap. A journal over the bound, or with a line that is not a
 * journal line (only the last line may be partial: the process died mid-append), is renamed
 * aside with the {@link QUARANTINE_SUFFIX}, never deleted, with one warn log line; the run is
 * then recovered from its run file alone and its record says why in `extra.warnings`.
 */
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { FinishedMapItem, RunRecord, StepRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { CONTENT_LIMIT_VARIABLES } from '../workflow/limits.js';
import { journalFileName, type JournalLine } from './run-journal.js';
import { STEP_STATUS } from '../workflow/types.js';

/** Appended to the name of a journal set aside (`.<run file>.journal.quarantine`). */
export const QUARANTINE_SUFFIX = '.quarantine';

/** A journal line that is not one (or a journal that cannot be read as journal lines). */
export class JournalFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalFormatError';
  }
}

function isJournalLine(value: unknown): value is JournalLine {
  if (typeof value !== 'object' || value === null) return false;
  const line = value as Record<string, unknown>;
  if (line.full === true) return typeof line.bytes === 'number';
  if (!Number.isInteger(line.i)) return false;
  if (typeof line.started === 'string') return true;
  if (typeof line.item === 'object' && line.item !== null) {
    const item = line.item as Record<string, unknown>;
    return Number.isInteger(item.index) && Number.isInteger(item.attempts);
  }
  const step = line.step as Record<string, unknown> | undefined;
  return typeof step === 'object' && step !== null && typeof step.step_name === 'string';
}

/**
 * The lines of a journal's text. Throws {@link JournalFormatError} for a line that is not a
 * journal line, except a last line without its newline (an append cut short by the crash).
 */
export function parseJournal(text: string): JournalLine[] {
  const lines: JournalLine[] = [];
  const raws = text.split('\n');
  for (let n = 0; n < raws.length; n++) {
    const raw = raws[n]!;
    if (raw === '') continue;
    let line: unknown;
    try {
      line = JSON.parse(raw);
    } catch {
      if (n === raws.length - 1) break;
      throw new JournalFormatError(`line ${n + 1} is not JSON`);
    }
    if (!isJournalLine(line)) throw new JournalFormatError(`line ${n + 1} is not a journal line`);
    lines.push(line);
  }
  return lines;
}

/** Appends `warning` (when there is one) to the record's `extra.warnings`. */
export function withWarning(record: RunRecord, warning: string | undefined): RunRecord {
  if (warning === undefined) return record;
  const extra = (record.extra ?? {}) as Record<string, unknown>;
  const warnings = Array.isArray(extra.warnings) ? (extra.warnings as unknown[]) : [];
  return { ...record, extra: { ...extra, warnings: [...warnings, warning] } };
}

/**
 * Applies journal lines to the steps of a start record (later lines win). A journal stopped at
 * its bound (a `full` line) gives a warning: later progress was not journaled.
 */
export function foldJournalLines(
  record: RunRecord,
  lines: readonly JournalLine[],
): { record: RunRecord; warning: string | undefined } {
  const steps = [...record.steps];
  let full: number | undefined;
  /** Map items finished, by step index then item index (applied last, to unfinished steps). */
  let items: Map<number, Map<number, FinishedMapItem>> | undefined;
  for (const line of lines) {
    if ('full' in line) {
      full = line.bytes;
      continue;
    }
    const current = steps[line.i];
    if (current === undefined) continue;
    if ('item' in line) {
      items ??= new Map();
      let step = items.get(line.i);
      if (step === undefined) {
        step = new Map();
        items.set(line.i, step);
      }
      step.set(line.item.index, line.item);
    } else if ('step' in line) {
      if (line.step.step_name === current.step_name) steps[line.i] = line.step;
    } else if (current.status === STEP_STATUS.PENDING || current.status === STEP_STATUS.RUNNING) {
      // A started line of a later attempt (a resumed run) raises the count of attempts begun.
      const begun = Math.max(line.a ?? 1, attemptsBegun(current));
      steps[line.i] = {
        ...current,
        status: STEP_STATUS.RUNNING,
        start_time: current.start_time ?? line.started,
        retry_count: begun - 1,
        ...(begun > 1 || current.metadata.attempts !== undefined
          ? { metadata: { ...current.metadata, attempts: begun } }
          : {}),
      };
    }
  }
  if (items !== undefined) {
    for (const [i, finished] of items) {
      const current = steps[i]!;
      if (current.status !== STEP_STATUS.PENDING && current.status !== STEP_STATUS.RUNNING)
        continue;
      // The items a resumed run's start record carried, then those its journal adds.
      const merged = new Map<number, FinishedMapItem>();
      for (const item of current.metadata.finished_items ?? []) merged.set(item.index, item);
      for (const [index, item] of finished) merged.set(index, item);
      const list = [...merged.values()].sort((a, b) => a.index - b.index);
      steps[i] = { ...current, metadata: { ...current.metadata, finished_items: list } };
    }
  }
  return {
    record: { ...record, steps },
    warning:
      full === undefined
        ? undefined
        : `the run journal stopped at ${full} bytes (${CONTENT_LIMIT_VARIABLES.maxRunRecordBytes}): later step progress was not journaled`,
  };
}

/**
 * Attempts a step not yet finished had begun, as its record says: `metadata.attempts` (a resumed
 * run's start record counts the attempt it is about to make), else one per start time.
 */
export function attemptsBegun(step: StepRecord): number {
  const counted = step.metadata.attempts;
  if (typeof counted === 'number' && counted > 0) return counted;
  return step.start_time === null ? 0 : step.retry_count + 1;
}

/** What {@link readJournal} found. */
export type JournalRead =
  { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'over'; bytes: number };

/**
 * Reads the journal at `path`, never more than `maxBytes + 1` bytes of it (the size is checked
 * first; a file that grows meanwhile is still cut there). `none` when there is no journal.
 */
export async function readJournal(path: string, maxBytes: number): Promise<JournalRead> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) return { kind: 'over', bytes: size };
    const buffer = Buffer.allocUnsafe(size + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return { kind: 'over', bytes: length };
    return { kind: 'text', text: buffer.toString('utf8', 0, length) };
  } finally {
    await handle.close();
  }
}

export interface RecoverJournalOptions {
  runsDir: string;
  /** The run file whose journal this is. */
  runFile: string;
  /** Largest journal read (the run-record bound). */
  maxBytes: number;
  logger?: Logger | undefined;
}

/** The record with its journal folded in, and what became of the journal. */
export interface RecoveredJournal {
  record: RunRecord;
  /** `none`: no journal (or gone meanwhile); `quarantined`: set aside, see the module comment. */
  journal: 'none' | 'folded' | 'quarantined';
  /** What the record's `extra.warnings` should say about the journal (add it once bounded). */
  warning: string | undefined;
}

/** Folds the run's journal into `record`, or sets the journal aside (see the module comment). */
export async function recoverJournal(
  record: RunRecord,
  options: RecoverJournalOptions,
): Promise<RecoveredJournal> {
  const name = journalFileName(options.runFile);
  const path = join(options.runsDir, name);
  const read = await readJournal(path, options.maxBytes);
  let reason: string;
  if (read.kind === 'none') return { record, journal: 'none', warning: undefined };
  if (read.kind === 'over') {
    reason = `${read.bytes} bytes, over the ${options.maxBytes}-byte bound (${CONTENT_LIMIT_VARIABLES.maxRunRecordBytes})`;
  } else {
    try {
      return { ...foldJournalLines(record, parseJournal(read.text)), journal: 'folded' };
    } catch (error) {
      if (!(error instanceof JournalFormatError)) throw error;
      reason = `unreadable: ${error.message}`;
    }
  }
  const aside = `${name}${QUARANTINE_SUFFIX}`;
  try {
    await rename(path, join(options.runsDir, aside));
  } catch (error) {
    // Taken meanwhile by another recovering process: it repairs the run.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { record, journal: 'none', warning: undefined };
    }
    throw error;
  }
  options.logger?.warn(
    { file: options.runFile, journal: aside, reason },
    "run journal quarantined; the run is marked interrupted without its steps' progress",
  );
  return {
    record,
    journal: 'quarantined',
    warning: `run journal set aside as ${aside} (${reason}): the steps' progress before the interruption is not in this record`,
  };
}
