/**
 * The in-memory run history index (ARCHITECTURE §8): built once from the run files at start-up,
 * kept current from `runtime.onRecord`, and the only source of `GET /api/runs*` answers.
 *
 * Memory stays flat however many runs accumulate: summaries of the newest `windowSize` runs are
 * kept (active runs are never evicted), aggregates over every run are counters
 * ({@link createHistoryStats}), and a compact map of every run id to its file name answers id
 * lookups without listing the directory (an unknown id costs a map lookup). A run older than
 * the window is found by file name or run id through one file read; full records are cached
 * up to `recordCacheBytes`.
 *
 * The index is filled either from the runtime's start-up scan ({@link HistoryIndex.addScanned},
 * then {@link HistoryIndex.markLoaded}) or by {@link HistoryIndex.load}; until then `loaded` is
 * false and list, summary and id lookups are incomplete (the HTTP layer answers 503).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import type { RunSummary } from '../generated/api/run-list-response.js';
import { approxBytes } from './approx-size.js';
import { createHistoryStats, type RunsSummary } from './history-stats.js';
import { upgradeRecord } from './run-record.js';
import { addCost } from '../llm/types.js';

export type { RunsSummary } from './history-stats.js';

/** The spec's primary Run summary (list entry), generated from schemas/api. */
export type { RunSummary } from '../generated/api/run-list-response.js';

export interface RunLookup {
  record: RunRecord;
  filename: string;
}

export interface HistoryIndex {
  /** Reads every run file of the directory into the index, then marks it loaded. */
  load(): Promise<void>;
  /** Adds a run read by a start-up scan unless a write of this process indexed it already. */
  addScanned(record: RunRecord, filename: string): void;
  /** Marks the index complete (after a start-up scan fed it through `addScanned`). */
  markLoaded(): void;
  /** Whether every run file of the directory has been indexed. */
  readonly loaded: boolean;
  /** Resolves once `loaded`. */
  whenLoaded(): Promise<void>;
  /** Adds or replaces a run (called for each run-file write). */
  upsert(record: RunRecord, filename: string): void;
  /**
   * Re-reads a run file written by another process (a notification of the shared store) and
   * indexes it, bypassing the record cache. Resolves false when the file is gone or unreadable.
   */
  refresh(filename: string): Promise<boolean>;
  /** Whether a run with this id is indexed. */
  hasRunId(runId: string): boolean;
  /** Every indexed run as `[run id, file name]` (the newest file per run id). */
  runFiles(): IterableIterator<[string, string]>;
  /** Whether the indexed run of this file is running or pending. */
  isActiveFile(filename: string): boolean;
  /** Forgets a run whose file was removed (retention). */
  remove(runId: string, filename: string): void;
  /** Newest first; `workflow` is an exact match. */
  list(options?: { limit?: number; workflow?: string | undefined }): RunSummary[];
  summary(options?: { workflow?: string | undefined }): RunsSummary;
  /** The newest run with this id, or undefined. */
  getByRunId(runId: string): Promise<RunLookup | undefined>;
  /** A run by its file name (already checked against {@link RUN_FILE_NAME}). */
  getByFilename(filename: string): Promise<RunLookup | undefined>;
  /** Runs currently in the index window. */
  readonly size: number;
  /** Runs indexed (every run id known). */
  readonly runCount: number;
}

export interface HistoryOptions {
  runsDir: string;
  logger: Logger;
  /** Newest runs whose summaries are kept in memory. @default 10000 */
  windowSize?: number;
  /**
   * Bytes of full records (estimated, see approx-size.ts) kept to answer detail requests
   * without a file read. @default 33554432 (32 MiB)
   */
  recordCacheBytes?: number;
  /** @default Date.now */
  now?: () => number;
}

/** A run file name: what the runtime writes (`<stamp>_<workflow>_<run_id>.json`). */
export const RUN_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,250}\.json$/;
export const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

interface Entry {
  summary: RunSummary;
  startMs: number;
  tokens: number;
  /** USD; null: unknown. */
  cost: number | null;
}

