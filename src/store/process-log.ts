/**
 * The process log: how run records become durable without an fsync per run file, as databases
 * do with a write-ahead log. Each persisting runtime appends every run record it writes (start
 * and end records, recovery repairs) to its own append-only log in the runs directory,
 * `.<owner id>.<generation>.log` beside its owner file, on its write thread: the records of one
 * batch go in one write and one fdatasync (group commit), then their run files are written
 * (temp file + rename) without an fsync. A record is durable once its batch's fdatasync
 * returned, which is before the run's `POST /api/run` answer or `workflow_end`.
 *
 * A frame is a header line `@<bytes> <run file name>\n` followed by exactly the run file's text
 * (`bytes` long, ending in a newline). The writer writes zeros ahead of its last frame (they make
 * its fdatasync cheaper, see workers/write-worker.mjs): a header of zeros ends the log. Only the
 * last frame of a generation can be cut short or
 * garbled (a crash mid-append, never acknowledged): reading stops at the first frame that is not
 * whole and valid, the frames before it count. Generations are numbered upwards (a restarted
 * write worker starts a new one); a later generation's record of a file is the newer one.
 *
 * Generations are bounded: once one reaches 16 MiB or is 10 s old, it is closed, the file system
 * is flushed (`sync -f`, one syncfs(2); up to 64 files are fsynced one by one instead) and the
 * log removed: its records are then durable in the run files themselves
 * (workers/write-worker.mjs). A runtime shutting down does the same for its open generation.
 * Logs of owners that are gone are replayed at recovery (log-replay.ts).
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../generated/run-record.js';

/** Process log files: `.<owner id>.<generation>.log`. */
export const PROCESS_LOG_FILE = /^\.([0-9a-z]+-[0-9a-f]{8}-[0-9a-z]+)\.([0-9]+)\.log$/;

/** Run file names a frame may name (as in history.ts; no leading dot, no path). */
const FRAME_FILE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,250}\.json$/;
/** Longest header line: `@`, up to 16 digits, a space, a file name, a newline. */
const MAX_HEADER_BYTES = 300;

/** The prefix the write worker adds `.<generation>.log` to (see the module comment). */
export function processLogPrefix(runsDir: string, ownerId: string): string {
  return join(runsDir, `.${ownerId}`);
}

/** A log file of an owner, with its generation. */
export interface ProcessLogFile {
  name: string;
  owner: string;
  generation: number;
}

/** The process log files among `names`, by owner, each owner's in generation order. */
export function processLogsByOwner(names: readonly string[]): Map<string, ProcessLogFile[]> {
  const byOwner = new Map<string, ProcessLogFile[]>();
  for (const name of names) {
    const match = PROCESS_LOG_FILE.exec(name);
    if (match === null) continue;
    const file = { name, owner: match[1]!, generation: Number(match[2]) };
    const list = byOwner.get(file.owner) ?? [];
    list.push(file);
    byOwner.set(file.owner, list);
  }
  for (const list of byOwner.values()) list.sort((a, b) => a.generation - b.generation);
  return byOwner;
}

/** One whole, valid frame: its run file and where its text lies in the log. */
export interface LogFrame {
  file: string;
  /** Byte offset and length of the run file's text in the log. */
  offset: number;
  length: number;
  record: RunRecord;
}

function isRecord(value: unknown): value is RunRecord {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.run_id === 'string' && typeof v.status === 'string' && Array.isArray(v.steps);
}

function isZeros(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== 0) return false;
  return true;
}

/** What reading a log left out: the bytes after the last valid frame (a torn tail), and why. */
export type LogTail = { bytes: number; reason: string } | undefined;

/**
 * Passes the valid frames of one log file to `onFrame`, in order, stopping at the first one that
 * is not whole and valid (see the module comment); returns what was left out. A frame longer
 * than `maxFrameBytes` stops it too, so a damaged length never makes it allocate more. Records
 * are read and parsed one at a time (a log is never held whole).
 */
export async function readProcessLog(
  path: string,
  maxFrameBytes: number,
  onFrame: (frame: LogFrame) => void,
): Promise<LogTail> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const header = Buffer.allocUnsafe(MAX_HEADER_BYTES);
    let position = 0;
    const stop = (reason: string): LogTail => ({ bytes: size - position, reason });
    while (position < size) {
      const { bytesRead } = await handle.read(header, 0, MAX_HEADER_BYTES, position);
      // The zeros the write worker writes ahead of the last frame: the log ends here.
      if (isZeros(header.subarray(0, bytesRead))) return undefined;
      const end = header.subarray(0, bytesRead).indexOf(10);
      if (end < 0) return stop('header cut short');
      const match = /^@([0-9]{1,16}) (.+)$/.exec(header.toString('utf8', 0, end));
      if (match === null) return stop('not a frame header');
      const length = Number(match[1]);
      const file = match[2]!;
      const offset = position + end + 1;
      if (length > maxFrameBytes) return stop(`a frame of ${length} bytes, over the bound`);
      if (offset + length > size) return stop('frame cut short');
      const body = Buffer.allocUnsafe(length);
      let read = 0;
      while (read < length) {
        const chunk = await handle.read(body, read, length - read, offset + read);
        if (chunk.bytesRead === 0) return stop('frame cut short');
        read += chunk.bytesRead;
      }
      let record: unknown;
      try {
        record = JSON.parse(body.toString('utf8'));
      } catch {
        return stop('frame is not JSON');
      }
      if (!isRecord(record)) return stop('frame is not a run record');
      if (FRAME_FILE.test(file)) onFrame({ file, offset, length, record });
      position = offset + length;
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

/** Reads `length` bytes of text at `offset` of the log at `path` (a frame's run file). */
export async function readFrameText(path: string, offset: number, length: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const body = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const chunk = await handle.read(body, read, length - read, offset + read);
      if (chunk.bytesRead === 0) throw new Error('process log shrank while replayed');
      read += chunk.bytesRead;
    }
    return body.toString('utf8');
  } finally {
    await handle.close();
  }
}
