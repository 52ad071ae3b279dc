/**
 * The start-up scan of a runs directory: one `readdir`, one read of each run file, and the
 * repairs a crashed process leaves to do, touching only what belongs to owners that are gone
 * (owner.ts), never the files of another live process sharing the directory:
 * - first, the process logs of gone owners are replayed into their run files (log-replay.ts):
 *   every record that was durable when its process died is in its file before the scan reads it;
 * - a run file still `running` (or `pending`) whose owner is gone gets its journal folded in
 *   (the steps that started or finished before the crash), then is marked `failed` with
 *   `error: "interrupted"` (interrupted-record.ts), within the run-record bound; the journal is
 *   removed. A journal is never read past the run-record bound: one over it, or unparsable, is
 *   renamed aside (`.quarantine`) with a warn log line, and the run is marked interrupted from
 *   its run file alone (journal-recovery.ts), so no journal can abort a start-up;
 * - journals of runs that ended (the end record was written, the removal was not) or whose run
 *   file is gone are removed;
 * - temp files of dead processes (`.<name>.<token>-<n>.tmp`, empty or partial: the rename never
 *   happened) are removed, and owner files of owners that are gone.
 * Every run file read (after its repair) is passed to `onRecord`, so the history index is built
 * from the same scan.
 */
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { DEFAULT_CONTENT_LIMITS } from '../workflow/limits.js';
import { interruptedRecord } from './interrupted-record.js';
import { replayProcessLogs } from './log-replay.js';
import { foldJournalLines, parseJournal, recoverJournal, withWarning } from './journal-recovery.js';
import { OWNER_FILE } from './owner.js';
import { TEMP_FILE_TOKEN, tokenOfOwner } from '../files/process-token.js';
import { boundRunRecord } from './record-bounds.js';
import { JOURNAL_FILE, journalFileName } from './run-journal.js';
import { withRunFileLock } from './run-file-lock.js';
import { writeRunFile } from './run-files.js';
import { TEMP_FILE, ownerFileAlive, removeDeadTempFiles } from './stale-temp-files.js';
import type { FileWriter } from './write-thread.js';

/** Owner ids (see OWNER_FILE). */
const OWNER_ID = /^[0-9a-z]+-[0-9a-f]{8}-[0-9a-z]+$/;

/** Run file names (as in history.ts; no leading dot). */
const RUN_FILE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,250}\.json$/;

/** A run of a gone owner left for the runtime to resume (see `RecoveryOptions.resumable`). */
export interface ResumableRun {
  filename: string;
  /** Its record with its journal folded in (still `running`, naming the gone owner). */
  record: RunRecord;
}

/** What the scan found and did. */
export interface RecoveryReport {
  /** Run files read. */
  runs: number;
  /** Run files marked interrupted. */
  recovered: string[];
  /**
   * Run files of gone owners left as they are for the runtime to resume (with `onResumable`):
   * neither rewritten nor their journals removed.
   */
  resumable: string[];
  /** Of those, the run files the runtime resumed (the rest it marked interrupted, see `recovered`). */
  resumed: string[];
  /** Journals folded into the run files marked interrupted. */
  journalsFolded: number;
  /** Journals set aside (over the run-record bound, or unparsable), renamed `.quarantine`. */
  journalsQuarantined: number;
  /** Temp files, journals and owner files removed. */
  tempFilesRemoved: number;
  journalsRemoved: number;
  ownersRemoved: number;
  /** Running runs left alone because their owner is alive. */
  liveRuns: number;
  /** Process logs of gone owners replayed (then removed), and run files rewritten from them. */
  logsReplayed: number;
  recordsReplayed: number;
}

export interface RecoveryOptions {
  runsDir: string;
  /** This runtime's owner id: its runs are alive. */
  self?: string | undefined;
  now: number;
  /** Writes the repaired run files (the runtime passes its write thread). @default atomic writes from the main thread */
  writeFile?: FileWriter;
  /** Each run file read, after its repair. */
  onRecord?: (record: RunRecord, filename: string) => void;
  /** Each run file marked interrupted, once rewritten. */
  onRecovered?: (record: RunRecord, filename: string) => void;
  /**
   * Recover only the runs of these owners (the orphan watch: owners found gone while the service
   * runs) and remove only their temp and owner files; other journals are left alone.
   * @default every owner that is gone, and the rest of the start-up repairs
   */
  only?: ReadonlySet<string>;
  /** Parallel file reads. @default 32 */
  parallel?: number;
  /**
   * The run-record bound: no journal is read past it, and repaired records are kept within it.
   * @default 16777216 (AGENTIC_MAX_RUN_RECORD_BYTES)
   */
  maxRecordBytes?: number;
  /** Where a quarantined journal is reported (one warn line each). @default none */
  logger?: Logger;
  /**
   * Runs of gone owners are resumed rather than marked interrupted (AGENTIC_RESUME=auto): the
   * scan folds each one's journal into its record, hands it here and writes nothing; the
   * runtime resumes it (or marks it interrupted when it cannot). @default every such run is
   * marked interrupted
   */
  onResumable?: (run: ResumableRun) => void;
}

