/**
 * Run journals: step progress that survives a kill. A run's file holds its start record until
 * the run ends; meanwhile each step start and end is appended to the run's journal
 * (`.<run file>.journal`, one JSON object per line), which start-up recovery folds into the run
 * file of a run whose owner is gone (see startup-recovery.ts).
 *
 * Group commit: step events only mark the run dirty; every `commitMs` the lines of the dirty
 * runs started at least `commitMs` ago are built and appended, one append and one fsync per
 * journal, on the write thread (in order with the run-file writes). A run that ends before its
 * commit drops its pending lines (its end record says more), so runs shorter than `commitMs`
 * never create a journal however their steps fall around the commits: only long runs pay (at
 * hundreds of short runs a second, a commit catching ten runs in flight would otherwise add
 * two hundred file creations, fsyncs and removals a second). One commit is in flight at a time and takes at most `maxFiles` journals;
 * pending state is a few indices per active run, so memory is bounded by the active runs.
 * Appends are best effort: a failure is logged once per error code and the run goes on (its
 * end record is what is durable).
 *
 * Bounded (docs/limits.md): a line never exceeds `maxLineBytes` (the step I/O bound: a bigger
 * step record keeps its input and output as truncation markers and its error cut), and a journal
 * never exceeds `maxFileBytes` (the run-record bound, which recovery reads no further than):
 * once the next line would pass it, a last `{"full": true, "bytes": N}` line is appended, the
 * run's further progress is not journaled, and a warning is logged.
 */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FinishedMapItem, StepRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { DEFAULT_CONTENT_LIMITS } from '../workflow/limits.js';
import { PREVIEW_CHARS, truncationMarker } from '../workflow/size-bounds.js';

/** The journal file name of a run file. */
export function journalFileName(runFile: string): string {
  return `.${runFile}.journal`;
}

/** Journal files: `.<run file>.journal`. */
export const JOURNAL_FILE = /^\.(.+\.json)\.journal$/;

/**
 * One journal line: a step started (`started`, ISO time; `a`, the attempt, when not the first:
 * a resumed run continues the count) or finished (`step`), an item of a running map step finished
 * (`item`: its index, attempts and output or error; docs/durable-runs.md), or the note that the
 * journal reached its bound (`full`, the bytes written) and nothing more was appended.
 */
export type JournalLine =
  | { i: number; started: string; a?: number }
  | { i: number; step: StepRecord }
  | { i: number; item: FinishedMapItem }
  | { full: true; bytes: number };

/** What the journal reads of a run when it commits. */
export interface JournalSource {
  readonly filename: string;
  /** When the run started (epoch ms, the clock's time). */
  readonly startTime: number;
  /** The record of finished step `index`. */
  stepRecord(index: number): StepRecord;
}

/** Timers of the commit (the runtime's clock). */
export interface JournalClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RunJournalOptions {
  runsDir: string;
  /** Appends and fsyncs (the write thread's `append`). */
  append: (path: string, data: string) => Promise<void>;
  /** Delay between a step event and its commit (ms). */
  commitMs: number;
  /** Journals per commit. @default 256 */
  maxFiles?: number;
  /** Longest line (bytes of JSON text). @default 1048576 (the step I/O bound) */
  maxLineBytes?: number;
  /** Largest journal (bytes of JSON text). @default 16777216 (the run-record bound) */
  maxFileBytes?: number;
  clock: JournalClock;
  logger: Logger;
}

export interface RunJournal {
  /** Attempt `attempt` of step `index` started (the first attempt, or the first of a resumed run). */
  stepStarted(source: JournalSource, index: number, time: number, attempt?: number): void;
  stepFinished(source: JournalSource, index: number): void;
  /**
   * Item `item.index` of running map step `index` finished: its line goes with the next commit
   * (group-committed with the step lines: no write of its own). A line over `maxLineBytes` is not
   * written (the item runs again at a resume).
   */
  itemFinished(source: JournalSource, index: number, item: FinishedMapItem): void;
  /** The run is ending: its pending lines are dropped (its end record is being written). */
  runEnding(source: JournalSource): void;
  /** The run's end record is on disk: its journal (if any) is removed. */
  runEnded(source: JournalSource): Promise<void>;
  /**
   * Commits the pending lines of `sources` now, however young their runs (runs left to the next
   * start at shutdown: what they finished must be on disk). Resolves once appended.
   */
  flush(sources: Iterable<JournalSource>): Promise<void>;
  /**
   * Removes the run's journal file, left by an earlier process (a resumed run, whose new start
   * record holds everything it said). Resolves once removed (or found absent).
   */
  discard(source: JournalSource): Promise<void>;
  /** Stops committing (pending lines are dropped). */
  close(): Promise<void>;
}

interface Pending {
  /** Step index → start time and attempt. */
  started: Map<number, { time: number; attempt: number }>;
  finished: number[];
  /** Map items finished (step index, item); made by the first. */
  items?: { i: number; item: FinishedMapItem }[];
}

