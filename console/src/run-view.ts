/**
 * A run as the live page shows it, folded from its wire events (replay, then live) in order.
 * Pure: `applyEvent(view, event)` returns the next view.
 */
import type {
  MapItemEnd,
  MapItemProgress,
  RunStatus,
  TokenUsage,
  WorkflowEvent,
} from '../../src/generated/events';
import { STEP_STATE, type StepState } from './step-states';

/** Characters of an LLM step's token stream kept (the newest). */
const MAX_STREAM_CHARS = 20_000;
/** Failed map items kept per step. */
const MAX_ITEM_FAILURES = 20;

export interface StepWait {
  callId: string;
  kind: 'approval' | 'input';
  tool: string;
  prompt?: string;
}

export interface StepView {
  name: string;
  state: StepState;
  attempt?: number;
  agent?: string;
  model?: string | null;
  tier?: string | null;
  durationMs?: number;
  input?: unknown;
  output?: unknown;
  error?: string | null;
  skipReason?: string | null;
  messages?: unknown[];
  tokens?: TokenUsage | null;
  /** Cost fields of the step's end event (`cost*`), when the service reports them. */
  cost?: Record<string, unknown>;
  /** Text of the step's token_delta events. */
  stream: string;
  items?: MapItemProgress;
  itemFailures: MapItemEnd[];
  iteration?: number;
  retryInMs?: number;
  waiting?: StepWait;
  decisions: string[];
  /** Child runs of a sub-workflow step. */
  children: string[];
}

export interface ChildRunView {
  parentStep: string;
  steps: Record<string, StepState>;
}

export interface RunView {
  runId: string;
  workflow?: string;
  adapter?: string;
  /** `pending` until workflow_start arrives. */
  status: RunStatus;
  inputs?: unknown;
  steps: Record<string, StepView>;
  /** Step names in the order they first appeared. */
  order: string[];
  children: Record<string, ChildRunView>;
  finalOutput?: unknown;
  error?: string | null;
  durationMs?: number;
  errors: string[];
  evaluation?:
    | { state: 'scoring' }
    | {
        state: 'done';
        score?: number | null;
        grade?: string | null;
        passed?: boolean | null;
        error?: string | null;
      };
  events: number;
}

export function emptyRun(runId: string): RunView {
  return { runId, status: 'pending', steps: {}, order: [], children: {}, errors: [], events: 0 };
}

function emptyStep(name: string): StepView {
  return {
    name,
    state: STEP_STATE.pending,
    stream: '',
    itemFailures: [],
    decisions: [],
    children: [],
  };
}

const FINAL: ReadonlySet<StepState> = new Set([
  STEP_STATE.success,
  STEP_STATE.failed,
  STEP_STATE.skipped,
]);

