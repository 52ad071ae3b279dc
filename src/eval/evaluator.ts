/**
 * Evaluated runs: before the run, the sample is resolved and mapped onto the workflow's inputs
 * (request inputs win) and the rubric chosen; after it, `evaluation_start`, scoring,
 * `extra.evaluation` written into the run file, then `evaluation_complete`. Scoring failures
 * are recorded in the evaluation, never thrown.
 */
import { errorMessage, ValidationError } from '../errors.js';
import { evaluationEventFields } from '../events/evaluation.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { runFileName, writeRunFile } from '../store/run-files.js';
import type { FileWriter } from '../store/write-thread.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import type { DatasetSource } from './dataset-files.js';
import { parseDatasetSource, sampleAt, type DatasetCatalogue } from './datasets.js';
import { evaluateRun, type EvaluationResult } from './evaluate.js';
import type { Judge } from './judge.js';
import { readRubricFile } from './rubric-file.js';
import { adaptSample, expectedOutput, summarizeSample } from './samples.js';
import { DEFAULT_RUBRIC_ID, workflowRubric, type LoadedRubric } from '../workflow/rubric.js';

/** The evaluation fields of a run request. */
export interface EvaluationRequest {
  dataset_source?: string | undefined;
  dataset_id?: string | undefined;
  sample_index?: number | undefined;
  rubric_id?: string | undefined;
}

/** What is recorded in `extra.evaluation` when the run starts. */
export interface EvaluationSettings {
  enabled: true;
  status: 'pending' | 'complete' | 'failed';
  dataset_source: DatasetSource | null;
  dataset_id: string | null;
  sample_index: number | null;
  sample_id: string | null;
  rubric_id: string;
}

export interface PreparedEvaluation {
  /** The run's inputs: the sample's mapped inputs, overridden by the request's. */
  input: Record<string, unknown>;
  rubric: LoadedRubric;
  expected: string | undefined;
  settings: EvaluationSettings;
}

export type StoredEvaluation = EvaluationSettings &
  Partial<EvaluationResult> & { error: string | null; completed_at: string };