export function createRunJournal(options: RunJournalOptions): RunJournal {
  const { runsDir, append, commitMs, clock, logger } = options;
  const maxFiles = options.maxFiles ?? 256;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_CONTENT_LIMITS.maxStepIoBytes;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_CONTENT_LIMITS.maxRunRecordBytes;
  const pending = new Map<JournalSource, Pending>();
  /** Runs whose journal file exists (or is being created), with the characters appended. */
  const written = new Map<JournalSource, number>();
  /** Runs whose journal reached `maxFileBytes`: nothing more is appended for them. */
  const full = new Set<JournalSource>();
  let timer: unknown;
  let inFlight: Promise<void> | undefined;
  /** A commit came due while the previous one was in flight: it runs when that one ends. */
  let due = false;
  let closed = false;
  const warned = new Set<string>();

  function entry(source: JournalSource): Pending {
    let found = pending.get(source);
    if (found === undefined) {
      found = { started: new Map(), finished: [] };
      pending.set(source, found);
    }
    schedule();
    return found;
  }

  function schedule(): void {
    if (timer !== undefined || closed) return;
    timer = clock.setTimeout(() => {
      timer = undefined;
      if (inFlight === undefined) commit();
      else due = true;
    }, commitMs);
  }

  /** A step's line within `maxLineBytes` (see the module comment). */
  function stepLine(index: number, step: StepRecord): string {
    const text = JSON.stringify({ i: index, step } satisfies JournalLine);
    if (text.length <= maxLineBytes) return text;
    const { messages: _messages, verification: _verification, ...rest } = step;
    const slim: StepRecord = {
      ...rest,
      input: truncationMarker(step.input, maxLineBytes),
      output: step.output === null ? null : truncationMarker(step.output, maxLineBytes),
      error: step.error === null ? null : step.error.slice(0, PREVIEW_CHARS),
    };
    return JSON.stringify({ i: index, step: slim } satisfies JournalLine);
  }

  /** The lines to append for `source`, within what its journal may still take. */
  function linesOf(source: JournalSource, state: Pending, size: number): string {
    const lines: string[] = [];
    for (const index of state.finished) {
      state.started.delete(index);
      lines.push(stepLine(index, source.stepRecord(index)));
    }
    for (const [index, { time, attempt }] of state.started) {
      const line: JournalLine = { i: index, started: new Date(time).toISOString() };
      if (attempt > 1) line.a = attempt;
      lines.push(JSON.stringify(line));
    }
    // After the step's started line (a fold applies them to the running step).
    for (const { i, item } of state.items ?? []) {
      const line = JSON.stringify({ i, item } satisfies JournalLine);
      if (line.length <= maxLineBytes) lines.push(line);
    }
    // Room for the `full` line (64 bytes) is kept back: it always fits.
    let text = '';
    let bytes = size;
    for (const line of lines) {
      // Bytes, not characters: recovery measures the file.
      const length = Buffer.byteLength(line) + 1;
      if (bytes + length > maxFileBytes - 64) {
        full.add(source);
        logger.warn(
          { file: source.filename, bytes, maxFileBytes },
          'run journal full; the run goes on, its further step progress is not journaled',
        );
        return `${text}${JSON.stringify({ full: true, bytes } satisfies JournalLine)}\n`;
      }
      text += `${line}\n`;
      bytes += length;
    }
    return text;
  }

  /** Appends the pending lines of `source` (taken out of `pending`) to its journal. */
  function appendLines(source: JournalSource, state: Pending): Promise<void> | undefined {
    pending.delete(source);
    if (full.has(source)) return undefined;
    const size = written.get(source) ?? 0;
    const text = linesOf(source, state, size);
    written.set(source, size + Buffer.byteLength(text));
    return append(join(runsDir, journalFileName(source.filename)), text).catch(failed);
  }

  function commit(): void {
    const batch: Promise<void>[] = [];
    const youngest = clock.now() - commitMs;
    for (const [source, state] of pending) {
      if (batch.length >= maxFiles) break;
      if (source.startTime > youngest) continue;
      const appended = appendLines(source, state);
      if (appended !== undefined) batch.push(appended);
    }
    if (pending.size > 0) schedule();
    if (batch.length === 0) return;
    inFlight = Promise.all(batch).then(() => {
      inFlight = undefined;
      if (!due) return;
      due = false;
      commit();
    });
  }

  function failed(error: unknown): void {
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
    if (warned.has(code)) return;
    warned.add(code);
    logger.warn({ code }, 'run journal not written; step progress of running runs may be lost');
  }

  return {
    stepStarted(source, index, time, attempt = 1) {
      if (!closed && !full.has(source)) entry(source).started.set(index, { time, attempt });
    },
    stepFinished(source, index) {
      if (closed || full.has(source)) return;
      const state = entry(source);
      state.finished.push(index);
      // The step's record holds its items now: their pending lines would say less.
      if (state.items !== undefined) state.items = state.items.filter((line) => line.i !== index);
    },
    itemFinished(source, index, item) {
      if (!closed && !full.has(source)) (entry(source).items ??= []).push({ i: index, item });
    },
    runEnding(source) {
      pending.delete(source);
      full.delete(source);
      // No timer outlives the last active run's events (a runtime at rest holds no timers).
      if (pending.size === 0 && timer !== undefined) {
        clock.clearTimeout(timer);
        timer = undefined;
      }
    },
    async runEnded(source) {
      if (!written.delete(source)) return;
      // An append still in flight would recreate the file after the unlink.
      await inFlight;
      await unlink(join(runsDir, journalFileName(source.filename))).catch(() => undefined);
    },
    async flush(sources) {
      const batch: Promise<void>[] = [];
      for (const source of sources) {
        const state = pending.get(source);
        const appended = state === undefined ? undefined : appendLines(source, state);
        if (appended !== undefined) batch.push(appended);
      }
      // After a commit in flight, so lines keep their order in each file.
      await inFlight;
      await Promise.all(batch);
    },
    async discard(source) {
      await unlink(join(runsDir, journalFileName(source.filename))).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') failed(error);
      });
    },
    async close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      while (inFlight !== undefined) await inFlight;
      pending.clear();
    },
  };
}
