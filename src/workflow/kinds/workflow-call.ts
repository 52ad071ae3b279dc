/**
 * The sub-workflow step (kind `workflow`, docs/workflow-format.md "Sub-workflow steps"): what it
 * compiles to and the checks that need the other workflows. A single document cannot see its
 * children, so these run where every workflow is known (the registry's `checkCalls`: on `get`,
 * `save` and for inline sources): the child exists and is valid, the step's inputs are the
 * child's declared ones (and its required ones are given), what the parent reads of the step's
 * outputs is declared by the child, and no chain of calls from the workflow is recursive (direct
 * or indirect) or nests deeper than {@link MAX_WORKFLOW_DEPTH}.
 */
import { ERROR_CODES, ValidationError, type ErrorDetail } from '../../errors.js';
import type { CompiledStep, CompiledWorkflow } from '../types.js';
import { isPlainObject } from '../values.js';

/**
 * Most levels of sub-workflows below a workflow (its children are level 1): deeper chains are
 * refused at load (docs/limits.md). A bound on the run actors, run files and events one run can
 * make, not on how workflows are composed in practice (two or three levels).
 */
export const MAX_WORKFLOW_DEPTH = 8;

/** A compiled sub-workflow step: the workflow it runs (its inputs are the step's `inputs`). */
export interface CompiledWorkflowCall {
  /** The child workflow's name in the workflows directory, loaded when the step starts. */
  readonly workflow: string;
}

/**
 * The workflow a step calls: a sub-workflow step's, or a map step's whose body is a sub-workflow
 * (each item a child run); undefined for the other steps.
 */
export function calledWorkflow(step: CompiledStep): string | undefined {
  return step.workflowCall?.workflow ?? step.map?.body.workflowCall?.workflow;
}

/** Step keys that mean nothing for a sub-workflow step (the child's steps have their own). */
const AGENT_ONLY_KEYS = ['tools', 'model', 'loop_until', 'loop_max', 'verify'] as const;

type Loc = (string | number)[];

/** Problems of one raw step entry of kind `workflow` that its document alone shows. */
export function workflowStepProblems(
  step: Readonly<Record<string, unknown>>,
  at: (...rest: Loc) => Loc,
): ErrorDetail[] {
  if (step.workflow === undefined) return [];
  return AGENT_ONLY_KEYS.filter((key) => step[key] !== undefined).map((key) => ({
    loc: at(key),
    msg: `${key} is for agent steps; a workflow step runs the steps of workflow '${String(step.workflow)}'`,
    type: 'value_error.step_kind',
  }));
}

/**
 * Finds a workflow by name: its compilation, undefined when there is none.
 * @throws ValidationError when it exists but is invalid
 */
export type WorkflowLookup = (name: string) => Promise<CompiledWorkflow | undefined>;

/** A lookup result: the workflow, none, or why it is invalid. */
type Found = CompiledWorkflow | { missing: true } | { invalid: string };

/** Walks of the call graph from one workflow, at most (a bound on pathological diamonds). */
const MAX_VISITS = 10_000;

/**
 * Every problem of `root`'s sub-workflow steps that needs the other workflows (empty when none):
 * located at the root's own step (`['steps', i, 'workflow' | 'inputs' …]`), as validation errors
 * are. `lookup` is asked for each workflow named; `root` stands for its own name (a save checks
 * the new text against the stored others).
 */
