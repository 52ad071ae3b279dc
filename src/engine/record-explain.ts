/**
 * The explanation of a run that no engine of this process runs, from its run file: an ended run
 * explains its end (nothing waits; its status, the first failed step, how each step that did not
 * succeed ended), a run whose file still says `running` is not active (its owner is gone, or it
 * runs elsewhere). A step skipped by a false `when:` shows the expression and the values its
 * names have in the run file (the workflow as it is now gives the expression).
 */
import type { RunRecord } from '../generated/run-record.js';
import type {
  RunExplanationResponse,
  StepExplanation,
} from '../generated/api/run-explanation-response.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import { conditionValues } from '../../machines/scheduler/step-waits.js';
import { SKIP_CONDITION_FALSE } from '../../machines/scheduler/skip-propagation.js';
import { conditionWait, endedWait } from './run-explain.js';

type StepView = {
  status: 'success' | 'failed' | 'skipped';
  outputs: Record<string, unknown> | null;
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The scope a `when:` would read, rebuilt from the run file (context from step outputs mappings). */
function recordScope(record: RunRecord, workflow: CompiledWorkflow | undefined) {
  const steps: Record<string, StepView> = {};
  const context: Record<string, unknown> = {};
  for (const step of record.steps) {
    if (step.status !== 'success' && step.status !== 'failed' && step.status !== 'skipped')
      continue;
    const outputs = isObject(step.output) ? step.output : null;
    steps[step.step_name] = { status: step.status, outputs };
    const mapping = workflow?.steps.find((s) => s.name === step.step_name)?.outputs ?? {};
    if (step.status === 'success')
      for (const [key, variable] of Object.entries(mapping))
        context[variable] = outputs?.[key] ?? null;
  }
  return { inputs: record.inputs, steps, context };
}

/** Explains `record`; `workflow` (the workflow as it is now, when it loads) gives `when:` texts. */
export function explainRecord(
  record: RunRecord,
  workflow: CompiledWorkflow | undefined,
): RunExplanationResponse {
  const scope = recordScope(record, workflow);
  const steps: StepExplanation[] = [];
  for (const step of record.steps) {
    if (step.status === 'success') continue;
    if (step.status === 'failed') {
      steps.push({
        step: step.step_name,
        status: 'failed',
        waits: [endedWait('failed', step.error)],
      });
      continue;
    }
    if (step.status !== 'skipped') {
      steps.push({
        step: step.step_name,
        status:
          step.status === 'retrying'
            ? 'retrying'
            : step.status === 'running'
              ? 'running'
              : 'pending',
        waits: [],
      });
      continue;
    }
    const reason = step.metadata.skip_reason ?? step.error ?? null;
    const compiled = workflow?.steps.find((s) => s.name === step.step_name);
    const when = workflow?.document.steps[compiled?.index ?? -1]?.when;
    steps.push({
      step: step.step_name,
      status: 'skipped',
      waits: [
        reason === SKIP_CONDITION_FALSE &&
        when !== undefined &&
        compiled?.whenReferences !== undefined
          ? conditionWait(String(when), conditionValues(compiled.whenReferences, scope), 'record')
          : endedWait('skipped', reason),
      ],
    });
  }
  const ended = record.status === 'success' || record.status === 'failed';
  const failed = record.steps.find((step) => step.status === 'failed')?.step_name ?? null;
  if (!ended) {
    return {
      run_id: record.run_id,
      workflow: record.workflow_name,
      status: 'running',
      reason: 'not_active',
      source: 'record',
      message: `Run ${record.run_id} (${record.workflow_name}) is not active in this service: its run file says ${record.status}, started ${record.start_time}${record.owner === undefined ? '' : ` by ${record.owner}`}. Its process is gone or it runs elsewhere; recovery ends a run whose owner is gone.`,
      steps,
    };
  }
  const how =
    record.status === 'success'
      ? 'succeeded'
      : `failed${failed === null ? '' : ` at step ${failed}`}${record.error === null ? '' : `: ${record.error}`}`;
  return {
    run_id: record.run_id,
    workflow: record.workflow_name,
    status: record.status === 'success' ? 'success' : 'failed',
    reason: 'finished',
    source: 'record',
    message: `Run ${record.run_id} (${record.workflow_name}) has ended: it ${how}${record.end_time === null ? '' : ` (${record.end_time})`}. Nothing waits.`,
    failed_step: failed,
    error: record.error,
    steps,
  };
}
