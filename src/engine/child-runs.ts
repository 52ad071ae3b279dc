/**
 * Child runs of sub-workflow steps (kinds/workflow-step.ts), as the runtime makes them: each
 * attempt of a step is one child run with a run id derived from its parent's, its step and its
 * attempt ({@link childRunId}), so a resumed parent finds what its interrupted attempt had
 * started: a child that had finished is reused (not run again), a child interrupted with its
 * parent is resumed (same run id and run file), anything else is replaced by a new child for
 * the step's next attempt (docs/workflow-format.md "Sub-workflow steps").
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { INTERRUPTED } from '../store/interrupted-record.js';
import type { CompiledStep, CompiledWorkflow } from '../workflow/types.js';
import { calledWorkflow } from '../workflow/kinds/workflow-call.js';
import type { ChildRun, StartChildRun } from './kinds/workflow-step.js';
import { MAX_RUN_ID_LENGTH } from './run-id.js';
import type { RunSession } from './run-session.js';
import type { RunHandle } from './types.js';

/** What a child run is launched under: its parent run's session and the step running it. */
export interface ChildLaunch {
  parent: RunSession;
  step: string;
  /**
   * The step's index: the child's run actor is announced to the parent's engine with it (the
   * step's invoked child). A map item's child has none: the map's region draws a counter.
   */
  index?: number | undefined;
  /**
   * The map item the child runs for (a map step whose body is a sub-workflow): its events stay on
   * its own stream (the parent's has the map's item frames). @default none
   */
  item?: number | undefined;
}

/**
 * The run id of attempt `attempt` of step `step`'s child: `<parent>-<step>-<attempt>`, or, when
 * that is longer than a run id may be, `sub-<32 hex of sha256(parent, step)>-<attempt>`.
 */
export function childRunId(parentRunId: string, step: string, attempt: number): string {
  const id = `${parentRunId}-${step}-${attempt}`;
  if (id.length <= MAX_RUN_ID_LENGTH) return id;
  const digest = createHash('sha256').update(`${parentRunId}\0${step}`).digest('hex');
  return `sub-${digest.slice(0, 32)}-${attempt}`;
}

/** Longest item index and attempt suffix kept readable in an item's child run id (`i<index>-<attempt>`). */
const ITEM_SUFFIX_ROOM = 24;

/**
 * What the run ids of the children of map step `step`'s items start with: `<parent>-<step>-i`, or,
 * when that leaves too little room for the item's index and attempt, `sub-<32 hex>-i`.
 */
export function childItemRunPrefix(parentRunId: string, step: string): string {
  const prefix = `${parentRunId}-${step}-i`;
  if (prefix.length + ITEM_SUFFIX_ROOM <= MAX_RUN_ID_LENGTH) return prefix;
  const digest = createHash('sha256').update(`${parentRunId}\0${step}\0items`).digest('hex');
  return `sub-${digest.slice(0, 32)}-i`;
}

/**
 * The run id of the child of item `index` of map step `step`, attempt `attempt` of that item:
 * `<parent>-<step>-i<index>-<attempt>` (see {@link childItemRunPrefix}). It does not name the map
 * step's attempt, so a resumed map finds the children its items had started.
 */
export function childItemRunId(
  parentRunId: string,
  step: string,
  index: number,
  attempt: number,
): string {
  return `${childItemRunPrefix(parentRunId, step)}${index}-${attempt}`;
}

/** The `extra` entries of a child run's records (`parent_item`: a map item's child). */
export function childExtra(
  parentRunId: string,
  step: string,
  item?: number,
): Record<string, string | number> {
  return item === undefined
    ? { parent_run_id: parentRunId, parent_step: step }
    : { parent_run_id: parentRunId, parent_step: step, parent_item: item };
}

export interface ChildRunsOptions {
  /** The runs directory; undefined with persistence off (nothing to find at a resume). */
  runsDir: string | undefined;
  logger: Logger;
  /** Launches a child run (the runtime's `launch` with the child's parent). */
  launch(
    request: { workflow: string; input: Record<string, unknown>; runId: string },
    child: ChildLaunch,
  ): Promise<RunHandle>;
  /** Resumes an interrupted child run under its parent (the runtime's resumer). */
  resume(runId: string, child: ChildLaunch): Promise<RunHandle>;
  /** The session of an active run. */
  active(runId: string): RunSession | undefined;
  /** Cancels an active run. */
  cancel(runId: string, reason: string): void;
}

