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
import type { EngineEvent, StepOutcome } from '../../machines/engine-contract.js';
import type { ObservedRun, RunObserver, RunObserverFactory } from './run-observer.js';
import type { RunStatus } from '../generated/events.js';
import { STEP_STATUS, type CompiledStep } from '../workflow/types.js';
import { ATTR, setSensitive } from './attributes.js';

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
  /**
   * Steps whose attempt span a call made before the attempt's `step.started` arrived: engines
   * emit a transition's events after it, and an agent may call a model synchronously within
   * it. That event then describes this span rather than starting another.
   */
  private readonly early: boolean[] = [];
  /**
   * Whether the run's trace is sampled. A run sampled out makes no step spans at all (not
   * even non-recording ones, ~0.8 µs each): its steps cost one check per engine event.
   */
  private readonly recording: boolean;

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
    this.recording = this.span.isRecording();
  }

  attemptContext(stepName: string): Context | undefined {
    // Calls of a sampled-out run get its context, so that they are sampled out with it.
    if (!this.recording) return this.context;
    const steps = this.run.workflow.steps;
    const index = steps.findIndex((step) => step.name === stepName);
    if (index < 0) return undefined;
    let span = this.attempts[index];
    if (span === undefined) {
      span = this.startAttempt(steps[index]!);
      this.attempts[index] = span;
      this.early[index] = true;
    }
    return trace.setSpan(ROOT_CONTEXT, span);
  }

  engineEvent(event: EngineEvent): void {
    if (!this.recording) return;
    const step = this.run.workflow.steps[event.index];
    if (step === undefined) return;
    switch (event.type) {
      case 'step.started': {
        let span = this.early[event.index] === true ? this.attempts[event.index] : undefined;
        this.early[event.index] = false;
        if (span === undefined) {
          this.attempts[event.index]?.end();
          span = this.startAttempt(step);
          this.attempts[event.index] = span;
        }
        span.setAttribute(ATTR.ATTEMPT, event.attempt);
        span.setAttribute(ATTR.RETRY, event.attempt - 1);
        setSensitive(span, this.sensitive, ATTR.STEP_INPUT, event.input);
        return;
      }
      case 'step.retrying': {
        const span = this.takeAttempt(event.index);
        if (span === undefined) return;
        span.setAttribute(ATTR.STATUS, STEP_STATUS.RETRYING);
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
    for (const span of this.attempts) {
      if (span === undefined) continue;
      span.setAttribute(ATTR.STATUS, STEP_STATUS.FAILED);
      span.setStatus({ code: SpanStatusCode.ERROR, message: end.error ?? 'run ended' });
      span.end();
    }
    this.attempts.length = 0;
    this.early.length = 0;
    this.span.setAttribute(ATTR.STATUS, end.status);
    if (end.error !== null) {
      this.span.setAttribute(ATTR.ERROR, end.error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
    }
    // On the clock of its start: a span given a start time ends at Date.now() (whole ms) else.
    this.span.end(performance.now());
    this.open.delete(this.run.runId);
  }

  private startAttempt(step: CompiledStep): Span {
    return this.tracer.startSpan(
      `step ${step.name}`,
      {
        attributes: {
          [ATTR.RUN_ID]: this.run.runId,
          [ATTR.WORKFLOW]: this.run.workflow.name,
          [ATTR.ADAPTER]: this.run.adapter,
          [ATTR.STEP]: step.name,
          [ATTR.AGENT]: step.agent,
          [ATTR.TIER]: step.tier,
        },
      },
      this.context,
    );
  }

  /** The step's running attempt span, no longer running. */
  private takeAttempt(index: number): Span | undefined {
    const span = this.attempts[index];
    this.attempts[index] = undefined;
    this.early[index] = false;
    return span;
  }

  /** Ends the step's last attempt with its outcome (a skipped step never had one). */
  private finishAttempt(index: number, outcome: StepOutcome): void {
    const span = this.takeAttempt(index);
    if (span === undefined) return;
    span.setAttribute(ATTR.STATUS, outcome.status);
    if (outcome.modelUsed !== null) span.setAttribute(ATTR.MODEL_USED, outcome.modelUsed);
    if (outcome.tokensUsed !== null) {
      span.setAttribute(ATTR.GEN_AI_INPUT_TOKENS, outcome.tokensUsed.input);
      span.setAttribute(ATTR.GEN_AI_OUTPUT_TOKENS, outcome.tokensUsed.output);
      const cost = outcome.tokensUsed.costUsd;
      if (typeof cost === 'number') span.setAttribute(ATTR.COST_USD, cost);
    }
    if (outcome.status === STEP_STATUS.FAILED) {
      const message = outcome.error ?? 'failed';
      span.setAttribute(ATTR.ERROR, message);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    } else {
      setSensitive(span, this.sensitive, ATTR.STEP_OUTPUT, outcome.output);
    }
    span.end();
  }
}
