import type { Runtime } from '../../../src/engine/types.js';
import type { WorkflowEvent } from '../../../src/generated/events.js';
import type { RunRecord } from '../../../src/generated/run-record.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type EventBody = DistributiveOmit<WorkflowEvent, 'run_id' | 'seq' | 'timestamp'>;

/**
 * A Runtime's event side (subscribe, onRecord, isActive) whose events the test emits: the hub's
 * only contract with the runtime. Seq numbers are assigned per run from 0, as the runtime does.
 */
export class FakeRuntime implements Pick<Runtime, 'subscribe' | 'onRecord' | 'isActive'> {
  readonly active = new Set<string>();
  private readonly listeners = new Set<(event: WorkflowEvent) => void>();
  private readonly recordListeners = new Set<(record: RunRecord, filename: string) => void>();
  private readonly seqs = new Map<string, number>();

  subscribe(listener: (event: WorkflowEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onRecord(listener: (record: RunRecord, filename: string) => void): () => void {
    this.recordListeners.add(listener);
    return () => this.recordListeners.delete(listener);
  }

  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  get listenerCount(): number {
    return this.listeners.size + this.recordListeners.size;
  }

  /** Emits one event of `runId` with the next seq; `workflow_start` marks it active. */
  emit(runId: string, body: EventBody): WorkflowEvent {
    if (body.type === 'workflow_start') {
      this.active.add(runId);
      this.seqs.set(runId, 0);
    }
    const seq = this.seqs.get(runId) ?? 0;
    this.seqs.set(runId, seq + 1);
    if (body.type === 'workflow_end') this.active.delete(runId);
    const event = {
      ...body,
      run_id: runId,
      seq,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, seq)).toISOString(),
    };
    for (const listener of this.listeners) listener(event);
    return event;
  }

  /** Emits an already-built event as is (for duplicate/out-of-order checks). */
  emitRaw(event: WorkflowEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  record(record: RunRecord, filename: string): void {
    for (const listener of this.recordListeners) listener(record, filename);
  }

  /** A whole run: workflow_start, step_start/step_end per step, workflow_end. */
  runToEnd(runId: string, steps = 2): WorkflowEvent[] {
    const events = [this.emit(runId, { type: 'workflow_start', workflow_name: 'wf' })];
    for (let i = 0; i < steps; i += 1) events.push(...this.step(runId, `s${i}`));
    events.push(this.emit(runId, { type: 'workflow_end', status: 'success' }));
    return events;
  }

  /** workflow_end of a run (started by {@link step} or {@link emit}). */
  endRun(runId: string): WorkflowEvent {
    return this.emit(runId, { type: 'workflow_end', status: 'success' });
  }

  step(runId: string, step: string, output: unknown = { ok: true }): WorkflowEvent[] {
    return [
      this.emit(runId, { type: 'step_start', step }),
      this.emit(runId, { type: 'step_end', step, status: 'success', duration_ms: 1, output }),
    ];
  }
}

/** A finished run file with two steps (one skipped), as the runtime writes it. */
export function sampleRecord(runId: string, extra: Record<string, unknown> = {}): RunRecord {
  const step = {
    agent: 'tier0_echo',
    tier: '0',
    model_used: null,
    tokens_used: null,
    retry_count: 0,
    error: null,
  };
  return {
    run_id: runId,
    workflow_name: 'test_deterministic',
    adapter: 'native',
    status: 'success',
    inputs: { text: 'hi' },
    steps: [
      {
        ...step,
        step_name: 'echo',
        status: 'success',
        duration_ms: 3,
        input: { text: 'hi' },
        output: { text: 'hi' },
        start_time: '2026-01-01T00:00:00.010Z',
        end_time: '2026-01-01T00:00:00.013Z',
        metadata: {},
      },
      {
        ...step,
        step_name: 'maybe',
        status: 'skipped',
        duration_ms: 0,
        input: null,
        output: null,
        start_time: null,
        end_time: null,
        metadata: { skip_reason: 'condition false' },
      },
    ],
    final_output: { text: 'hi' },
    success_rate: 100,
    total_duration_ms: 20,
    step_count: 2,
    failed_step_count: 0,
    start_time: '2026-01-01T00:00:00.000Z',
    end_time: '2026-01-01T00:00:00.020Z',
    error: null,
    extra,
  };
}
