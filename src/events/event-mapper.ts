/**
 * Engine events and run lifecycle → the wire event union (`schemas/events.schema.json`). One
 * mapper per run; it numbers events from 0 (`seq`) and remembers which steps already had their
 * `step_end`, so the run's end can close the rest (exactly one `step_end` per step).
 */
import type { EngineEvent, StepOutcome } from '../../machines/engine-contract.js';
import type {
  ApprovalDecisionEvent,
  ApprovalRequiredEvent,
  MapItemEnd,
  MapItemProgress,
  StepEndEvent,
  WorkflowEvent,
} from '../generated/events.js';
import { usageCost, usageRecord } from '../llm/usage-record.js';
import { STEP_STATUS, type CompiledWorkflow } from '../workflow/types.js';

export interface RunEventMapperOptions {
  runId: string;
  workflow: CompiledWorkflow;
  adapter: string;
  /** Source of event timestamps (epoch ms). */
  clock: { now(): number };
  /**
   * Formats the timestamps (epoch ms → ISO 8601): the runtime's shared formatter, whose cache of
   * the current second serves every run (a mapper's own cache only serves its run's events).
   * @default `new Date(ms).toISOString()`
   */
  isoTime?: ((ms: number) => string) | undefined;
  /** Receives every event, in order. */
  sink: (event: WorkflowEvent) => void;
  /**
   * Whether anyone takes events right now (default: always). When not, events are not built at
   * all, only numbered, so `seq` stays the same for a listener that comes later.
   */
  wanted?: () => boolean;
}

/** The end of a run as the `workflow_end` event reports it. */
export interface RunEnd {
  status: 'success' | 'failed';
  durationMs: number;
  finalOutput: unknown;
  error: string | null;
  successRate: number;
  filename: string | null;
}

/** An approval event without what the mapper adds (run, time, number). */
export type ApprovalEventFields =
  | Omit<ApprovalRequiredEvent, 'run_id' | 'timestamp' | 'seq'>
  | Omit<ApprovalDecisionEvent, 'run_id' | 'timestamp' | 'seq'>;

const plainIso = (ms: number): string => new Date(ms).toISOString();

/** The child-run events a parent's stream carries (step-level; not the child's start or end). */
export const FORWARDED_EVENT_TYPES = [
  'step_start',
  'step_end',
  'step_complete',
  'step_error',
  'token_delta',
] as const;

/** A child-run event that is forwarded (see {@link FORWARDED_EVENT_TYPES}). */
export type ForwardedEvent = Extract<
  WorkflowEvent,
  { type: (typeof FORWARDED_EVENT_TYPES)[number] }
>;

/** Whether a child run's event goes on to its parent's stream. */
export function isForwardedEvent(event: WorkflowEvent): event is ForwardedEvent {
  return (FORWARDED_EVENT_TYPES as readonly string[]).includes(event.type);
}

export class RunEventMapper {
  private seq = 0;
  private lastTime = Number.NaN;
  private lastStamp = '';
  /** 0 until the step had its `step_end`, then that event's `seq` + 1. */
  private readonly ended: number[];
  /** The `seq` of each step's `step_start` (-1 before it). */
  private readonly started: number[];
  private endedCount = 0;
  /** Start of the running attempt of loop steps (for iteration durations); made on first use. */
  private attemptStart: number[] | undefined;
  private readonly runId: string;
  private readonly workflow: CompiledWorkflow;
  private readonly clock: { now(): number };
  private readonly sink: (event: WorkflowEvent) => void;
  private readonly adapter: string;
  private readonly wanted: (() => boolean) | undefined;
  private readonly isoTime: (ms: number) => string;

  constructor(options: RunEventMapperOptions) {
    this.runId = options.runId;
    this.workflow = options.workflow;
    this.clock = options.clock;
    this.sink = options.sink;
    this.adapter = options.adapter;
    this.wanted = options.wanted;
    this.isoTime = options.isoTime ?? plainIso;
    this.ended = new Array<number>(options.workflow.steps.length).fill(0);
    this.started = new Array<number>(options.workflow.steps.length).fill(-1);
  }

