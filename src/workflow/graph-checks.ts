/**
 * Structural checks of the step graph: duplicate names, unknown and self dependencies,
 * cycles. Works on partly invalid documents too, so one validation reports every problem.
 */
import type { ErrorDetail } from '../errors.js';

/** The parts of a step the graph checks read (anything may be malformed). */
export interface StepShape {
  name: string | undefined;
  dependsOn: readonly unknown[] | undefined;
}

export interface StepGraph {
  /** Step name → index of its first occurrence. */
  byName: Map<string, number>;
  /** Per step, the indexes of its valid dependencies (known, not itself, no repeats). */
  deps: number[][];
  /** Per step, the position in its depends_on list of each entry of {@link deps}. */
  depPositions: number[][];
}

export function buildStepGraph(steps: readonly StepShape[], errors: ErrorDetail[]): StepGraph {
  const byName = new Map<string, number>();
  steps.forEach((step, index) => {
    if (step.name === undefined) return;
    const first = byName.get(step.name);
    if (first === undefined) {
      byName.set(step.name, index);
    } else {
      errors.push({
        loc: ['steps', index, 'name'],
        msg: `duplicate step name '${step.name}' (already used by steps[${first}])`,
        type: 'value_error.duplicate_step',
      });
    }
  });
  const deps: number[][] = [];
  const depPositions: number[][] = [];
  steps.forEach((step, index) => {
    const own: number[] = [];
    const positions: number[] = [];
    (step.dependsOn ?? []).forEach((dep, position) => {
      if (typeof dep !== 'string') return;
      const loc = ['steps', index, 'depends_on', position];
      const target = byName.get(dep);
      if (dep === step.name) {
        errors.push({
          loc,
          msg: `step '${dep}' depends on itself`,
          type: 'value_error.self_dependency',
        });
      } else if (target === undefined) {
        errors.push({
          loc,
          msg: `unknown dependency '${dep}': no step has that name`,
          type: 'value_error.unknown_dependency',
        });
      } else if (own.includes(target)) {
        errors.push({
          loc,
          msg: `'${dep}' is listed twice in depends_on`,
          type: 'value_error.duplicate_dependency',
        });
      } else {
        own.push(target);
        positions.push(position);
      }
    });
    deps.push(own);
    depPositions.push(positions);
  });
  return { byName, deps, depPositions };
}

/**
 * Reports each dependency cycle once, at the depends_on entry that closes it, with the path
 * (`a → b → a`, read "a depends on b, which depends on a"). Iterative: deep chains are fine.
 */
export function findCycles(
  steps: readonly StepShape[],
  graph: StepGraph,
  errors: ErrorDetail[],
): void {
  const WHITE = 0;
  const GRAY = 1;
  const BLACK = 2;
  const color = new Uint8Array(steps.length);
  const seen = new Set<string>();
  for (let root = 0; root < steps.length; root++) {
    if (color[root] !== WHITE) continue;
    const stack: number[] = [root];
    const cursor: number[] = [0];
    color[root] = GRAY;
    while (stack.length > 0) {
      const top = stack.length - 1;
      const node = stack[top] as number;
      const next = cursor[top] as number;
      const deps = graph.deps[node] ?? [];
      if (next >= deps.length) {
        color[node] = BLACK;
        stack.pop();
        cursor.pop();
        continue;
      }
      cursor[top] = next + 1;
      const dep = deps[next] as number;
      if (color[dep] === WHITE) {
        color[dep] = GRAY;
        stack.push(dep);
        cursor.push(0);
      } else if (color[dep] === GRAY) {
        const cycle = stack.slice(stack.indexOf(dep));
        const key = [...cycle].sort((a, b) => a - b).join(',');
        if (seen.has(key)) continue;
        seen.add(key);
        const names = [...cycle, dep].map((i) => steps[i]?.name ?? `steps[${i}]`);
        errors.push({
          loc: ['steps', node, 'depends_on', graph.depPositions[node]?.[next] ?? next],
          msg: `dependency cycle: ${names.join(' → ')}`,
          type: 'value_error.cycle',
        });
      }
    }
  }
}

/** Whether `ancestor` is a direct or indirect dependency of `step`. */
export function dependsOnTransitively(graph: StepGraph, step: number, ancestor: number): boolean {
  const direct = graph.deps[step] ?? [];
  if (direct.includes(ancestor)) return true;
  const visited = new Set<number>([step]);
  const pending = [...direct];
  while (pending.length > 0) {
    const node = pending.pop() as number;
    if (node === ancestor) return true;
    if (visited.has(node)) continue;
    visited.add(node);
    for (const dep of graph.deps[node] ?? []) if (!visited.has(dep)) pending.push(dep);
  }
  return false;
}