export async function workflowCallProblems(
  root: CompiledWorkflow,
  lookup: WorkflowLookup,
): Promise<ErrorDetail[]> {
  const calls = root.steps.filter((step) => calledWorkflow(step) !== undefined);
  if (calls.length === 0) return [];
  const known = new Map<string, Promise<Found>>();
  const find = (name: string): Promise<Found> => {
    if (name === root.name) return Promise.resolve(root);
    let found = known.get(name);
    if (found === undefined) {
      found = lookup(name).then(
        (workflow): Found => workflow ?? { missing: true },
        (error: unknown): Found => {
          if (!(error instanceof ValidationError)) throw error;
          return { invalid: error.details?.[0]?.msg ?? error.message };
        },
      );
      known.set(name, found);
    }
    return found;
  };
  const errors: ErrorDetail[] = [];
  for (const step of calls) {
    const at = (...rest: Loc): Loc => ['steps', step.index, ...rest];
    const name = calledWorkflow(step)!;
    if (name === root.name) {
      errors.push({
        loc: at('workflow'),
        msg: `recursive sub-workflows: ${name} → ${name}`,
        type: 'value_error.recursion',
      });
      continue;
    }
    const child = await find(name);
    if ('missing' in child) {
      errors.push({
        loc: at('workflow'),
        msg: `unknown workflow '${name}'`,
        type: 'value_error.unknown_workflow',
      });
      continue;
    }
    if ('invalid' in child) {
      errors.push({
        loc: at('workflow'),
        msg: `workflow '${name}' is invalid: ${child.invalid}`,
        type: 'value_error.invalid_workflow',
      });
      continue;
    }
    errors.push(...inputProblems(root, step.index, child));
    // A map's outputs are its {results, failed}, each result the child's outputs.
    if (step.map === undefined) errors.push(...outputProblems(root, step.name, step.index, child));
    else errors.push(...itemOutputProblems(root, step.name, child));
    const chain = await chainProblem([root.name, name], child, find, { visits: 0 });
    if (chain !== undefined) errors.push({ loc: at('workflow'), ...chain });
  }
  return errors;
}

/** The step's inputs against the child's declared inputs. */
function inputProblems(
  root: CompiledWorkflow,
  index: number,
  child: CompiledWorkflow,
): ErrorDetail[] {
  const given = root.document.steps[index]?.inputs ?? {};
  const declared = Object.keys(child.inputs);
  const errors: ErrorDetail[] = [];
  // A workflow that declares no inputs takes whatever it is given, as a run request does.
  if (declared.length > 0) {
    for (const key of Object.keys(given)) {
      if (Object.hasOwn(child.inputs, key)) continue;
      errors.push({
        loc: ['steps', index, 'inputs', key],
        msg: `workflow '${child.name}' declares no input '${key}' (its inputs: ${declared.join(', ')})`,
        type: 'value_error.unknown_input',
      });
    }
  }
  for (const [key, spec] of Object.entries(child.inputs)) {
    const hasDefault = spec.default !== undefined && spec.default !== null;
    if (spec.required === true && !hasDefault && !Object.hasOwn(given, key)) {
      errors.push({
        loc: ['steps', index, 'inputs'],
        msg: `workflow '${child.name}' requires input '${key}'`,
        type: 'missing',
      });
    }
  }
  return errors;
}

/**
 * What the parent reads of the step's outputs (`steps.<step>.outputs.K` in any expression, and
 * the step's own `outputs:` mapping keys) against the child's declared outputs.
 */
function outputProblems(
  root: CompiledWorkflow,
  stepName: string,
  index: number,
  child: CompiledWorkflow,
): ErrorDetail[] {
  const declared = new Set(child.outputNames);
  const errors: ErrorDetail[] = [];
  const unknown = (loc: Loc, key: string): void => {
    if (declared.has(key)) return;
    errors.push({
      loc,
      msg: `workflow '${child.name}' declares no output '${key}' (its outputs: ${child.outputNames.join(', ') || 'none'})`,
      type: 'value_error.unknown_output',
    });
  };
  for (const key of Object.keys(root.document.steps[index]?.outputs ?? {})) {
    unknown(['steps', index, 'outputs', key], key);
  }
  for (const { loc, text } of expressionTexts(root)) {
    for (const key of outputKeysRead(text, stepName)) unknown(loc, key);
  }
  return errors;
}

/**
 * What the parent reads of one item's result of a map over `child`
 * (`steps.<step>.outputs.results[<n>].K`) against the child's declared outputs.
 */
function itemOutputProblems(
  root: CompiledWorkflow,
  stepName: string,
  child: CompiledWorkflow,
): ErrorDetail[] {
  const declared = new Set(child.outputNames);
  const errors: ErrorDetail[] = [];
  for (const { loc, text } of expressionTexts(root)) {
    if (!text.includes(stepName)) continue;
    const pattern = new RegExp(
      `(?<![\\w.])steps\\.${stepName}\\.outputs\\.results\\[\\s*\\d+\\s*\\](?:\\.([A-Za-z0-9_-]+)|\\[\\s*(['"])(.*?)\\2\\s*\\])`,
      'g',
    );
    for (const match of text.matchAll(pattern)) {
      const key = match[1] ?? match[3] ?? '';
      if (declared.has(key)) continue;
      errors.push({
        loc,
        msg: `workflow '${child.name}' declares no output '${key}' (its outputs: ${child.outputNames.join(', ') || 'none'})`,
        type: 'value_error.unknown_output',
      });
    }
  }
  return errors;
}

