/**
 * Run and step-attempt spans, fed by the runtime's per-run observer seam (not by wire events:
 * engine events carry every attempt's start, which the wire does not). A run span lasts from
 * the run's acceptance to its `workflow_end` and is a child of the context that started it
 * (an HTTP request's span); each step attempt is a child span of its run. Model and tool calls
 * find their parent through {@link RunSpans.attemptContext}.
 */
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { EngineEvent, StepOutcome } from '../engine/adapter.js';
import type { ObservedRun, RunObserver, RunObserverFactory } from '../engine/run-observer.js';
import type { RunStatus } from '../generated/events.js';
import type { CompiledStep } from '../workflow/types.js';
import { ATTR, defined, setSensitive } from './attributes.js';

export interface RunSpans {
  /** The runtime's per-run observer factory (`createRuntime` calls it for each run). */
  readonly observe: RunObserverFactory;
  /** The context of a step's running attempt (the parent of its model and tool calls). */
  readonly attemptContext: (runId: string, step: string) => Context | undefined;
}

/** Runs whose spans are open, by run id; an entry leaves when its run ends. */
type OpenRuns = Map<string, RunTrace>;

export function createRunSpans(tracer: Tracer, sensitive: boolean): RunSpans {
  const open: OpenRuns = new Map();
  return {
    observe: (run) => {
      const traced = new RunTrace(tracer, sensitive, run, open);
      open.set(run.runId, traced);
      return traced;
    },
    attemptContext: (runId, step) => open.get(runId)?.attemptContext(step),
  };
}

class RunTrace implements RunObserver {
  private readonly span: Span;
  private readonly context: Context;
  /** The running attempt's span of each step, by step index. */
  private readonly attempts: (Span | undefined)[] = [];

  constructor(
    private readonly tracer: Tracer,
    private readonly sensitive: boolean,
    private readonly run: ObservedRun,
    private readonly open: OpenRuns,
  ) {
    const { workflow } = run;
    this.span = tracer.startSpan(
      `run ${workflow.name}`,
      {
        startTime: run.acceptedAt,
        attributes: {
          [ATTR.RUN_ID]: run.runId,
          [ATTR.WORKFLOW]: workflow.name,
          [ATTR.ADAPTER]: run.adapter,
          [ATTR.STEP_COUNT]: workflow.steps.length,
        },
      },
      run.parent ?? ROOT_CONTEXT,
    );
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
  }

  attemptContext(stepName: string): Context | undefined {
    const steps = this.run.workflow.steps;
    for (let i = 0; i < steps.length; i++) {
      const span = this.attempts[i];
      if (span !== undefined && steps[i]!.name === stepName)
        return trace.setSpan(ROOT_CONTEXT, span);
    }
    return undefined;
  }

  engineEvent(event: EngineEvent): void {
    const step = this.run.workflow.steps[event.index];
    if (step === undefined) return;
    switch (event.type) {
      case 'step.started':
        this.attempts[event.index]?.end();
        this.attempts[event.index] = this.startAttempt(step, event.attempt, event.input);
        return;
      case 'step.retrying': {
        const span = this.attempts[event.index];
        if (span === undefined) return;
        this.attempts[event.index] = undefined;
        span.setAttribute(ATTR.STATUS, 'retrying');
        span.setAttribute(ATTR.ERROR, event.error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: event.error });
        span.end();
        return;
      }
      case 'step.iteration':
        this.attempts[event.index]?.addEvent('iteration', { iteration: event.iteration });
        return;
      case 'step.finished':
        this.finishAttempt(event.index, event.outcome);
        return;
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  }

  ended(end: { status: RunStatus; error: string | null }): void {
    // Attempts the engine never finished (the run was aborted around them) end with the run.
    for (let i = 0; i < this.attempts.length; i++) {
      const span = this.attempts[i];
      if (span === undefined) continue;
      span.setAttribute(ATTR.STATUS, 'failed');
      span.setStatus({ code: SpanStatusCode.ERROR, message: end.error ?? 'run ended' });
      span.end();
    }
    this.attempts.length = 0;
    this.span.setAttribute(ATTR.STATUS, end.status);
    if (end.error !== null) {
      this.span.setAttribute(ATTR.ERROR, end.error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
    }
    this.span.end();
    this.open.delete(this.run.runId);
  }

  private startAttempt(step: CompiledStep, attempt: number, input: unknown): Span {
    const span = this.tracer.startSpan(
      `step ${step.name}`,
      {
        attributes: defined({
          [ATTR.RUN_ID]: this.run.runId,
          [ATTR.WORKFLOW]: this.run.workflow.name,
          [ATTR.ADAPTER]: this.run.adapter,
          [ATTR.STEP]: step.name,
          [ATTR.AGENT]: step.agent,
          [ATTR.TIER]: step.tier,
          [ATTR.ATTEMPT]: attempt,
          [ATTR.RETRY]: attempt - 1,
        }),
      },
      this.context,
    );
    setSensitive(span, this.sensitive, ATTR.STEP_INPUT, input);
    return span;
  }

  /** Ends the step's last attempt with its outcome (a skipped step never had one). */
  private finishAttempt(index: number, outcome: StepOutcome): void {
    const span = this.attempts[index];
    if (span === undefined) return;
    this.attempts[index] = undefined;
    span.setAttribute(ATTR.STATUS, outcome.status);
    if (outcome.modelUsed !== null) span.setAttribute(ATTR.MODEL_USED, outcome.modelUsed);
    if (outcome.tokensUsed !== null) {
      span.setAttribute(ATTR.GEN_AI_INPUT_TOKENS, outcome.tokensUsed.input);
      span.setAttribute(ATTR.GEN_AI_OUTPUT_TOKENS, outcome.tokensUsed.output);
    }
    if (outcome.status === 'failed') {
      const message = outcome.error ?? 'failed';
      span.setAttribute(ATTR.ERROR, message);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    } else {
      setSensitive(span, this.sensitive, ATTR.STEP_OUTPUT, outcome.output);
    }
    span.end();
  }
}
