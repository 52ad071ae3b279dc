/**
 * Replaying the process logs of owners that are gone (process-log.ts) into their run files: the
 * first step of every recovery (start-up scan, orphan watch), before the run files are read. A
 * run file is written without an fsync, so after a machine crash it may be missing, empty, or
 * still hold the start record of a run whose end record was durable in the log; its latest
 * record in the log is then written to it. A file that already holds an ended record is left
 * alone (nothing in a log is newer), as is one whose text is the log's. Once every file of an
 * owner is replayed (through the recovering runtime's writes: durable in its own log), the
 * owner's logs are removed. A live owner's log is never read: its process still writes it.
 */
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import { DEFAULT_CONTENT_LIMITS } from '../workflow/limits.js';
import { ownerFileName } from './owner.js';
import { processLogsByOwner, readFrameText, readProcessLog } from './process-log.js';
import { withRunFileLock } from './run-file-lock.js';
import { ownerFileAlive } from './stale-temp-files.js';
import type { FileWriter } from './write-thread.js';

export interface ReplayOptions {
  runsDir: string;
  /** This runtime's owner id: its log is never replayed. */
  self?: string | undefined;
  /** Replay only these owners' logs (the orphan watch); @default every owner that is gone */
  only?: ReadonlySet<string> | undefined;
  /** Writes the replayed run files. @default atomic, fsynced writes from the main thread */
  writeFile?: FileWriter | undefined;
  /** The run-record bound: a frame over four times it (plus 1 MiB) ends a log's reading. */
  maxRecordBytes?: number | undefined;
  logger?: Logger | undefined;
}

/** What a replay did. */
export interface ReplayReport {
  /** Log files of gone owners read (and removed). */
  logs: number;
  /** Run files written from a log. */
  records: number;
}

/** Where a file's latest record lies, and whether it is an end record. */
interface Latest {
  log: string;
  offset: number;
  length: number;
}

function ended(text: string): boolean {
  try {
    const record = JSON.parse(text) as { status?: unknown };
    return record.status !== 'running' && record.status !== 'pending';
  } catch {
    return false; // empty or cut short (not flushed before the crash): the log's record is newer
  }
}

/** Replays the logs of gone owners in `runsDir` (see the module comment). */
export async function replayProcessLogs(options: ReplayOptions): Promise<ReplayReport> {
  const { runsDir, self, only, logger } = options;
  const report: ReplayReport = { logs: 0, records: 0 };
  let names: string[];
  try {
    names = await readdir(runsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw error;
  }
  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_CONTENT_LIMITS.maxRunRecordBytes;
  const maxFrameBytes = 4 * maxRecordBytes + 1024 * 1024;
  const write = options.writeFile ?? writeFileAtomic;
  for (const [owner, logs] of processLogsByOwner(names)) {
    if (owner === self) continue;
    const gone =
      only !== undefined ? only.has(owner) : !(await ownerFileAlive(runsDir, ownerFileName(owner)));
    if (!gone) continue;
    const latest = new Map<string, Latest>();
    for (const { name } of logs) {
      const log = join(runsDir, name);
      let tail;
      try {
        tail = await readProcessLog(log, maxFrameBytes, ({ file, offset, length }) =>
          latest.set(file, { log, offset, length }),
        );
      } catch (error) {
        // Removed meanwhile: another process replayed it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      if (tail !== undefined) {
        logger?.warn(
          { log: name, ...tail },
          'process log: the end of it is not a whole record (cut short by the crash); ignored',
        );
      }
    }
    for (const [file, where] of latest) {
      const path = join(runsDir, file);
      const replayed = await withRunFileLock(path, async () => {
        const current = await readFile(path, 'utf8').catch(() => undefined);
        if (current !== undefined && ended(current)) return false;
        const text = await readFrameText(where.log, where.offset, where.length);
        if (current === text) return false;
        await write(path, text);
        return true;
      });
      if (replayed) report.records++;
    }
    for (const { name } of logs) {
      await unlink(join(runsDir, name)).catch(() => undefined);
      report.logs++;
    }
  }
  return report;
}

/**
 * The latest record of `file` in the logs of `owner` (gone), as text; undefined when none
 * (the scale finaliser: a dead worker's run may have ended in its log but not in its file).
 */
export async function latestLoggedRecord(
  runsDir: string,
  owner: string,
  file: string,
  maxRecordBytes: number = DEFAULT_CONTENT_LIMITS.maxRunRecordBytes,
): Promise<string | undefined> {
  const logs = processLogsByOwner(await readdir(runsDir)).get(owner) ?? [];
  let found: Latest | undefined;
  for (const { name } of logs) {
    const log = join(runsDir, name);
    await readProcessLog(log, 4 * maxRecordBytes + 1024 * 1024, (frame) => {
      if (frame.file === file) found = { log, offset: frame.offset, length: frame.length };
    }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    });
  }
  if (found === undefined) return undefined;
  return readFrameText(found.log, found.offset, found.length).catch(() => undefined);
}