/** The runtime's {@link StartChildRun} for the sub-workflow steps of `parent`. */
export function createChildRuns(options: ChildRunsOptions): (parent: RunSession) => StartChildRun {
  const handleOf = (parent: RunSession, runId: string, done: Promise<RunRecord>): ChildRun => ({
    runId,
    done,
    cancel: (reason) => {
      // A parent left at shutdown (abandoned: its file stays running for the next start) leaves
      // its child the same way: the shutdown leaves it too, and the next start resumes both.
      // A parent ending otherwise (cancelled, timed out: a map's items abort after the step ended)
      // still cancels its children.
      if (!parent.isAbandoned) options.cancel(runId, reason);
    },
  });

  /** The child the step's previous attempt started, when a resumed parent can take it over. */
  async function previous(
    parent: RunSession,
    step: CompiledStep,
    attempt: number,
  ): Promise<ChildRun | undefined> {
    const runsDir = options.runsDir;
    if (attempt <= 1 || runsDir === undefined) return undefined;
    const runId = childRunId(parent.runId, step.name, attempt - 1);
    const running = options.active(runId);
    if (running !== undefined) return handleOf(parent, runId, running.done);
    const record = await readRunRecord(runsDir, runId);
    if (record === undefined) return undefined;
    if (record.status === 'success') {
      options.logger.info(
        { runId: parent.runId, step: step.name, child: runId },
        'child run reused',
      );
      return handleOf(parent, runId, Promise.resolve(record));
    }
    const interrupted =
      record.status === 'running' ||
      record.status === 'pending' ||
      (record.status === 'failed' && record.error === INTERRUPTED);
    if (!interrupted) return undefined;
    try {
      const handle = await options.resume(runId, { parent, step: step.name, index: step.index });
      return handleOf(parent, runId, handle.done);
    } catch (error) {
      // Not resumable (its workflow gone, its process alive): the attempt starts a new child.
      options.logger.warn(
        { runId: parent.runId, step: step.name, child: runId, err: errorMessage(error) },
        'child run not resumed; starting a new one',
      );
      return undefined;
    }
  }

  /**
   * The run files of a resumed map step's item children, by run id: one directory read per map
   * step of a parent (not one per item), kept while the parent runs.
   */
  const itemFiles = new WeakMap<RunSession, Map<string, Promise<Map<string, string>>>>();
  function itemFilesOf(parent: RunSession, step: string, runsDir: string) {
    let steps = itemFiles.get(parent);
    if (steps === undefined) {
      steps = new Map();
      itemFiles.set(parent, steps);
    }
    let files = steps.get(step);
    if (files === undefined) {
      files = listChildFiles(runsDir, childItemRunPrefix(parent.runId, step));
      steps.set(step, files);
    }
    return files;
  }

  /**
   * The child a resumed map item had started for this attempt, when there is one: still active
   * (taken over), finished (reused, `success` or its own failure, which then counts as this
   * attempt's), or interrupted (resumed under its id).
   */
  async function previousItem(
    parent: RunSession,
    step: CompiledStep,
    runId: string,
  ): Promise<ChildRun | undefined> {
    const runsDir = options.runsDir;
    if (runsDir === undefined) return undefined;
    const running = options.active(runId);
    if (running !== undefined) return handleOf(parent, runId, running.done);
    const name = (await itemFilesOf(parent, step.name, runsDir)).get(runId);
    if (name === undefined) return undefined;
    const record = await readRecordFile(runsDir, name);
    if (record === undefined) return undefined;
    const interrupted =
      record.status === 'running' ||
      record.status === 'pending' ||
      (record.status === 'failed' && record.error === INTERRUPTED);
    if (!interrupted) {
      options.logger.info(
        { runId: parent.runId, step: step.name, child: runId },
        'child run reused',
      );
      return handleOf(parent, runId, Promise.resolve(record));
    }
    try {
      const handle = await options.resume(runId, { parent, step: step.name });
      return handleOf(parent, runId, handle.done);
    } catch (error) {
      options.logger.warn(
        { runId: parent.runId, step: step.name, child: runId, err: errorMessage(error) },
        'child run not resumed',
      );
      throw error;
    }
  }

  return (parent) =>
    async ({ step, input, attempt, item }) => {
      if (item !== undefined) {
        const runId = childItemRunId(parent.runId, step.name, item.index, attempt);
        parent.linkChild(runId);
        // Only a resumed map (its step's attempt past the first) can find children of its items.
        const found = item.stepAttempt > 1 ? await previousItem(parent, step, runId) : undefined;
        if (found !== undefined) return found;
        const handle = await options.launch(
          { workflow: calledWorkflow(step)!, input, runId },
          { parent, step: step.name, item: item.index },
        );
        return handleOf(parent, runId, handle.done);
      }
      const found = await previous(parent, step, attempt);
      const runId = found?.runId ?? childRunId(parent.runId, step.name, attempt);
      parent.linkChild(runId);
      if (found !== undefined) return found;
      const handle = await options.launch(
        { workflow: step.workflowCall!.workflow, input, runId },
        { parent, step: step.name, index: step.index },
      );
      return handleOf(parent, runId, handle.done);
    };
}