function costOf(event: object): Record<string, unknown> | undefined {
  const entries = Object.entries(event).filter(([key]) => key.startsWith('cost'));
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/** The run with `event` applied. */
export function applyEvent(view: RunView, event: WorkflowEvent): RunView {
  const next: RunView = { ...view, events: view.events + 1 };
  // A sub-workflow's step events reach the parent's stream tagged with the child run.
  if ('child_run_id' in event && event.child_run_id !== undefined && 'step' in event) {
    const childId = event.child_run_id;
    const parentStep = event.parent_step ?? '';
    const child = view.children[childId] ?? { parentStep, steps: {} };
    const state = childState(event, child.steps[event.step]);
    next.children = {
      ...view.children,
      [childId]: {
        ...child,
        steps: state === undefined ? child.steps : { ...child.steps, [event.step]: state },
      },
    };
    const parent = view.steps[parentStep];
    if (parent !== undefined && !parent.children.includes(childId)) {
      next.steps = {
        ...view.steps,
        [parentStep]: { ...parent, children: [...parent.children, childId] },
      };
    }
    return next;
  }
  const step = (name: string, change: (current: StepView) => StepView): void => {
    const current = next.steps[name] ?? emptyStep(name);
    if (!(name in next.steps)) next.order = [...next.order, name];
    next.steps = { ...next.steps, [name]: change(current) };
  };
  switch (event.type) {
    case 'workflow_start':
      next.workflow = event.workflow_name;
      if (event.adapter !== undefined) next.adapter = event.adapter;
      next.inputs = event.inputs;
      next.status = 'running';
      break;
    case 'step_start':
      step(event.step, (s) => ({
        ...s,
        state: STEP_STATE.running,
        ...(event.agent !== undefined ? { agent: event.agent } : {}),
        ...(event.tier !== undefined ? { tier: event.tier } : {}),
        ...(event.attempt !== undefined ? { attempt: event.attempt } : {}),
        ...(event.input !== undefined ? { input: event.input } : {}),
        // A new attempt streams anew.
        stream: '',
      }));
      break;
    case 'token_delta':
      step(event.step, (s) => ({
        ...s,
        stream: (s.stream + event.delta).slice(-MAX_STREAM_CHARS),
      }));
      break;
    case 'step_complete':
      step(event.step, (s) => ({
        ...s,
        ...(s.state === STEP_STATE.pending ? { state: STEP_STATE.running } : {}),
        ...(event.items !== undefined ? { items: event.items } : {}),
        ...(event.iteration !== undefined ? { iteration: event.iteration } : {}),
        itemFailures:
          event.item?.status === 'failed'
            ? [...s.itemFailures, event.item].slice(0, MAX_ITEM_FAILURES)
            : s.itemFailures,
      }));
      break;
    case 'step_error':
      step(event.step, (s) => ({
        ...s,
        state:
          event.status === 'retrying' || event.retry_in_ms !== undefined
            ? STEP_STATE.retrying
            : STEP_STATE.failed,
        error: event.error ?? null,
        ...(event.attempt !== undefined ? { attempt: event.attempt } : {}),
        ...(event.retry_in_ms !== undefined ? { retryInMs: event.retry_in_ms } : {}),
      }));
      break;
    case 'step_end':
      step(event.step, (s) => {
        const cost = costOf(event);
        const { waiting: _waiting, ...rest } = s;
        return {
          ...rest,
          state: toState(event.status),
          durationMs: event.duration_ms,
          ...(event.agent !== undefined ? { agent: event.agent } : {}),
          ...(event.model_used !== undefined ? { model: event.model_used } : {}),
          ...(event.tier !== undefined ? { tier: event.tier } : {}),
          ...(event.tokens_used !== undefined ? { tokens: event.tokens_used } : {}),
          ...(event.input !== undefined ? { input: event.input } : {}),
          ...(event.output !== undefined ? { output: event.output } : {}),
          ...(event.error !== undefined ? { error: event.error } : {}),
          ...(event.attempt !== undefined ? { attempt: event.attempt } : {}),
          ...(event.skip_reason !== undefined ? { skipReason: event.skip_reason } : {}),
          ...(event.messages !== undefined ? { messages: event.messages } : {}),
          ...(cost !== undefined ? { cost } : {}),
        };
      });
      break;
    case 'approval_required':
      step(event.step, (s) => ({
        ...s,
        state: event.kind === 'input' ? STEP_STATE.awaitingInput : STEP_STATE.awaitingApproval,
        waiting: {
          callId: event.call_id,
          kind: event.kind === 'input' ? 'input' : 'approval',
          tool: event.tool_name,
          ...(event.prompt !== undefined ? { prompt: event.prompt } : {}),
        },
      }));
      break;
    case 'approval_decision':
      step(event.step, (s) => {
        const { waiting: _waiting, ...rest } = s;
        return {
          ...rest,
          state: FINAL.has(s.state) ? s.state : STEP_STATE.running,
          decisions: [
            ...s.decisions,
            `${event.kind === 'input' ? 'answered' : event.decision} (${event.provider})${event.reason ? `: ${event.reason}` : ''}`,
          ],
        };
      });
      break;
    case 'workflow_end':
      next.status = event.status;
      if (event.final_output !== undefined) next.finalOutput = event.final_output;
      if (event.error !== undefined) next.error = event.error;
      if (event.duration_ms !== undefined) next.durationMs = event.duration_ms;
      if (event.workflow_name !== undefined) next.workflow = event.workflow_name;
      break;
    case 'error':
      next.errors = [
        ...view.errors,
        event.step === undefined ? event.message : `${event.step}: ${event.message}`,
      ];
      break;
    case 'evaluation_start':
      next.evaluation = { state: 'scoring' };
      break;
    case 'evaluation_complete':
      next.evaluation = {
        state: 'done',
        ...(event.overall_score !== undefined ? { score: event.overall_score } : {}),
        ...(event.grade !== undefined ? { grade: event.grade } : {}),
        ...(event.passed !== undefined ? { passed: event.passed } : {}),
        ...(event.error !== undefined ? { error: event.error } : {}),
      };
      break;
    default: {
      const never: never = event;
      return {
        ...view,
        errors: [...view.errors, `unknown event ${JSON.stringify(never).slice(0, 80)}`],
      };
    }
  }
  return next;
}

function toState(
  status: 'pending' | 'running' | 'success' | 'failed' | 'skipped' | 'retrying',
): StepState {
  return STEP_STATE[status];
}

function childState(event: WorkflowEvent, current: StepState | undefined): StepState | undefined {
  switch (event.type) {
    case 'step_start':
      return STEP_STATE.running;
    case 'step_end':
      return toState(event.status);
    case 'step_error':
      return event.retry_in_ms !== undefined ? STEP_STATE.retrying : STEP_STATE.failed;
    case 'approval_required':
      return event.kind === 'input' ? STEP_STATE.awaitingInput : STEP_STATE.awaitingApproval;
    case 'approval_decision':
      return STEP_STATE.running;
    case 'token_delta':
    case 'step_complete':
      return current ?? STEP_STATE.running;
    case 'workflow_start':
    case 'workflow_end':
    case 'error':
    case 'evaluation_start':
    case 'evaluation_complete':
      return current;
    default: {
      const never: never = event;
      return never;
    }
  }
}