  /** The run's first event; `resumed`: the run goes on from its run file (docs/durable-runs.md). */
  workflowStart(inputs: Record<string, unknown>, resumed = false): void {
    if (this.unwanted(1)) return;
    this.sink({
      type: 'workflow_start',
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      workflow_name: this.workflow.name,
      adapter: this.adapter,
      inputs,
      step_count: this.workflow.steps.length,
      ...(resumed ? { resumed } : {}),
    });
  }

  /** Maps one engine event (observed with `engineActor.on('*', ...)`). */
  engineEvent(event: EngineEvent): void {
    switch (event.type) {
      case 'step.started': {
        const step = this.workflow.steps[event.index];
        if (step === undefined) return;
        if (step.loopUntil !== undefined || step.kind === 'map')
          (this.attemptStart ??= [])[event.index] = event.time;
        // One step_start per step: at its first attempt, or at the first attempt this run makes
        // of a step whose earlier attempts were interrupted (a resumed run).
        if (this.started[event.index] !== -1) return;
        this.stepStart(event.index, event.input, event.attempt);
        return;
      }
      case 'step.retrying': {
        const step = this.workflow.steps[event.index];
        if (step === undefined || this.unwanted(1)) return;
        this.sink({
          type: 'step_error',
          run_id: this.runId,
          timestamp: this.timestamp(),
          seq: this.seq++,
          step: step.name,
          status: STEP_STATUS.RETRYING,
          duration_ms: event.durationMs,
          agent: step.agent,
          tier: String(step.tier),
          error: event.error,
          attempt: event.attempt,
          retry_in_ms: event.delayMs,
        });
        return;
      }
      case 'step.iteration': {
        const step = this.workflow.steps[event.index];
        if (step === undefined || this.unwanted(1)) return;
        this.sink({
          type: 'step_complete',
          run_id: this.runId,
          timestamp: this.timestamp(),
          seq: this.seq++,
          step: step.name,
          status: STEP_STATUS.RUNNING,
          duration_ms: Math.max(0, event.time - (this.attemptStart?.[event.index] ?? event.time)),
          agent: step.agent,
          tier: String(step.tier),
          output: event.output,
          iteration: event.iteration,
        });
        return;
      }
      case 'step.finished':
        // A step finished before this run began (a resumed or forked run) did not start here:
        // its step_start goes out with its step_end, so each step has both.
        if (event.seeded === true && event.outcome.startTime !== null)
          this.stepStart(event.index, event.outcome.input, 1);
        this.stepFinished(event.index, event.outcome);
        return;
      default: {
        const unknownEvent: never = event;
        return unknownEvent;
      }
    }
  }

  /**
   * An item of map step `index` finished: a `step_complete` (status running) with the item and
   * the step's counts (the session decides which items get one, kinds/map.ts' framesItem).
   */
  mapItem(index: number, item: MapItemEnd, items: MapItemProgress): void {
    const step = this.workflow.steps[index];
    if (step === undefined || this.ended[index] !== 0 || this.unwanted(1)) return;
    const now = this.clock.now();
    this.sink({
      type: 'step_complete',
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      step: step.name,
      status: STEP_STATUS.RUNNING,
      duration_ms: Math.max(0, now - (this.attemptStart?.[index] ?? now)),
      agent: step.agent,
      tier: String(step.tier),
      item,
      items,
    });
  }

  private stepStart(index: number, input: unknown, attempt: number): void {
    const step = this.workflow.steps[index]!;
    this.started[index] = this.seq;
    if (this.unwanted(1)) return;
    this.sink({
      type: 'step_start',
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      step: step.name,
      agent: step.agent,
      tier: String(step.tier),
      input,
      attempt,
    });
  }