function toEntry(record: RunRecord, filename: string): Entry {
  const evaluation = record.extra.evaluation as Record<string, unknown> | undefined;
  // The score after floors and gates, the one the grade is given for (a run failing a gate must
  // not list a high score beside its F); records of other writers may carry only weighted_score.
  const score = evaluation?.overall_score ?? evaluation?.weighted_score;
  const grade = evaluation?.grade;
  let tokens = 0;
  let cost: number | null = 0;
  for (const step of record.steps) {
    const stepTotal = stepTokens(step.tokens_used);
    tokens += stepTotal;
    // A step of an older file (or any writer) that spent tokens without a recorded cost: unknown.
    cost = addCost(cost, step.cost_usd ?? (stepTotal > 0 ? null : 0));
  }
  const startMs = Date.parse(record.start_time);
  return {
    summary: {
      filename,
      run_id: record.run_id,
      workflow_name: record.workflow_name,
      status: record.status,
      success_rate: record.success_rate,
      total_duration_ms: record.total_duration_ms,
      step_count: record.step_count,
      failed_step_count: record.failed_step_count,
      start_time: record.start_time,
      end_time: record.end_time,
      evaluation_score: typeof score === 'number' ? score : null,
      evaluation_grade: typeof grade === 'string' ? grade : null,
    },
    startMs: Number.isNaN(startMs) ? 0 : startMs,
    tokens,
    cost,
  };
}

function isActive(status: string): boolean {
  return status === 'running' || status === 'pending';
}

/** Ascending by start time, then file name (names start with the UTC stamp). */
function compare(a: Entry, b: Entry): number {
  if (a.startMs !== b.startMs) return a.startMs - b.startMs;
  return a.summary.filename < b.summary.filename
    ? -1
    : a.summary.filename > b.summary.filename
      ? 1
      : 0;
}

function looksLikeRecord(value: unknown): value is RunRecord {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.run_id === 'string' &&
    typeof v.workflow_name === 'string' &&
    typeof v.status === 'string' &&
    typeof v.start_time === 'string' &&
    Array.isArray(v.steps) &&
    typeof v.extra === 'object' &&
    v.extra !== null
  );
}

