/**
 * The words of the graph machine: what each step region and each of its states says in the
 * inspector and the Stately visualizer (what the step does, what it waits for, what follows).
 * Pure: imports types only.
 */
import type { CompiledWorkflow } from '../src/workflow/types.js';
import type { CompiledMap } from '../src/workflow/kinds/map.js';

/** `"a"`, `"a" and "b"`, `"a", "b" and "c"`. */
export function nameList(names: readonly string[]): string {
  const quoted = names.map((name) => `"${name}"`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]!}`;
}

/** `text` ending with a full stop unless it already ends a sentence. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The descriptions of step `index`'s region and of each of its states. */
export interface StepWords {
  region: string;
  pending: string;
  running: string;
  awaitingApproval: string;
  awaitingInput: string;
  retrying: string;
  success: string;
  failed: string;
  skipped: string;
}

/** The running state of a map step (kind map): its items, their slots and the failure rule. */
function mapRunning(quoted: string, agent: string, map: CompiledMap): string {
  const rule =
    map.onItemFailure === 'collect'
      ? 'every item runs; a failed item is {error} in results and the step succeeds'
      : 'the first failed item fails the step and no more items start';
  return (
    `Running the items of ${map.source} through ${bodyWords(agent, map)}, up to ${map.maxConcurrency} at once ` +
    `(max_concurrency); each item retries up to the step's max_attempts. ${sentence(rule[0]!.toUpperCase() + rule.slice(1))} ` +
    `Step ${quoted} ends when every item has; its live item counts are in GET /api/runs/{run_id}/explain.`
  );
}

/** A map's body: an agent, or a sub-workflow whose every item is a child run. */
function bodyWords(agent: string, map: CompiledMap): string {
  const child = map.body.workflowCall?.workflow;
  return child === undefined
    ? `agent ${agent}`
    : `workflow '${child}' (each item a child run with its own run id and run file)`;
}

/** Describes step `index` of `workflow`. */
export function stepWords(workflow: CompiledWorkflow, index: number): StepWords {
  const step = workflow.steps[index]!;
  const when = workflow.document.steps[index]?.when;
  const quoted = `"${step.name}"`;
  const what = step.description.trim() ? `: ${step.description.trim()}` : '';
  const deps = step.dependsOn;
  const waits =
    deps.length === 0
      ? 'Depends on no other step: ready as soon as the run starts.'
      : deps.length === 1
        ? `Waits for step ${nameList(deps)} to finish; if it fails, this step is skipped.`
        : `Waits for steps ${nameList(deps)} to all finish; if one fails, this step is skipped.`;
  const condition =
    when === undefined
      ? ''
      : ` Once ready, runs only if ${String(when)} holds, else it is skipped.`;
  const dependents = step.dependentsIndex.map((d) => workflow.steps[d]!.name);
  const next =
    dependents.length === 0 ? '' : ` Next: ${nameList(dependents)} may start once ready.`;
  const outputs = Object.values(step.outputs);
  const writes =
    outputs.length === 0
      ? ''
      : ` Its outputs set ${outputs.map((o) => `context.${o}`).join(', ')}.`;
  const map = step.map;
  const child = step.workflowCall?.workflow;
  const human = step.human;
  const asks =
    human === undefined
      ? ''
      : `Step ${quoted} asks a person (a human step) and waits for an answer matching its schema` +
        (human.timeoutSeconds === undefined
          ? ''
          : ` for ${human.timeoutSeconds}s (then ${human.onTimeout === 'default' ? 'its default answer' : 'it fails'})`);
  return {
    region: sentence(
      human !== undefined
        ? `${asks}${what}`
        : map !== undefined
          ? `Step ${quoted} maps ${bodyWords(step.agent, map)} over each item of ${map.source} (item.${map.as})${what}`
          : child !== undefined
            ? `Step ${quoted} runs workflow '${child}' as a child run${what}`
            : `Step ${quoted} runs agent ${step.agent}${what}`,
    ),
    pending: `${waits}${condition} Starts when a concurrency slot is free (ready steps start in YAML order).`,
    running:
      human !== undefined
        ? `Step ${quoted} renders its prompt and puts its question to a person.`
        : map !== undefined
          ? mapRunning(quoted, step.agent, map)
          : child !== undefined
            ? `A child run of workflow '${child}' (its own run id and run file, its run actor a child of this run's) runs an attempt of step ${quoted}; its step events reach this run's stream tagged parent_step. Its end decides: its outputs are the step's, or a retry, or failure on the last attempt.`
            : `Agent ${step.agent} runs an attempt of step ${quoted}` +
              (step.loopUntil === undefined ? '.' : ', repeating until its loop_until holds.') +
              ' Its result decides: success, a retry, or failure on the last attempt.',
    awaitingApproval: `A high-risk tool call of ${quoted} (${step.tools.join(', ')}) waits for the approval gate (AGENTIC_APPROVAL_PROVIDER; over HTTP: POST /api/approvals/{call_id}); cancelling the run ends the wait.`,
    awaitingInput: `The question of ${quoted} waits for a person: listed by GET /api/approvals, answered with POST /api/approvals/{call_id} {"answer": {...}} (or agentic approvals answer); the answer becomes its outputs. Cancelling the run ends the wait.`,
    retrying: `An attempt of ${quoted} failed with attempts left: waits the backoff delay, then runs the next attempt.`,
    success: `Step ${quoted} succeeded.${writes}${next}`,
    failed:
      `Step ${quoted} failed: its last attempt failed, its when:/inputs could not be evaluated, or the run was cancelled or timed out.` +
      (dependents.length === 0 ? '' : ` Steps that depend on it are skipped.`),
    skipped:
      `Step ${quoted} did not run: ` +
      (when === undefined ? '' : 'its when: was false, or ') +
      'a dependency failed, or the run was cancelled or timed out.',
  };
}
