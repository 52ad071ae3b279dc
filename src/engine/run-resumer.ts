/**
 * Resuming a run from its files (docs/durable-runs.md): a run whose process stopped goes on in
 * this runtime under the same run id, its finished steps seeded into the engine (not run again),
 * its interrupted step retried, with the workflow it started with (its pinned copy).
 *
 * The seam for every way a run comes back: the start-up scan (`restart`), the orphan watch when
 * a process sharing the runs directory dies (`owner_gone`), and `runtime.resume(runId)` /
 * `POST /api/runs/{run_id}/resume` (`request`). A scale-out worker taking over a dead worker's
 * run would call {@link RunResumer.resumeRecord} the same way.
 */
import { readdir } from 'node:fs/promises';
import type { EngineSeed } from '../../machines/engine-contract.js';
import {
  AppError,
  NotFoundError,
  ERROR_CODES,
  RunNotResumableError,
  errorMessage,
} from '../errors.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { recoverJournal, withWarning } from '../store/journal-recovery.js';
import { RUN_ID } from '../store/history.js';
import { readInterruptedRecord, resumePlan, ResumePlanError } from '../store/resume-plan.js';
import { ownerFileAlive } from '../store/stale-temp-files.js';
import type { ResumableRun } from '../store/startup-recovery.js';
import { readPinnedWorkflow, recordWorkflowHash, workflowHash } from '../store/workflow-pins.js';
import type { CompiledWorkflow, WorkflowDocument } from '../workflow/types.js';
import { isAdapterName, type AdapterName } from '../config/adapter-names.js';
import type { RunHandle } from './types.js';

/** Why a run was resumed, as `extra.resumes[].reason` and the resumes metric say. */
export const RESUME_REASONS = ['restart', 'owner_gone', 'request', 'worker_lost'] as const;
export type ResumeReason = (typeof RESUME_REASONS)[number];

/** One resume of a run, as its record lists it under `extra.resumes`. */
export interface ResumeEntry {
  /** When (ISO 8601). */
  at: string;
  reason: ResumeReason;
  /** The owner id of the process the run was interrupted in (null when its record named none). */
  from_process: string | null;
}

/** Everything the runtime needs to launch a resumed run. */
export interface ResumedLaunch {
  runId: string;
  filename: string;
  workflow: CompiledWorkflow;
  adapter: AdapterName;
  inputs: Record<string, unknown>;
  /** The run's original start (epoch ms): its file name and durations count from it. */
  startTime: number;
  extra: Record<string, unknown>;
  /** The step records of its new start record. */
  steps: StepRecord[];
  seed: EngineSeed;
}

/** What {@link RunResumer.resumeFound} did. */
export interface ResumeOutcome {
  /** Run files resumed. */
  resumed: string[];
  /** Run files that could not be resumed and were marked interrupted. */
  interrupted: string[];
  /** Run files left to another process (`takeOver` said so). */
  left: string[];
}

export interface RunResumerOptions {
  runsDir: string;
  clock: { now(): number };
  logger: Logger;
  /** The run-record bound: a journal is read no further. */
  maxRecordBytes: number;
  /** Compiles a pinned workflow document. */
  compile(document: WorkflowDocument): Promise<CompiledWorkflow>;
  /** The current workflow of this name in the workflows directory (throws when there is none). */
  byName(name: string): Promise<CompiledWorkflow>;
  /** Launches the resumed run (the runtime's admission, session and start record). */
  launch(run: ResumedLaunch): Promise<RunHandle>;
  isActive(runId: string): boolean;
  /** This runtime's owner id (undefined without one). */
  self(): Promise<string | undefined>;
  /**
   * Who resumes a run a scan found (RuntimeOptions.takeOver): the reason to resume it with here,
   * undefined to leave it. @default every run, with the scan's reason
   */
  takeOver?:
    | ((
        run: { runId: string; filename: string; owner: string | undefined },
        reason: ResumeReason,
        self: string | undefined,
      ) => Promise<ResumeReason | undefined>)
    | undefined;
  /** Marks a run that cannot be resumed interrupted for good, with `warning` in its record. */
  markInterrupted(filename: string, record: RunRecord, warning: string): Promise<void>;
}

export interface RunResumer {
  /** Resumes the run with this id from its file (`runtime.resume`). */
  resume(runId: string, reason?: ResumeReason): Promise<RunHandle>;
  /** Resumes a run whose record (its journal folded in) is at hand. */
  resumeRecord(filename: string, record: RunRecord, reason: ResumeReason): Promise<RunHandle>;
  /** Resumes runs a scan left, marking interrupted those that cannot go on (see the outcome). */
  resumeFound(runs: readonly ResumableRun[], reason: ResumeReason): Promise<ResumeOutcome>;
}

/** Resumes launched at once by a scan (each writes its start record). */
const PARALLEL_RESUMES = 16;