  /** Emits `step_error` (for a failure) and `step_end` for a step, once. */
  stepFinished(index: number, outcome: StepOutcome): void {
    const step = this.workflow.steps[index];
    if (step === undefined || this.ended[index] !== 0) return;
    // A failure's step_error goes out right before its step_end.
    this.ended[index] = this.seq + (outcome.status === STEP_STATUS.FAILED ? 2 : 1);
    this.endedCount++;
    if (this.unwanted(outcome.status === STEP_STATUS.FAILED ? 2 : 1)) return;
    const durationMs =
      outcome.startTime === null ? 0 : Math.max(0, outcome.endTime - outcome.startTime);
    if (outcome.status === STEP_STATUS.FAILED) {
      this.sink({
        type: 'step_error',
        run_id: this.runId,
        timestamp: this.timestamp(),
        seq: this.seq++,
        step: step.name,
        status: STEP_STATUS.FAILED,
        duration_ms: durationMs,
        agent: step.agent,
        tier: String(step.tier),
        error: outcome.error,
        ...(outcome.attempts > 0 ? { attempt: outcome.attempts } : {}),
      });
    }
    const end: StepEndEvent = {
      type: 'step_end',
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      step: step.name,
      status: outcome.status,
      duration_ms: durationMs,
      agent: step.agent,
      tier: String(step.tier),
      input: outcome.input,
      output: outcome.output,
      error: outcome.error,
      model_used: outcome.modelUsed,
      tokens_used: usageRecord(outcome.tokensUsed),
      cost_usd: usageCost(outcome.tokensUsed),
      retry_count: Math.max(0, outcome.attempts - 1),
      skip_reason: outcome.skipReason,
    };
    if (outcome.attempts > 0) end.attempt = outcome.attempts;
    // The spec's event union has no tool event: a step's tool calls ride on its step_end.
    if (outcome.messages !== undefined) end.messages = outcome.messages;
    this.sink(end);
  }

  /** A coalesced piece of a step's streamed model output. */
  tokenDelta(stepName: string, delta: string, model?: string): void {
    if (this.unwanted(1)) return;
    this.sink({
      type: 'token_delta',
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      step: stepName,
      delta,
      ...(model === undefined ? {} : { model }),
    });
  }

  /** A high-risk tool call asks for approval, or gets its answer (docs/tools.md, "Approval"). */
  approval(event: ApprovalEventFields): void {
    if (this.unwanted(1)) return;
    this.sink({
      ...event,
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
    });
  }

  /**
   * An event of a child run (a sub-workflow step's, docs/workflow-format.md "Sub-workflow steps")
   * on this run's stream: numbered and timed here, tagged with the parent's step and the child's
   * run id (additive fields); `step` stays the child's step.
   */
  forwarded(event: ForwardedEvent, parentStep: string, childRunId: string): void {
    if (this.unwanted(1)) return;
    this.sink({
      ...event,
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      parent_step: parentStep,
      child_run_id: childRunId,
    });
  }

  /** Whether every step has had its `step_end`. */
  get allEnded(): boolean {
    return this.endedCount === this.ended.length;
  }

  /** Whether step `index` has had its `step_end`. */
  hasEnded(index: number): boolean {
    return (this.ended[index] ?? 0) !== 0;
  }

  /** The `seq` of step `index`'s `step_start`, if it had one (run files keep it: replay order). */
  startSeq(index: number): number | undefined {
    const seq = this.started[index] ?? -1;
    return seq < 0 ? undefined : seq;
  }

  /** The `seq` of step `index`'s `step_end`, once it had one. */
  endSeq(index: number): number | undefined {
    const seq = this.ended[index] ?? 0;
    return seq === 0 ? undefined : seq - 1;
  }

  workflowEnd(end: RunEnd): void {
    if (this.unwanted(1)) return;
    this.sink({
      type: 'workflow_end',
      run_id: this.runId,
      timestamp: this.timestamp(),
      seq: this.seq++,
      workflow_name: this.workflow.name,
      status: end.status,
      duration_ms: end.durationMs,
      final_output: end.finalOutput,
      error: end.error,
      success_rate: end.successRate,
      filename: end.filename,
    });
  }

  /** When nobody takes events: numbers the `count` events not built, and says so. */
  private unwanted(count: number): boolean {
    if (this.wanted === undefined || this.wanted()) return false;
    this.seq += count;
    return true;
  }

  /** ISO time of now; consecutive events in the same millisecond share the string. */
  private timestamp(): string {
    const now = this.clock.now();
    if (now !== this.lastTime) {
      this.lastTime = now;
      this.lastStamp = this.isoTime(now);
    }
    return this.lastStamp;
  }
}
