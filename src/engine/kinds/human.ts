/**
 * The executor of human steps (kind `human`, src/workflow/kinds/human.ts): an attempt asks its
 * question and waits. The question is put in the runtime's {@link HumanInbox} (listed by
 * `GET /api/approvals`, answered by `POST /api/approvals/{call_id}`) and announced with the
 * spec's `approval_required` event (`kind: "input"`, `prompt`, `schema`); the wait ends with an
 * `approval_decision` when the answer comes (approve, the answer as the step's outputs), the
 * step's timeout passes (`on_timeout`: fail, or approve with the default answer) or the run is
 * cancelled or timed out (deny; the engine fails the step with the run's reason). Meanwhile the
 * graph machine shows the step `awaiting_input` (the attempt's `onApproval`).
 */
import { createHash } from 'node:crypto';
import type {
  AttemptResult,
  AttemptRunner,
  EngineClock,
} from '../../../machines/engine-contract.js';
import { errorMessage } from '../../errors.js';
import type { ApprovalEventFields } from '../../events/event-mapper.js';
import { HUMAN_LABEL } from '../../workflow/step-kinds.js';
import type { HumanInbox } from './human-inbox.js';

/** The `provider` of a human step's `approval_decision` (who decided: a person, or its timeout). */
export const HUMAN_PROVIDER = 'human';

export interface HumanExecutorOptions {
  runId: string;
  /** The run's workflow name (listed with the question). */
  workflow: string;
  inbox: HumanInbox;
  clock: EngineClock;
  /** Hands an `approval_required` / `approval_decision` to the run's events. */
  emit: (event: ApprovalEventFields) => void;
  /**
   * What the run keeps of an answer (its byte budget); a throw fails the attempt.
   * @default keeps every answer
   */
  holdOutput?: (output: Record<string, unknown>) => Record<string, unknown>;
  /**
   * When a resumed run's step first put its question (epoch ms; its start record's
   * `metadata.requested_at`): asked again with that time, its timeout counting from it.
   * @default none: the question is put when the attempt starts
   */
  askedAt?: ((step: string) => number | undefined) | undefined;
}

/**
 * The id of the question of `step` in run `runId`: a UUID-shaped hash of both, so that a resumed
 * run asks again with the id its clients already have. Not of the attempt: a resume makes a new
 * attempt of the interrupted step, and a human step asks once per run (it has one attempt).
 */
export function humanRequestId(runId: string, step: string): string {
  const hex = createHash('sha256')
    .update(JSON.stringify([runId, step, HUMAN_LABEL]))
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The executor of a run's human steps. Never rejects. */
export function createHumanExecutor(options: HumanExecutorOptions): AttemptRunner {
  const { runId, workflow, inbox, clock, emit, holdOutput, askedAt } = options;
  return (request) => {
    const step = request.step;
    const human = step.human;
    if (human === undefined)
      return Promise.resolve(failure(`step '${step.name}' asks no question`));
    // Asked after the engine's current transition: its `step_start` (emitted at the
    // transition's end) comes before the question's `approval_required` on both engines.
    return Promise.resolve().then(() => ask(request, human));
  };

  function ask(
    request: Parameters<AttemptRunner>[0],
    human: NonNullable<Parameters<AttemptRunner>[0]['step']['human']>,
  ): Promise<AttemptResult> | AttemptResult {
    const step = request.step;
    if (request.aborted ?? request.signal.aborted)
      return failure(errorMessage(request.signal.reason));
    const id = humanRequestId(runId, step.name);
    const prompt = typeof request.input.prompt === 'string' ? request.input.prompt : '';
    // The question's time is its step's start (what the run file records), or, resumed, the
    // first ask's: a restart neither moves it nor gives the person a new timeout.
    const requestedAt = askedAt?.(step.name) ?? request.startedAt ?? clock.now();
    const seconds = human.timeoutSeconds;
    const expiresAt = seconds === undefined ? undefined : requestedAt + seconds * 1000;
    const signal = request.signal;
    const base = { step: step.name, tool_name: HUMAN_LABEL, call_id: id, kind: 'input' } as const;
    return new Promise<AttemptResult>((resolve) => {
      let timer: unknown;
      const finish = (
        result: AttemptResult,
        decision: 'approve' | 'deny',
        reason: string,
        answer?: Record<string, unknown>,
      ): void => {
        if (!inbox.has(id)) return;
        inbox.end(id);
        if (timer !== undefined) clock.clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        emit({
          type: 'approval_decision',
          ...base,
          decision,
          provider: HUMAN_PROVIDER,
          reason,
          ...(answer === undefined ? {} : { answer }),
        });
        request.onApproval?.(false);
        resolve(result);
      };
      const answered = (answer: Record<string, unknown>, reason: string): void =>
        finish(success(answer, holdOutput), 'approve', reason, answer);
      const onAbort = (): void => {
        const why = errorMessage(signal.reason);
        finish(failure(why), 'deny', `${why} while waiting for an answer`);
      };
      inbox.add({
        info: {
          id,
          runId,
          workflow,
          step: step.name,
          prompt,
          schema: human.schema,
          requestedAt,
          expiresAt,
        },
        check: (answer) => human.check(answer),
        settle: (answer) => answered(answer, 'answered'),
      });
      emit({
        type: 'approval_required',
        ...base,
        prompt,
        schema: human.schema,
        ...(expiresAt === undefined ? {} : { expires_at: new Date(expiresAt).toISOString() }),
      });
      request.onApproval?.(true);
      signal.addEventListener('abort', onAbort, { once: true });
      if (seconds !== undefined) {
        const left = Math.max(0, requestedAt + seconds * 1000 - clock.now());
        timer = clock.setTimeout(() => {
          const why = `no answer within ${seconds}s (timed out)`;
          const fallback = human.defaultAnswer;
          if (human.onTimeout === 'default' && fallback !== undefined) {
            answered(structuredClone(fallback), `${why}: the default answer`);
          } else finish(failure(why), 'deny', why);
        }, left);
        // A question waiting does not by itself keep the process alive (a server or the CLI's
        // prompt does): a run left at shutdown must not hold an embedding app or a test run open
        // until its question times out (a day in workflows/human_review.yaml).
        (timer as { unref?: () => void } | undefined)?.unref?.();
      }
    });
  }
}

function success(
  answer: Record<string, unknown>,
  hold: HumanExecutorOptions['holdOutput'],
): AttemptResult {
  let output = answer;
  if (hold !== undefined) {
    try {
      output = hold(answer);
    } catch (error) {
      return failure(errorMessage(error));
    }
  }
  return { ok: true, output, error: null, modelUsed: null, tokensUsed: null, iterations: 1 };
}

function failure(error: string): AttemptResult {
  return { ok: false, output: null, error, modelUsed: null, tokensUsed: null, iterations: 1 };
}
