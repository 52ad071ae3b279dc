/**
 * The map kind (docs/workflow-format.md, "Map over a list"): a step with `for_each:` runs its body
 * once per item of a list. Its body is a step of another kind, compiled here as that kind's
 * step: an agent step (the step's `agent:`, `inputs:`, `max_attempts:`, `timeout_seconds:`,
 * `tools:`, `model:`, `verify:`, applied per item) or a sub-workflow step (`workflow:`, each item a
 * child run of that workflow, kinds/workflow-call.ts: checked at load as a sub-workflow step is). The body's inputs read the item as
 * `${item.<as>}` and its position as `${item.index}`; nothing else may read `item`, which the
 * validator checks at load like any reference.
 *
 * The step itself makes one attempt (items retry, not the step); its input is `{items: N}` (the
 * list is read from the scope by the executor, never copied); its output is
 * `{results: [...], failed: n}` in item order.
 */
import type { ErrorDetail } from '../../errors.js';
import type { ExpressionReferences } from '../expressions.js';
import type { CompiledStep, Evaluator, StepDocument } from '../types.js';

/** What a failed item does to its map step (the wire strings of `on_item_failure`). */
export const MAP_ITEM_FAILURE = { FAIL_FAST: 'fail_fast', COLLECT: 'collect' } as const;
export type MapItemFailurePolicy = (typeof MAP_ITEM_FAILURE)[keyof typeof MAP_ITEM_FAILURE];

/** Items running at once when a map step sets no `max_concurrency`. */
export const DEFAULT_MAP_CONCURRENCY = 4;
/** The item's name when a map step sets no `as` (`${item.value}`). */
export const DEFAULT_MAP_ITEM_NAME = 'value';
/** The item's position in the body's scope (`${item.index}`), so `as` may not take it. */
export const MAP_ITEM_INDEX = 'index';

export interface CompiledMap {
  /** The list, evaluated against the run's scope when the step starts. */
  forEach: Evaluator;
  /** `for_each` as written (descriptions, the graph machine). */
  source: string;
  /** The item's name under `item`. */
  as: string;
  maxConcurrency: number;
  onItemFailure: MapItemFailurePolicy;
  /** The body, run once per item: a step of another kind whose inputs read `item`. */
  body: CompiledStep;
}

type Loc = (string | number)[];

/**
 * A compiled map step, from the step compiled as its body's kind: the body keeps the step's
 * settings; the step renders `{items: N}` as its input and makes one attempt.
 */
export function compileMapStep(
  compiled: CompiledStep,
  doc: StepDocument,
  forEach: Evaluator,
): CompiledStep {
  const body: CompiledStep = {
    ...compiled,
    kind: doc.workflow === undefined ? 'agent' : 'workflow',
    outputs: {},
  };
  delete body.map;
  const map: CompiledMap = {
    forEach,
    source: typeof doc.for_each === 'string' ? doc.for_each : JSON.stringify(doc.for_each),
    as: doc.as ?? DEFAULT_MAP_ITEM_NAME,
    maxConcurrency: doc.max_concurrency ?? DEFAULT_MAP_CONCURRENCY,
    onItemFailure: doc.on_item_failure ?? MAP_ITEM_FAILURE.FAIL_FAST,
    body,
  };
  const step: CompiledStep = {
    ...compiled,
    kind: 'map',
    inputs: (scope) => {
      const list = forEach(scope);
      return { items: Array.isArray(list) ? list.length : null };
    },
    // The items retry (the body's max_attempts), not the step.
    maxAttempts: 1,
    loopUntil: undefined,
    loopMax: undefined,
    verify: undefined,
    map,
  };
  // The call is the body's (kinds/workflow-call.ts reads it there through calledWorkflow).
  delete step.workflowCall;
  return step;
}

const MAP_ONLY_KEYS = ['as', 'max_concurrency', 'on_item_failure'] as const;

/** The load checks of a map step's own keys (its `for_each` template is checked as any). */
export function checkMapStep(
  step: Readonly<Record<string, unknown>>,
  at: (...rest: Loc) => Loc,
  errors: ErrorDetail[],
): void {
  if (step.for_each === undefined) {
    for (const key of MAP_ONLY_KEYS) {
      if (step[key] !== undefined)
        errors.push({
          loc: at(key),
          msg: `${key} is for a map step: set for_each (the list to map over)`,
          type: 'value_error.map',
        });
    }
    return;
  }
  if (step.agent === undefined && step.workflow === undefined) {
    errors.push({
      loc: at('agent'),
      msg: 'a map step runs its body once per item: agent or workflow is required (the body)',
      type: 'missing',
    });
  } else if (step.agent !== undefined && step.workflow !== undefined) {
    errors.push({
      loc: at('workflow'),
      msg: 'a map step has one body: agent and workflow cannot both be set',
      type: 'value_error.step_kind',
    });
  }
  if (step.as === MAP_ITEM_INDEX) {
    errors.push({
      loc: at('as'),
      msg: `as cannot be '${MAP_ITEM_INDEX}': the body reads the item's position as item.${MAP_ITEM_INDEX}`,
      type: 'value_error.map',
    });
  }
  for (const key of ['loop_until', 'loop_max'] as const) {
    if (step[key] !== undefined)
      errors.push({
        loc: at(key),
        msg: `${key} is not supported on a map step (each item runs its body once per attempt)`,
        type: 'value_error.map',
      });
  }
}

/**
 * What is wrong with the `item` references of a step's expressions: `item` is defined only in
 * a map step's `inputs:` (the body's), as `item.<as>`, `item.index` or `item` itself.
 */
export function checkItemReferences(
  step: Readonly<Record<string, unknown>>,
  found: readonly { loc: Loc; refs: ExpressionReferences }[],
  errors: ErrorDetail[],
): void {
  const isMap = step.for_each !== undefined;
  const as = typeof step.as === 'string' ? step.as : DEFAULT_MAP_ITEM_NAME;
  for (const { loc, refs } of found) {
    for (const name of refs.item) {
      const shown = name === '' ? 'item' : `item.${name}`;
      if (!isMap || loc[2] !== 'inputs') {
        errors.push({
          loc,
          msg: `${shown}: item is defined only in a map step's inputs (the item for_each is at)`,
          type: 'value_error.item_reference',
        });
      } else if (name !== '' && name !== as && name !== MAP_ITEM_INDEX) {
        errors.push({
          loc,
          msg: `${shown} is not defined: the item is item.${as}, its position item.${MAP_ITEM_INDEX}`,
          type: 'value_error.item_reference',
        });
      }
    }
  }
}
