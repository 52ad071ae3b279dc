/**
 * Run files (ARCHITECTURE §8): one JSON file per run in the runs directory, named
 * `<UTC start yyyymmddThhmmssSSSZ>_<workflow>_<run_id>.json`, written atomically (temp file +
 * rename) when the run starts and when it ends.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { writeFileAtomicOffThread, type FileWriter } from './write-thread.js';

/** The error recorded on runs found `running` at start-up. */
export const INTERRUPTED = 'interrupted';

/** `20240102T030405678Z_<workflow>_<runId>.json` for a run started at `startTime` (epoch ms). */
export function runFileName(startTime: number, workflowName: string, runId: string): string {
  const stamp = new Date(startTime).toISOString().replace(/[-:.]/g, '');
  return `${stamp}_${workflowName}_${runId}.json`;
}

/** Run directories known to exist: `mkdir` once per directory, not once per write. */
const madeDirs = new Set<string>();

/**
 * Writes a run record atomically as `runsDir/filename` (creating the directory). The directory
 * is created on the first write to it and again only if a write finds it gone. `write` is the
 * file writer (tests inject failing ones).
 */
export async function writeRunFile(
  runsDir: string,
  filename: string,
  record: RunRecord,
  write: FileWriter = writeFileAtomicOffThread,
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
 * Marks run files still `running` (left by a process that died) as `failed` with
 * `error: "interrupted"`: unfinished steps become failed (running) or skipped (pending).
 * Returns the names of the files it rewrote. Unreadable files are left alone.
 */
export async function recoverInterruptedRuns(
  runsDir: string,
  now: number = Date.now(),
): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(runsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const recovered: string[] = [];
  for (const name of entries) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    let record: RunRecord;
    try {
      record = await readRunFile(join(runsDir, name));
    } catch {
      continue; // not a run file we can read; history indexing reports it
    }
    if (record.status !== 'running' && record.status !== 'pending') continue;
    await writeRunFile(runsDir, name, interruptedRecord(record, now));
    recovered.push(name);
  }
  return recovered;
}

function interruptedRecord(record: RunRecord, now: number): RunRecord {
  const endTime = new Date(now).toISOString();
  const steps = (Array.isArray(record.steps) ? record.steps : []).map((step): StepRecord => {
    if (step.status === 'running' || step.status === 'retrying') {
      return { ...step, status: 'failed', error: INTERRUPTED, end_time: endTime };
    }
    if (step.status === 'pending') {
      return {
        ...step,
        status: 'skipped',
        metadata: { ...step.metadata, skip_reason: INTERRUPTED },
      };
    }
    return step;
  });
  const started = Date.parse(record.start_time);
  return {
    ...record,
    status: 'failed',
    error: INTERRUPTED,
    steps,
    failed_step_count: steps.filter((s) => s.status === 'failed').length,
    end_time: endTime,
    total_duration_ms: Number.isFinite(started) ? Math.max(0, now - started) : null,
  };
}