export function createHistoryIndex(options: HistoryOptions): HistoryIndex {
  const { runsDir, logger } = options;
  const windowSize = Math.max(1, options.windowSize ?? 10_000);
  const now = options.now ?? Date.now;
  const stats = createHistoryStats();
  /** Sorted ascending (oldest first). */
  const entries: Entry[] = [];
  const byFilename = new Map<string, Entry>();
  const byRunId = new Map<string, Entry>();
  /** Every run counted in the stats, by file name → the sample it was counted with. */
  const counted = new Map<string, Entry>();
  /** Every indexed run id → its file name (the newest file per id). */
  const fileOf = new Map<string, string>();
  const records = new LRUCache<string, RunRecord>({
    maxSize: Math.max(1, options.recordCacheBytes ?? 32 * 1024 * 1024),
    sizeCalculation: (record) => Math.max(1, approxBytes(record)),
  });
  let loaded = false;
  let markDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (markDone = resolve));

  function sampleOf(entry: Entry) {
    return {
      workflow: entry.summary.workflow_name,
      status: entry.summary.status,
      durationMs: entry.summary.total_duration_ms,
      tokens: entry.tokens,
      cost: entry.cost,
      startMs: entry.startMs,
    };
  }

  function insertSorted(entry: Entry): void {
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(entries[mid] as Entry, entry) <= 0) lo = mid + 1;
      else hi = mid;
    }
    entries.splice(lo, 0, entry);
  }

  /** Position of an entry in the sorted array (binary search: runs update near the end). */
  function indexOfEntry(entry: Entry): number {
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(entries[mid] as Entry, entry) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < entries.length && compare(entries[i] as Entry, entry) === 0; i++) {
      if (entries[i] === entry) return i;
    }
    return entries.indexOf(entry);
  }

  function removeEntry(entry: Entry): void {
    const at = indexOfEntry(entry);
    if (at >= 0) entries.splice(at, 1);
    if (byFilename.get(entry.summary.filename) === entry) byFilename.delete(entry.summary.filename);
    if (byRunId.get(entry.summary.run_id) === entry) byRunId.delete(entry.summary.run_id);
  }

  function evict(): void {
    while (entries.length > windowSize) {
      const victimAt = entries.findIndex((e) => !isActive(e.summary.status));
      if (victimAt < 0) return;
      const victim = entries[victimAt] as Entry;
      removeEntry(victim);
      // A finished run outside the window never changes again: stop tracking its sample.
      counted.delete(victim.summary.filename);
    }
  }

  function upsert(record: RunRecord, filename: string, cache = true): void {
    const entry = toEntry(record, filename);
    const previous = counted.get(filename);
    if (previous !== undefined) stats.apply(sampleOf(previous), -1);
    stats.apply(sampleOf(entry), 1);
    counted.set(filename, entry);
    const old = byFilename.get(filename);
    if (old !== undefined) removeEntry(old);
    insertSorted(entry);
    byFilename.set(filename, entry);
    const sameId = byRunId.get(record.run_id);
    if (sameId === undefined || compare(sameId, entry) <= 0) byRunId.set(record.run_id, entry);
    const known = fileOf.get(record.run_id);
    if (known === undefined || known <= filename) fileOf.set(record.run_id, filename);
    // Records read by a scan are not cached (keeping them all would only churn the cache), but
    // an older version read meanwhile must go.
    if (cache) records.set(filename, record);
    else records.delete(filename);
    evict();
  }

  function markLoaded(): void {
    loaded = true;
    markDone();
  }

  async function readRecord(filename: string, cache = true): Promise<RunRecord | undefined> {
    const cached = records.get(filename);
    if (cached !== undefined) return cached;
    let text: string;
    try {
      text = await readFile(join(runsDir, filename), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
      throw error;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!looksLikeRecord(parsed)) return undefined;
      const upgraded = upgradeRecord(parsed);
      // A running record may be another process's, rewritten behind our back: not cached.
      if (cache && !isActive(upgraded.status)) records.set(filename, upgraded);
      return upgraded;
    } catch {
      logger.warn({ filename }, 'run file is not valid JSON');
      return undefined;
    }
  }

  async function runFileNames(): Promise<string[]> {
    try {
      return (await readdir(runsDir)).filter((name) => RUN_FILE_NAME.test(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  return {
    get loaded() {
      return loaded;
    },
    whenLoaded: () => done,
    markLoaded,
    addScanned(record, filename) {
      if (byFilename.has(filename) || counted.has(filename)) return;
      if (fileOf.get(record.run_id) === filename) return;
      upsert(record, filename, false);
    },
    async refresh(filename) {
      if (!RUN_FILE_NAME.test(filename) || filename.includes('..')) return false;
      records.delete(filename);
      const record = await readRecord(filename, false);
      if (record === undefined) return false;
      upsert(record, filename, false);
      return true;
    },
    hasRunId: (runId) => fileOf.has(runId),
    runFiles: () => fileOf.entries(),
    isActiveFile(filename) {
      const entry = byFilename.get(filename);
      return entry !== undefined && isActive(entry.summary.status);
    },
    remove(runId, filename) {
      const entry = byFilename.get(filename);
      if (entry !== undefined) removeEntry(entry);
      const sample = counted.get(filename);
      if (sample !== undefined) stats.apply(sampleOf(sample), -1);
      counted.delete(filename);
      records.delete(filename);
      if (fileOf.get(runId) === filename) fileOf.delete(runId);
    },
    async load() {
      const names = await runFileNames();
      const started = now();
      let count = 0;
      // Bounded parallelism: enough to hide read latency, not enough to exhaust descriptors.
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < names.length) {
          const name = names[next++] as string;
          const record = await readRecord(name, false);
          if (record === undefined) continue;
          if (!byFilename.has(name)) {
            upsert(record, name, false);
            count += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(32, names.length) }, worker));
      logger.info({ runs: count, ms: now() - started }, 'run history loaded');
      markLoaded();
    },
    upsert,
    list({ limit = 50, workflow } = {}) {
      const out: RunSummary[] = [];
      for (let i = entries.length - 1; i >= 0 && out.length < limit; i--) {
        const entry = entries[i] as Entry;
        if (workflow !== undefined && entry.summary.workflow_name !== workflow) continue;
        out.push(entry.summary);
      }
      return out;
    },
    summary({ workflow } = {}) {
      return stats.summarize({ workflow, now: now() });
    },
    async getByRunId(runId) {
      if (!RUN_ID.test(runId)) return undefined;
      const filename = byRunId.get(runId)?.summary.filename ?? fileOf.get(runId);
      if (filename === undefined) return undefined;
      const record = await readRecord(filename);
      return record === undefined ? undefined : { record, filename };
    },
    async getByFilename(filename) {
      if (!RUN_FILE_NAME.test(filename) || filename.includes('..')) return undefined;
      const record = await readRecord(filename);
      return record === undefined ? undefined : { record, filename };
    },
    get size() {
      return entries.length;
    },
    get runCount() {
      return fileOf.size;
    },
  };
}

/** A step's total tokens: `{input, output, total}`, or a bare integer in older run files. */
function stepTokens(used: unknown): number {
  if (typeof used === 'number') return used;
  const total = (used as { total?: unknown } | null)?.total;
  return typeof total === 'number' ? total : 0;
}
