/**
 * Shared shapes of the workflow model. The YAML document shape (`WorkflowDocument`) follows
 * ARCHITECTURE §5; the compiled shape is what both engines execute. Everything here is data:
 * expressions are compiled once at load into {@link Evaluator} functions (no eval).
 */
import type { StepKind } from './step-kinds.js';
import type { CompiledHuman, HumanDocument } from './kinds/human.js';
import type { CompiledVerify, VerifyDocument } from './verify.js';
import type { CompiledMap, MapItemFailurePolicy } from './kinds/map.js';
import type { CompiledWorkflowCall } from './kinds/workflow-call.js';

/**
 * Step statuses, the spec's wire strings: the one list. `StepStatus`, {@link STEP_STATUS} and the
 * enums of schemas/events.schema.json and schemas/run-record.schema.json (written from it by
 * `npm run gen`, scripts/derived-enums.ts) derive from it.
 */
export const STEP_STATUSES = [
  'pending',
  'running',
  'success',
  'failed',
  'skipped',
  'retrying',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** The statuses by name, for comparisons: `status === STEP_STATUS.FAILED`. */
export const STEP_STATUS = Object.freeze(
  Object.fromEntries(STEP_STATUSES.map((status) => [status.toUpperCase(), status])),
) as { readonly [S in StepStatus as Uppercase<S>]: S };

/** The statuses a step ends with: every step gets exactly one `step_end` with one of them. */
export const FINISHED_STEP_STATUSES = [
  STEP_STATUS.SUCCESS,
  STEP_STATUS.FAILED,
  STEP_STATUS.SKIPPED,
] as const;
export type FinishedStepStatus = (typeof FINISHED_STEP_STATUSES)[number];

/** Whether `status` ends a step (see {@link FINISHED_STEP_STATUSES}). */
export function isFinishedStepStatus(status: string): status is FinishedStepStatus {
  return (FINISHED_STEP_STATUSES as readonly string[]).includes(status);
}

/**
 * What a resumed run does with a step whose attempt was interrupted (the process died under it):
 * `retry` runs it again as its next attempt; `fail` fails it with `interrupted` (a step that
 * must not run twice). The wire strings of the step's `resume:` key.
 */
export const STEP_RESUME_POLICIES = ['retry', 'fail'] as const;
export type StepResumePolicy = (typeof STEP_RESUME_POLICIES)[number];

export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

export interface InputSpec {
  type: InputType;
  description?: string;
  required?: boolean;
  default?: unknown;
  enum?: unknown[];
}

export interface OutputSpec {
  from: unknown;
  optional?: boolean;
}

export interface StepDocument {
  name: string;
  /** The agent step's agent (the `agent` kind's key, see step-kinds.ts). */
  agent?: string;
  /** The sub-workflow step's child workflow (the `workflow` kind's key, kinds/workflow-call.ts). */
  workflow?: string;
  /** A human step's question (the `human` kind's key, src/workflow/kinds/human.ts). */
  human?: HumanDocument;
  description?: string;
  depends_on?: string[];
  /** A condition (see `analyzeCondition`) or a YAML boolean (a constant). */
  when?: string | boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, string>;
  tools?: string[];
  model?: string;
  max_attempts?: number;
  /** At a resume, an interrupted attempt of this step runs again (`retry`) or fails (`fail`). */
  resume?: StepResumePolicy;
  /** Evaluation: a failure fails the `no_critical_step_failures` gate. */
  critical?: boolean;
  timeout_seconds?: number;
  loop_until?: string | boolean;
  loop_max?: number;
  /** Checks of the outputs, with corrections (docs/workflow-format.md, "Verification"). */
  verify?: VerifyDocument;
  /** A map step (the `map` kind's key): the list its body runs over (kinds/map.ts). */
  for_each?: string | unknown[];
  /** A map step: the item's name in its body's inputs (`${item.<as>}`). */
  as?: string;
  /** A map step: most items running at once. */
  max_concurrency?: number;
  /** A map step: what a failed item does to the step. */
  on_item_failure?: MapItemFailurePolicy;
}

/** A workflow as written in YAML (after schema validation). */
export interface WorkflowDocument {
  name: string;
  description?: string;
  version?: string | number;
  inputs?: Record<string, InputSpec>;
  outputs?: Record<string, OutputSpec>;
  capabilities?: { inputs?: string[]; outputs?: string[] };
  evaluation?: Record<string, unknown>;
  steps: StepDocument[];
}

/** What an expression sees when it is evaluated. */
export interface StepView {
  status: StepStatus;
  outputs: Record<string, unknown> | null;
}
export interface EvalScope {
  inputs: Readonly<Record<string, unknown>>;
  steps: Readonly<Record<string, StepView>>;
  context: Readonly<Record<string, unknown>>;
  /** A map step's item while its body's inputs render: `{<as>: item, index}`. @default none */
  item?: Readonly<Record<string, unknown>>;
}

/** The names a condition reads, each list sorted (`expressions.ts`' `ExpressionReferences`). */
export interface WhenReferences {
  readonly inputs: readonly string[];
  readonly steps: readonly string[];
  readonly context: readonly string[];
}

/** A compiled expression or template. Never throws for a missing reference (null instead). */
export type Evaluator = (scope: EvalScope) => unknown;

export interface CompiledStep {
  name: string;
  /** Position in the YAML list; native readiness follows this order. */
  index: number;
  /** What the step is (step-kinds.ts): its executor, its states in the graph machine. */
  kind: StepKind;
  /**
   * The wire `agent` label (events, run records, the DAG): the agent's name for an `agent` step,
   * the kind's label for the others (step-kinds.ts).
   */
  agent: string;
  /** 0 for deterministic agents, N for `tierN_role`. */
  tier: number;
  description: string;
  dependsOn: readonly string[];
  /** Indexes of `dependsOn` in {@link CompiledWorkflow.steps}. */
  dependsOnIndex: readonly number[];
  /** Indexes of the steps that depend on this one. */
  dependentsIndex: readonly number[];
  when: Evaluator | undefined;
  /**
   * What `when:` reads (input, step and context names), so that the values it saw can be shown
   * when it was false (`GET /api/runs/{run_id}/explain`). @default none (no `when:`)
   */
  whenReferences?: WhenReferences | undefined;
  /** Resolves the step's `inputs` map against the scope (always an object). */
  inputs: Evaluator;
  /** Output key → context variable name. */
  outputs: Readonly<Record<string, string>>;
  tools: readonly string[];
  model: string | undefined;
  maxAttempts: number | undefined;
  /** What a resume does with an interrupted attempt (YAML `resume:`, default `retry`). */
  resume: StepResumePolicy;
  timeoutSeconds: number | undefined;
  loopUntil: Evaluator | undefined;
  loopMax: number | undefined;
  /** The step's `verify:` policy; undefined when it has none. */
  verify: CompiledVerify | undefined;
  /** A map step's list, item name, concurrency and body (kind `map`). @default undefined */
  map?: CompiledMap;
  /** A sub-workflow step's call (kind `workflow`, kinds/workflow-call.ts). @default none */
  workflowCall?: CompiledWorkflowCall | undefined;
  /** A human step's question (kind `human`); undefined for the other kinds. @default undefined */
  human?: CompiledHuman | undefined;
}

export interface CompiledWorkflow {
  name: string;
  description: string;
  version: string | undefined;
  document: WorkflowDocument;
  inputs: Readonly<Record<string, InputSpec>>;
  /** Declared output names, in document order. */
  outputNames: readonly string[];
  /** Output names marked `optional: true`. */
  optionalOutputs: readonly string[];
  /** Resolves the workflow `outputs` mapping to `{name: value}`. */
  outputs: Evaluator;
  steps: readonly CompiledStep[];
  /** Step name → index. */
  stepIndex: ReadonlyMap<string, number>;
}
