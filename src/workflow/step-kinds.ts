/**
 * Step kinds: what a step *is* (an agent call, a sub-workflow, a map over a list, a question to a
 * person …), chosen by one key of its YAML entry. This table is the one place a kind is declared:
 * its selecting key, and the `agent` label its steps carry in events, run records and the DAG (the
 * spec's wire field; an agent step's label is its agent name).
 *
 * Adding a kind is one entry here (with its branch of properties in
 * schemas/workflow.schema.json), one case in `compile.ts`' `compileKind`, and one executor in
 * `src/engine/step-executors.ts`.
 */
import type { StepDocument } from './types.js';

/** The `agent` label of a human step (events, run records, the DAG; `tool_name` of its question). */
export const HUMAN_LABEL = 'human';

/** The kinds, in the order their keys are looked for. */
export const STEP_KINDS = ['agent', 'map', 'workflow', 'human'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export interface StepKindSpec {
  readonly kind: StepKind;
  /** The step key that selects the kind: a step sets exactly one kind key. */
  readonly key: keyof StepDocument;
  /** The `agent` label of a step of this kind (events, run records, the DAG, metrics). */
  label(step: StepDocument): string;
  /**
   * Kind keys that, beside this kind's key, make its body rather than a second kind (a map's
   * `for_each:` with `agent:` is one map step whose body is an agent step). @default none
   */
  readonly bodyKeys?: readonly string[];
}

export const STEP_KIND_SPECS: { readonly [K in StepKind]: StepKindSpec & { kind: K } } = {
  agent: { kind: 'agent', key: 'agent', label: (step) => step.agent ?? '' },
  // The label is the body's: the agent that ran, or `workflow:<child>` for a sub-workflow body.
  map: {
    kind: 'map',
    key: 'for_each',
    label: (step) =>
      step.workflow === undefined ? (step.agent ?? '') : `workflow:${step.workflow}`,
    bodyKeys: ['agent', 'workflow'],
  },
  // A sub-workflow step (kinds/workflow-call.ts): `workflow:<child workflow>`.
  workflow: {
    kind: 'workflow',
    key: 'workflow',
    label: (step) => `workflow:${step.workflow ?? ''}`,
  },
  // A question to a person (src/workflow/kinds/human.ts): its steps are labelled `human`.
  human: { kind: 'human', key: 'human', label: () => HUMAN_LABEL },
};

/** Kinds that wrap a body of another kind: looked for first (their key decides the kind). */
const WRAPPING_KINDS: readonly StepKind[] = STEP_KINDS.filter(
  (kind) => STEP_KIND_SPECS[kind].bodyKeys !== undefined,
);

/** The kind keys, in table order. */
export const STEP_KIND_KEYS: readonly string[] = STEP_KINDS.map(
  (kind) => STEP_KIND_SPECS[kind].key,
);

/** The kind of a validated step document. */
export function stepKindOf(step: StepDocument): StepKindSpec {
  for (const kind of [...WRAPPING_KINDS, ...STEP_KINDS]) {
    const spec = STEP_KIND_SPECS[kind];
    if (step[spec.key] !== undefined) return spec;
  }
  // validateWorkflow refuses a step without a kind key (see kindKeyProblem).
  throw new Error(`step '${step.name}' has no kind key`);
}

/**
 * What is wrong with the kind keys of a raw step entry: none (`one of … is required`, at the first
 * key's loc) or more than one (at the second one's), else undefined.
 */
export function kindKeyProblem(
  step: Readonly<Record<string, unknown>>,
): { key: string; msg: string; type: string } | undefined {
  let present = STEP_KIND_KEYS.filter((key) => step[key] !== undefined);
  // A wrapping kind's body keys are its body, not kinds of their own.
  const wrapper = WRAPPING_KINDS.find((kind) => present.includes(STEP_KIND_SPECS[kind].key));
  const body = wrapper === undefined ? undefined : STEP_KIND_SPECS[wrapper].bodyKeys;
  if (body !== undefined) present = present.filter((key) => !body.includes(key));
  if (present.length === 0) {
    const key = STEP_KIND_KEYS[0] as string;
    const msg =
      STEP_KIND_KEYS.length === 1
        ? `${key} is required`
        : `one of ${STEP_KIND_KEYS.join(', ')} is required (the step's kind)`;
    return { key, msg, type: 'missing' };
  }
  if (present.length > 1) {
    return {
      key: present[1] as string,
      msg: `a step has one kind: ${present.join(' and ')} cannot both be set`,
      type: 'value_error.step_kind',
    };
  }
  return undefined;
}
