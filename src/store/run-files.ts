/**
 * Run files (ARCHITECTURE §8): one JSON file per run in the runs directory, named
 * `<UTC start yyyymmddThhmmssSSSZ>_<workflow>_<run_id>.json`, written atomically (temp file +
 * rename) when the run starts and when it ends.
 */
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../generated/run-record.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { FileWriter } from './write-thread.js';

export { INTERRUPTED } from './interrupted-record.js';

/** `20240102T030405678Z_<workflow>_<runId>.json` for a run started at `startTime` (epoch ms). */
export function runFileName(startTime: number, workflowName: string, runId: string): string {
  const stamp = new Date(startTime).toISOString().replace(/[-:.]/g, '');
  return `${stamp}_${workflowName}_${runId}.json`;
}

/**
 * Writes a run record atomically as `runsDir/filename` (creating the directory). The directory
 * is created on the first write to it and again only if a write finds it gone. `write` is the
 * file writer (tests inject failing ones). `madeDirs` holds the directories this caller has
 * made (`mkdir` once per directory, not once per write); it belongs to the caller, such as one
 * runtime's write queue, so no state is shared between runtimes of a process.
 */
export async function writeRunFile(
  runsDir: string,
  filename: string,
  record: RunRecord,
  write: FileWriter = writeFileAtomic,
  madeDirs: Set<string> = new Set(),
): Promise<void> {
  const path = join(runsDir, filename);
  const text = `${JSON.stringify(record, null, 2)}\n`;
  if (!madeDirs.has(runsDir)) {
    await mkdir(runsDir, { recursive: true });
    madeDirs.add(runsDir);
  }
  try {
    await write(path, text);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // The directory was removed since: create it again and retry once.
    madeDirs.delete(runsDir);
    await mkdir(runsDir, { recursive: true });
    madeDirs.add(runsDir);
    await write(path, text);
  }
}

/** Reads and parses one run file. */
export async function readRunFile(path: string): Promise<RunRecord> {
  return JSON.parse(await readFile(path, 'utf8')) as RunRecord;
}

/**
 * The record of run `runId` in `runsDir`, found by its file name's `_<runId>.json` tail (a
 * longer id can share that tail, so the record's own `run_id` decides; of several runs with the
 * id, the newest, as names start with the start time); undefined when no file of the run is
 * there (or the directory is not).
 */
export async function findRunRecord(
  runsDir: string,
  runId: string,
): Promise<RunRecord | undefined> {
  const tail = `_${runId}.json`;
  let names: string[];
  try {
    names = await readdir(runsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  for (const name of names
    .filter((n) => n.endsWith(tail))
    .sort()
    .reverse()) {
    // An unreadable or torn file holds no record to use: the next candidate may.
    const record = await readRunFile(join(runsDir, name)).catch(() => undefined);
    if (record?.run_id === runId) return record;
  }
  return undefined;
}