export interface EvaluatorOptions {
  datasets: DatasetCatalogue;
  judge: Judge;
  runsDir: string;
  /** Write the scored record into the run file. */
  persist: boolean;
  /** Told about each scored record (the history index). */
  onScored?: (record: RunRecord, filename: string) => void;
  /** Receives the evaluation events (the event hub). */
  publish?: (event: DistributiveOmit<WorkflowEvent, 'seq'>) => void;
  logger: Logger;
  writeFile?: FileWriter;
  now?: () => Date;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface Evaluator {
  /** Resolves the sample and rubric (404 unknown dataset, 422 bad source, index or rubric). */
  prepare(
    workflow: CompiledWorkflow,
    request: EvaluationRequest,
    inputs: Record<string, unknown>,
    loc: (string | number)[],
  ): Promise<PreparedEvaluation>;
  /** Scores a run once `done` resolves and records the result. Never rejects. */
  complete(
    done: Promise<RunRecord>,
    workflow: CompiledWorkflow,
    prepared: PreparedEvaluation,
  ): Promise<StoredEvaluation>;
  /**
   * Resolves when every evaluation in flight has finished. With `abort`, judge calls in flight
   * are aborted first (their criteria are reported as judge failures), so shutdown does not
   * wait for a slow model.
   */
  drain(options?: { abort?: boolean }): Promise<void>;
}

export function createEvaluator(options: EvaluatorOptions): Evaluator {
  const { datasets, judge, logger } = options;
  const now = options.now ?? (() => new Date());
  const inFlight = new Set<Promise<unknown>>();
  const aborter = new AbortController();

  async function chooseRubric(
    workflow: CompiledWorkflow,
    requested: string | undefined,
    loc: (string | number)[],
  ): Promise<LoadedRubric> {
    const block = workflow.document.evaluation;
    if (requested === undefined || requested === '') {
      const own = workflowRubric(workflow.name, block);
      if (own !== undefined) return own;
    }
    const id =
      requested !== undefined && requested !== ''
        ? requested
        : typeof block?.rubric === 'string'
          ? block.rubric
          : DEFAULT_RUBRIC_ID;
    try {
      return await readRubricFile(datasets.rubricsDir, id);
    } catch (error) {
      if (error instanceof ValidationError) throw error;
      const msg = `rubric not found: ${id}`;
      throw new ValidationError(msg, [
        { loc: [...loc, 'rubric_id'], msg, type: 'value_error.rubric' },
      ]);
    }
  }

  async function prepare(
    workflow: CompiledWorkflow,
    request: EvaluationRequest,
    inputs: Record<string, unknown>,
    loc: (string | number)[],
  ): Promise<PreparedEvaluation> {
    const rubric = await chooseRubric(workflow, request.rubric_id, loc);
    const settings: EvaluationSettings = {
      enabled: true,
      status: 'pending',
      dataset_source: null,
      dataset_id: null,
      sample_index: null,
      sample_id: null,
      rubric_id: rubric.id,
    };
    const sourceGiven = request.dataset_source !== undefined && request.dataset_source !== 'none';
    if (!sourceGiven && (request.dataset_id === undefined || request.dataset_id === '')) {
      return { input: inputs, rubric, expected: undefined, settings };
    }
    const source = parseDatasetSource(request.dataset_source ?? 'repository', [
      ...loc,
      'dataset_source',
    ]);
    if (request.dataset_id === undefined || request.dataset_id === '') {
      const msg = 'dataset_id is required with a dataset_source';
      throw new ValidationError(msg, [{ loc: [...loc, 'dataset_id'], msg, type: 'missing' }]);
    }
    const dataset = await datasets.get(source, request.dataset_id);
    const index = request.sample_index ?? 0;
    const sample = await sampleAt(dataset, index, [...loc, 'sample_index']);
    const mapped = adaptSample(dataset, sample, workflow).adapted_inputs;
    return {
      input: { ...mapped, ...inputs },
      rubric,
      expected: expectedOutput(sample),
      settings: {
        ...settings,
        dataset_source: source,
        dataset_id: dataset.id,
        sample_index: index,
        sample_id: summarizeSample(sample, index).sample_id,
      },
    };
  }

  async function score(
    done: Promise<RunRecord>,
    workflow: CompiledWorkflow,
    prepared: PreparedEvaluation,
  ): Promise<StoredEvaluation> {
    const record = await done;
    const runId = record.run_id;
    options.publish?.({
      type: 'evaluation_start',
      run_id: runId,
      timestamp: now().toISOString(),
      rubric_id: prepared.rubric.id,
      rubric: prepared.rubric.name,
      evaluator: judge.kind,
      dataset_source: prepared.settings.dataset_source,
      dataset_id: prepared.settings.dataset_id,
      sample_index: prepared.settings.sample_index,
    });
    let stored: StoredEvaluation;
    try {
      const result = await evaluateRun({
        record,
        workflow,
        rubric: prepared.rubric,
        expected: prepared.expected,
        judge,
        signal: aborter.signal,
      });
      stored = {
        ...prepared.settings,
        status: 'complete',
        ...result,
        error: null,
        completed_at: now().toISOString(),
      };
    } catch (error) {
      logger.warn({ runId, err: errorMessage(error) }, 'evaluation failed');
      stored = {
        ...prepared.settings,
        status: 'failed',
        error: `evaluation failed: ${errorMessage(error)}`,
        completed_at: now().toISOString(),
      };
    }
    const scored: RunRecord = { ...record, extra: { ...record.extra, evaluation: stored } };
    const filename = runFileName(Date.parse(record.start_time), record.workflow_name, runId);
    if (options.persist) {
      try {
        await writeRunFile(options.runsDir, filename, scored, options.writeFile);
      } catch (error) {
        logger.error({ runId, err: errorMessage(error) }, 'evaluation not written to the run file');
      }
    }
    options.onScored?.(scored, filename);
    options.publish?.({
      type: 'evaluation_complete',
      run_id: runId,
      timestamp: now().toISOString(),
      ...(evaluationEventFields(stored as unknown as Record<string, unknown>) ?? {}),
    });
    return stored;
  }

  return {
    prepare,
    complete(done, workflow, prepared) {
      const promise = score(done, workflow, prepared);
      inFlight.add(promise);
      // score never rejects; the catch only keeps this bookkeeping chain from being unhandled.
      promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
      return promise;
    },
    async drain(drainOptions = {}) {
      if (drainOptions.abort === true) aborter.abort(new Error('the service is shutting down'));
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
