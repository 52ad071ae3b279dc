/**
 * Scores one finished run against a rubric: computed criteria and gates from the run, the judge
 * for `judge` criteria, then the scoring math. Yields to the event loop between phases so a
 * burst of evaluations never stalls request handling.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { RunRecord } from '../generated/run-record.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import {
  candidateText,
  hardGates,
  measure,
  outputCompleteness,
  similarity,
  type RunContext,
} from './criteria.js';
import type { Judge, JudgeOutcome } from './judge.js';
import { scoreRubric } from './scoring.js';
import type { EvaluationScore, Measurement } from './types.js';
import type { LoadedRubric } from '../workflow/rubric.js';

/** The stored result: the score plus who judged and how. */
export interface EvaluationResult extends EvaluationScore {
  evaluator: Judge['kind'];
  judge: Pick<JudgeOutcome, 'status' | 'model' | 'attempts' | 'error'>;
}

export interface EvaluateRunOptions {
  record: RunRecord;
  workflow: Pick<
    CompiledWorkflow,
    'name' | 'description' | 'outputNames' | 'optionalOutputs' | 'document'
  >;
  rubric: LoadedRubric;
  expected: string | undefined;
  judge: Judge;
  signal?: AbortSignal;
}

const DEFAULT_ANCHORS = {
  '1': 'Fails the criterion.',
  '3': 'Meets it partly.',
  '5': 'Meets it fully.',
};

export async function evaluateRun(options: EvaluateRunOptions): Promise<EvaluationResult> {
  const { record, rubric, judge } = options;
  const context: RunContext = { record, workflow: options.workflow, expected: options.expected };
  const measurements: Record<string, Measurement> = {};
  for (const criterion of rubric.criteria) {
    if (criterion.metric !== 'judge')
      measurements[criterion.id] = measure(criterion.metric, context);
  }
  const gates = hardGates(context);
  await yieldToLoop();

  const judged = rubric.criteria.filter((c) => c.metric === 'judge');
  const candidate = candidateText(record.final_output);
  const outcome = await judge.rate(
    {
      task: `${options.workflow.description || options.workflow.name}\nInputs: ${JSON.stringify(record.inputs)}`,
      candidate,
      expected: options.expected,
      criteria: judged.map((c) => ({
        id: c.id,
        description: c.description ?? c.name ?? c.id,
        anchors: c.anchors ?? DEFAULT_ANCHORS,
      })),
      signals: {
        succeeded: record.status === 'success',
        completeness: outputCompleteness(context),
        similarity:
          options.expected === undefined ? undefined : similarity(candidate, options.expected),
      },
    },
    options.signal,
  );
  for (const c of judged) {
    const score = outcome.scores[c.id];
    measurements[c.id] =
      score === undefined
        ? { value: null, detail: 'judge failed', error: outcome.error ?? 'no score' }
        : { value: score, detail: outcome.reasons[c.id] ?? `judged ${score}/5` };
  }
  await yieldToLoop();
  return {
    ...scoreRubric(rubric, measurements, gates),
    evaluator: judge.kind,
    judge: {
      status: outcome.status,
      model: outcome.model,
      attempts: outcome.attempts,
      error: outcome.error,
    },
  };
}