/**
 * The `extra.child_run_ids` of a resumed parent: those its record lists, and every child its
 * sub-workflow steps' attempts had started whose run file is in `runsDir` (a record written
 * before the interruption, the start record with the journal folded in, lists none: children
 * are linked after it). An attempt's child has a known id ({@link childRunId}) and writes its
 * file before it runs, so one directory listing finds them; in the order they started (their
 * file names begin with the start time), the listed ones first.
 */
export async function resumedChildRunIds(
  runsDir: string,
  parentRunId: string,
  workflow: CompiledWorkflow,
  steps: readonly StepRecord[],
  listed: unknown,
): Promise<string[]> {
  const ids = Array.isArray(listed) ? listed.filter((id) => typeof id === 'string') : [];
  const wanted = new Map<string, string>();
  workflow.steps.forEach((step, i) => {
    const call = step.workflowCall;
    if (call === undefined) return;
    const entry = steps[i];
    const counted = entry?.metadata.attempts;
    const attempts = Math.max(
      typeof counted === 'number' ? counted : 0,
      (entry?.retry_count ?? 0) + 1,
    );
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const id = childRunId(parentRunId, step.name, attempt);
      // A run file is `<start time>_<workflow>_<run id>.json` (store/run-files.ts).
      wanted.set(`${call.workflow}_${id}.json`, id);
    }
  });
  let names: string[];
  try {
    names = await readdir(runsDir);
  } catch {
    return ids;
  }
  const found = names
    .filter((name) => !name.startsWith('.'))
    .sort()
    .map((name) => wanted.get(name.slice(name.indexOf('_') + 1)))
    .filter((id): id is string => id !== undefined && !ids.includes(id));
  return [...ids, ...found];
}

/** The run files of `runsDir` whose run id starts with `prefix`, by run id. */
async function listChildFiles(runsDir: string, prefix: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(runsDir);
  } catch {
    return found;
  }
  const marker = `_${prefix}`;
  for (const name of names) {
    if (name.startsWith('.') || !name.endsWith('.json')) continue;
    const at = name.lastIndexOf(marker);
    if (at >= 0) found.set(name.slice(at + 1, -'.json'.length), name);
  }
  return found;
}

/** A run file's record, if it reads as JSON. */
async function readRecordFile(runsDir: string, name: string): Promise<RunRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}

/** The record of run `runId` in `runsDir`, if its file is there and reads as JSON. */
async function readRunRecord(runsDir: string, runId: string): Promise<RunRecord | undefined> {
  const suffix = `_${runId}.json`;
  let names: string[];
  try {
    names = await readdir(runsDir);
  } catch {
    return undefined;
  }
  const name = names.find((entry) => entry.endsWith(suffix) && !entry.startsWith('.'));
  return name === undefined ? undefined : readRecordFile(runsDir, name);
}