export function createRunResumer(options: RunResumerOptions): RunResumer {
  const { runsDir, logger } = options;

  async function findRunFile(runId: string): Promise<string | undefined> {
    const suffix = `_${runId}.json`;
    let names: string[];
    try {
      names = await readdir(runsDir);
    } catch {
      return undefined;
    }
    return names.find((name) => name.endsWith(suffix) && !name.startsWith('.'));
  }

  /** The workflow the run started with: its pinned copy, else the current one if unchanged. */
  async function workflowOf(record: RunRecord): Promise<{
    workflow: CompiledWorkflow;
    warning?: string;
  }> {
    const hash = recordWorkflowHash(record.extra);
    const name = record.workflow_name;
    if (hash !== undefined) {
      const pinned = await readPinnedWorkflow(runsDir, hash);
      if (pinned !== undefined) return { workflow: await options.compile(pinned) };
    }
    let current: CompiledWorkflow | undefined;
    try {
      current = await options.byName(name);
    } catch {
      current = undefined;
    }
    if (hash !== undefined) {
      if (current !== undefined && workflowHash(current.document) === hash) {
        return { workflow: current };
      }
      throw new RunNotResumableError(
        `the workflow run ${record.run_id} started with (${hash}) is gone: its pinned copy is missing and workflow '${name}' ${current === undefined ? 'no longer exists' : 'has changed'}`,
        422,
      );
    }
    if (current === undefined) {
      throw new RunNotResumableError(
        `run ${record.run_id} names no pinned workflow and workflow '${name}' no longer exists`,
        422,
      );
    }
    return {
      workflow: current,
      warning: `resumed with the current version of workflow ${name}: the run file names no pinned copy`,
    };
  }

  async function resumeRecord(
    filename: string,
    record: RunRecord,
    reason: ResumeReason,
  ): Promise<RunHandle> {
    if (!isAdapterName(record.adapter)) {
      throw new RunNotResumableError(`run ${record.run_id} names an unknown adapter`, 422);
    }
    const startTime = Date.parse(record.start_time);
    if (!Number.isFinite(startTime)) {
      throw new RunNotResumableError(`run ${record.run_id} has no valid start time`, 422);
    }
    const { workflow, warning } = await workflowOf(record);
    let plan;
    try {
      plan = resumePlan(record, workflow);
    } catch (error) {
      if (!(error instanceof ResumePlanError)) throw error;
      throw new RunNotResumableError(`run ${record.run_id} cannot go on: ${error.message}`, 422);
    }
    const extra = withWarning(record, warning).extra as Record<string, unknown>;
    const resumes = Array.isArray(extra.resumes) ? (extra.resumes as unknown[]) : [];
    const entry: ResumeEntry = {
      at: new Date(options.clock.now()).toISOString(),
      reason,
      from_process: record.owner ?? null,
    };
    const handle = await options.launch({
      runId: record.run_id,
      filename,
      workflow,
      adapter: record.adapter,
      inputs: record.inputs,
      startTime,
      extra: { ...extra, resumes: [...resumes, entry] },
      steps: plan.steps,
      seed: plan.seed,
    });
    logger.info(
      {
        runId: record.run_id,
        reason,
        fromProcess: entry.from_process,
        finished: plan.seed.steps.size,
        interrupted: plan.interrupted,
      },
      'run resumed',
    );
    return handle;
  }

  async function resume(runId: string, reason: ResumeReason = 'request'): Promise<RunHandle> {
    if (!RUN_ID.test(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    if (options.isActive(runId)) {
      throw new RunNotResumableError(
        `run ${runId} is active; only an interrupted run resumes`,
        409,
      );
    }
    const filename = await findRunFile(runId);
    if (filename === undefined) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    let record = await readInterruptedRecord(runsDir, runId, filename);
    if (record.status === 'running' || record.status === 'pending') {
      const owner = record.owner;
      if (
        owner !== undefined &&
        owner !== (await options.self()) &&
        (await ownerFileAlive(runsDir, `.${owner}.owner`))
      ) {
        throw new RunNotResumableError(
          `run ${runId} is running in another process (owner ${owner})`,
          409,
        );
      }
      const recovered = await recoverJournal(record, {
        runsDir,
        runFile: filename,
        maxBytes: options.maxRecordBytes,
        logger,
      });
      record = withWarning(recovered.record, recovered.warning);
    }
    return resumeRecord(filename, record, reason);
  }

  async function resumeFound(
    runs: readonly ResumableRun[],
    reason: ResumeReason,
  ): Promise<ResumeOutcome> {
    const outcome: ResumeOutcome = { resumed: [], interrupted: [], left: [] };
    // A child run (a sub-workflow step's) found with its parent is resumed by its parent's step
    // (engine/child-runs.ts), under it; resumed here too, it would run twice.
    const found = new Set(runs.map((run) => run.record.run_id));
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < runs.length) {
        const { filename, record } = runs[next++]!;
        const parent = record.extra?.parent_run_id;
        if (typeof parent === 'string' && found.has(parent)) {
          outcome.left.push(filename);
          continue;
        }
        try {
          let why: ResumeReason | undefined = reason;
          if (options.takeOver !== undefined) {
            const run = { runId: record.run_id, filename, owner: record.owner };
            why = await options.takeOver(run, reason, await options.self());
            if (why === undefined) {
              outcome.left.push(filename);
              continue;
            }
          }
          await resumeRecord(filename, record, why);
          outcome.resumed.push(filename);
        } catch (error) {
          if (error instanceof RunNotResumableError) {
            await markInterrupted(filename, record, error.message);
            outcome.interrupted.push(filename);
          } else {
            // Closing, or the runs directory refusing writes: the file stays as it is, and the
            // next start (or this runtime's orphan watch, for a live one) finds it again.
            logger.warn(
              {
                file: filename,
                err: errorMessage(error),
                code: error instanceof AppError ? error.code : undefined,
              },
              'run not resumed; left to the next start',
            );
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_RESUMES, runs.length) }, worker));
    return outcome;
  }

  async function markInterrupted(filename: string, record: RunRecord, why: string) {
    logger.warn({ file: filename, reason: why }, 'run cannot be resumed; marked interrupted');
    try {
      await options.markInterrupted(filename, record, `not resumed: ${why}`);
    } catch (error) {
      logger.error({ file: filename, err: errorMessage(error) }, 'run not marked interrupted');
    }
  }

  return { resume, resumeRecord, resumeFound };
}