function isRecord(value: unknown): value is RunRecord {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.run_id === 'string' && typeof v.status === 'string' && Array.isArray(v.steps);
}

async function removeQuietly(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch {
    return false; // removed meanwhile by its owner or another recovering process
  }
}

/**
 * Applies a journal's lines to the steps of a start record (later lines win). Throws a
 * `JournalFormatError` for a line that is not a journal line (a partial last line is skipped).
 */
export function foldJournal(record: RunRecord, text: string): RunRecord {
  const { record: folded, warning } = foldJournalLines(record, parseJournal(text));
  return withWarning(folded, warning);
}

/** A report of a scan that found nothing (or did not run: persistence off). */
export function emptyRecoveryReport(): RecoveryReport {
  return {
    runs: 0,
    recovered: [],
    resumable: [],
    resumed: [],
    journalsFolded: 0,
    journalsQuarantined: 0,
    tempFilesRemoved: 0,
    journalsRemoved: 0,
    ownersRemoved: 0,
    liveRuns: 0,
    logsReplayed: 0,
    recordsReplayed: 0,
  };
}

/** Scans and repairs `runsDir` (see the module comment). A missing directory is empty. */
export async function recoverRunsDir(options: RecoveryOptions): Promise<RecoveryReport> {
  const { runsDir, self, now } = options;
  const report = emptyRecoveryReport();
  const replayed = await replayProcessLogs({
    runsDir,
    self,
    only: options.only,
    writeFile: options.writeFile,
    maxRecordBytes: options.maxRecordBytes,
    logger: options.logger,
  });
  report.logsReplayed = replayed.logs;
  report.recordsReplayed = replayed.records;
  let names: string[];
  try {
    names = await readdir(runsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw error;
  }
  const runFiles: string[] = [];
  const journals = new Set<string>();
  const temps: string[] = [];
  const owners = new Map<string, boolean>();
  for (const name of names) {
    if (RUN_FILE.test(name)) runFiles.push(name);
    else if (JOURNAL_FILE.test(name)) journals.add(name);
    else if (TEMP_FILE.test(name)) temps.push(name);
    else {
      const owner = OWNER_FILE.exec(name)?.[1];
      if (owner !== undefined) owners.set(owner, await ownerFileAlive(runsDir, name));
    }
  }
  if (self !== undefined) owners.set(self, true);
  const { only } = options;
  // An owner not listed started after the readdir: its owner file was written before its first
  // run file, so it is there now.
  const alive = async (owner: unknown): Promise<boolean> => {
    if (typeof owner !== 'string') return false;
    if (only !== undefined) return !only.has(owner);
    let live = owners.get(owner);
    if (live === undefined && OWNER_ID.test(owner)) {
      live = await ownerFileAlive(runsDir, `.${owner}.owner`);
      if (live) owners.set(owner, live);
    }
    return live === true;
  };

  let next = 0;
  /** Reads one run file and repairs it when its owner is gone (under the file's lock). */
  const scan = async (name: string): Promise<void> => {
    let record: RunRecord;
    try {
      const parsed: unknown = JSON.parse(await readFile(join(runsDir, name), 'utf8'));
      if (!isRecord(parsed)) return;
      record = parsed;
    } catch {
      return; // unreadable or not JSON: the history index reports it
    }
    report.runs++;
    const journal = journalFileName(name);
    const hasJournal = journals.delete(journal);
    if (record.status === 'running' || record.status === 'pending') {
      if (await alive(record.owner)) {
        report.liveRuns++;
      } else if (options.onResumable !== undefined) {
        record = await foldForResume(name, record, hasJournal);
        report.resumable.push(name);
        options.onResumable({ filename: name, record });
      } else {
        record = await recoverRun(name, record, hasJournal);
        options.onRecovered?.(record, name);
      }
    } else if (only !== undefined) {
      // The watch leaves ended runs' journals to their owners and to start-up.
    } else if (hasJournal && (await removeQuietly(join(runsDir, journal)))) {
      report.journalsRemoved++;
    }
    options.onRecord?.(record, name);
  };
  const worker = async (): Promise<void> => {
    while (next < runFiles.length) {
      const name = runFiles[next++] as string;
      await withRunFileLock(join(runsDir, name), () => scan(name));
    }
  };

  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_CONTENT_LIMITS.maxRunRecordBytes;

  /** The record of a run to resume, its journal folded in; nothing written or removed. */
  async function foldForResume(name: string, record: RunRecord, hasJournal: boolean) {
    const { folded, warning } = await fold(name, record, hasJournal);
    return withWarning(folded, warning);
  }

  async function fold(name: string, record: RunRecord, hasJournal: boolean) {
    let folded = record;
    let warning: string | undefined;
    if (hasJournal) {
      const recovered = await recoverJournal(record, {
        runsDir,
        runFile: name,
        maxBytes: maxRecordBytes,
        logger: options.logger,
      });
      folded = recovered.record;
      warning = recovered.warning;
      if (recovered.journal === 'folded') report.journalsFolded++;
      else if (recovered.journal === 'quarantined') report.journalsQuarantined++;
    }
    return { folded, warning };
  }

  async function recoverRun(name: string, record: RunRecord, hasJournal: boolean) {
    const { folded, warning } = await fold(name, record, hasJournal);
    const bounded = boundRunRecord(interruptedRecord(folded, now), maxRecordBytes).record;
    const repaired = withWarning(bounded, warning);
    await writeRunFile(runsDir, name, repaired, options.writeFile);
    if (hasJournal) await removeQuietly(join(runsDir, journalFileName(name)));
    report.recovered.push(name);
    return repaired;
  }

  await Promise.all(
    Array.from({ length: Math.min(options.parallel ?? 32, runFiles.length) }, worker),
  );
  // Journals left over have no run file: their run never started or its file was removed.
  for (const journal of only === undefined ? journals : []) {
    if (await removeQuietly(join(runsDir, journal))) report.journalsRemoved++;
  }
  const gone = [...owners].filter(([id, live]) => !live && (only?.has(id) ?? true));
  const goneTokens = new Set(gone.map(([id]) => tokenOfOwner(id)));
  const liveTokens = new Set(
    [...owners].filter(([, live]) => live).map(([id]) => tokenOfOwner(id)),
  );
  const deadTemps =
    only === undefined
      ? temps
      : temps.filter((name) => goneTokens.has(TEMP_FILE_TOKEN.exec(name)?.[1] ?? ''));
  report.tempFilesRemoved = (await removeDeadTempFiles(runsDir, deadTemps, liveTokens)).length;
  for (const [owner] of gone) {
    if (await removeQuietly(join(runsDir, `.${owner}.owner`))) report.ownersRemoved++;
  }
  return report;
}

/**
 * Marks run files still `running` whose owner is gone (all of them, when no owner is alive)
 * as `failed` with `error: "interrupted"`, folding in their journals: see
 * {@link recoverRunsDir}, which also does the rest of the start-up repairs. Returns the names
 * of the files it rewrote. Unreadable files are left alone.
 */
export async function recoverInterruptedRuns(
  runsDir: string,
  now: number = Date.now(),
): Promise<string[]> {
  return (await recoverRunsDir({ runsDir, now })).recovered;
}

/**
 * Marks one run interrupted (a run that was to be resumed and cannot be): its record, journal
 * already folded in, becomes `failed` / `interrupted` within the run-record bound with `warning`
 * in `extra.warnings`, and its journal is removed. Returns the record written.
 */
export async function writeInterruptedRecord(options: {
  runsDir: string;
  filename: string;
  record: RunRecord;
  warning: string;
  now: number;
  maxRecordBytes: number;
  writeFile?: FileWriter | undefined;
}): Promise<RunRecord> {
  const { runsDir, filename } = options;
  const bounded = boundRunRecord(
    interruptedRecord(options.record, options.now),
    options.maxRecordBytes,
  );
  const repaired = withWarning(bounded.record, options.warning);
  await writeRunFile(runsDir, filename, repaired, options.writeFile);
  await removeQuietly(join(runsDir, journalFileName(filename)));
  return repaired;
}