/**
 * Where the chain of calls below `path`'s last workflow goes wrong: recursion (a workflow on the
 * path called again) or nesting past {@link MAX_WORKFLOW_DEPTH}, an unknown or invalid workflow
 * further down. `path` starts at the root.
 */
async function chainProblem(
  path: readonly string[],
  current: CompiledWorkflow,
  find: (name: string) => Promise<Found>,
  budget: { visits: number },
): Promise<{ msg: string; type: string } | undefined> {
  if (++budget.visits > MAX_VISITS) return undefined;
  for (const step of current.steps) {
    const name = calledWorkflow(step);
    if (name === undefined) continue;
    const chain = [...path, name];
    if (path.includes(name)) {
      return {
        msg: `recursive sub-workflows: ${chain.join(' → ')}`,
        type: 'value_error.recursion',
      };
    }
    // path holds the root and `path.length - 1` levels; `name` would be level path.length.
    if (path.length > MAX_WORKFLOW_DEPTH) {
      return {
        msg: `sub-workflows nest deeper than ${MAX_WORKFLOW_DEPTH} levels: ${chain.join(' → ')}`,
        type: 'value_error.workflow_depth',
      };
    }
    const child = await find(name);
    if ('missing' in child) {
      return {
        msg: `unknown workflow '${name}' (in ${chain.join(' → ')})`,
        type: 'value_error.unknown_workflow',
      };
    }
    if ('invalid' in child) {
      return {
        msg: `workflow '${name}' (in ${chain.join(' → ')}) is invalid: ${child.invalid}`,
        type: 'value_error.invalid_workflow',
      };
    }
    const below = await chainProblem(chain, child, find, budget);
    if (below !== undefined) return below;
  }
  return undefined;
}

/** Each expression text of a workflow with its loc (templates: the inside of each `${…}`). */
function expressionTexts(workflow: CompiledWorkflow): { loc: Loc; text: string }[] {
  const found: { loc: Loc; text: string }[] = [];
  const template = (value: unknown, loc: Loc): void => {
    if (typeof value === 'string') {
      for (const match of value.matchAll(/\$\{([^}]*)\}/g)) found.push({ loc, text: match[1]! });
    } else if (Array.isArray(value)) {
      value.forEach((item: unknown, i) => template(item, [...loc, i]));
    } else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) template(item, [...loc, key]);
    }
  };
  const condition = (value: unknown, loc: Loc): void => {
    if (typeof value === 'string') found.push({ loc, text: value });
  };
  workflow.document.steps.forEach((step, index) => {
    template(step.inputs, ['steps', index, 'inputs']);
    condition(step.when, ['steps', index, 'when']);
    condition(step.loop_until, ['steps', index, 'loop_until']);
    for (const [name, text] of Object.entries(step.verify?.criteria ?? {})) {
      condition(text, ['steps', index, 'verify', 'criteria', name]);
    }
  });
  for (const [name, spec] of Object.entries(workflow.document.outputs ?? {})) {
    template(spec.from, ['outputs', name, 'from']);
  }
  return found;
}

/** The keys `text` reads of `steps.<step>.outputs` (`.K` or `['K']`). */
function outputKeysRead(text: string, step: string): string[] {
  if (!text.includes(step)) return [];
  const pattern = new RegExp(
    `(?<![\\w.])steps\\.${step}\\.outputs(?:\\.([A-Za-z0-9_-]+)|\\[\\s*(['"])(.*?)\\2\\s*\\])`,
    'g',
  );
  return [...text.matchAll(pattern)].map((match) => match[1] ?? match[3] ?? '');
}

/** `workflowCallProblems` as a throw: a ValidationError (422) listing them, as compile does. */
export async function assertWorkflowCalls(
  root: CompiledWorkflow,
  lookup: WorkflowLookup,
): Promise<void> {
  const errors = await workflowCallProblems(root, lookup);
  if (errors.length === 0) return;
  const head = errors[0]!.msg;
  throw new ValidationError(
    errors.length === 1
      ? `invalid workflow: ${head}`
      : `invalid workflow (${errors.length} problems): ${head}`,
    errors,
    ERROR_CODES.WORKFLOW_INVALID,
  );
}
