/**
 * Full validation of a workflow document: the JSON Schema (schemas/workflow.schema.json),
 * then semantic checks: step graph (duplicates, unknown/self dependencies, cycles), agents,
 * expression syntax and references, loops, input defaults, the expected name. Semantic checks
 * also run on partly invalid documents, so one call reports every problem.
 */
import { ValidationError, type ErrorDetail } from '../errors.js';
import { workflowRubric } from './rubric.js';
import { agentNameProblem, parseAgentName } from './agent-names.js';
import {
  ExpressionError,
  analyzeCondition,
  analyzeTemplate,
  type ExpressionReferences,
} from './expressions.js';
import {
  buildStepGraph,
  dependsOnTransitively,
  findCycles,
  type StepGraph,
  type StepShape,
} from './graph-checks.js';
import { describeValue, matchesInputType, showValue, typeLabel } from './input-types.js';
import { BUILT_IN_TOOLS, MCP_TOOL_PREFIX, parseMcpToolName } from '../tools/names.js';
import { schemaErrors } from './schema-errors.js';
import { checkHumanStep } from './kinds/human.js';
import { kindKeyProblem } from './step-kinds.js';
import { checkItemReferences, checkMapStep } from './kinds/map.js';
import { workflowStepProblems } from './kinds/workflow-call.js';
import { INPUT_TYPES, type InputType } from './types.js';
import { isPlainObject, valuesEqual } from './values.js';
import { checkVerify } from './verify.js';

type Loc = (string | number)[];

/**
 * Deny by default (spec, Safety controls 4): a step's `tools:` may name built-in tools only,
 * and a `tier0_tool` step whose `inputs.tool` is a literal must list that tool.
 */
/**
 * A step's `tools:`: built-in names, and `mcp:<server>:<tool>` names of MCP servers. With the
 * configured servers known (`mcpServers`), a name of another server is an error here, at load;
 * whether the server has the tool is known only once it is reached, when the step runs.
 */
function checkTools(
  step: Record<string, unknown>,
  at: (...rest: Loc) => Loc,
  errors: ErrorDetail[],
  mcpServers: ReadonlySet<string> | undefined,
): void {
  const listed = Array.isArray(step.tools)
    ? step.tools.filter((tool) => typeof tool === 'string')
    : [];
  listed.forEach((tool, i) => {
    if (tool.startsWith(MCP_TOOL_PREFIX)) {
      const parsed = parseMcpToolName(tool);
      if (parsed === undefined) {
        errors.push({
          loc: at('tools', i),
          msg: `'${tool}' is not an MCP tool name (mcp:<server>:<tool>)`,
          type: 'value_error.unknown_tool',
        });
      } else if (mcpServers !== undefined && !mcpServers.has(parsed.server)) {
        errors.push({
          loc: at('tools', i),
          msg: `unknown MCP server '${parsed.server}' in '${tool}'; ${mcpServers.size === 0 ? 'no MCP servers are configured (AGENTIC_MCP_CONFIG)' : `servers are ${[...mcpServers].sort().join(', ')}`}`,
          type: 'value_error.unknown_tool',
        });
      }
      return;
    }
    if (!(BUILT_IN_TOOLS as readonly string[]).includes(tool)) {
      errors.push({
        loc: at('tools', i),
        msg: `unknown tool '${tool}'; tools are ${BUILT_IN_TOOLS.join(', ')}`,
        type: 'value_error.unknown_tool',
      });
    }
  });
  const tool = isPlainObject(step.inputs) ? step.inputs.tool : undefined;
  if (
    step.agent === 'tier0_tool' &&
    typeof tool === 'string' &&
    !tool.includes('${') &&
    !listed.includes(tool)
  ) {
    errors.push({
      loc: at('inputs', 'tool'),
      msg: `tool '${tool}' is not in this step's tools list (tools are denied by default)`,
      type: 'value_error.tool_not_listed',
    });
  }
}

export interface ValidateWorkflowOptions {
  /** The name the document must carry (the file stem), when known. */
  expectedName?: string | undefined;
  /**
   * Names of agents registered by the application (`agents` of `createRuntime`,
   * `AGENTIC_AGENTS_MODULE`): a step may name them even outside the `tier{N}_{role}` form.
   * @default none
   */
  customAgents?: ReadonlySet<string> | undefined;
  /**
   * The configured MCP servers (AGENTIC_MCP_CONFIG): a `tools:` name of another server is an
   * error. Undefined: not known here, any `mcp:<server>:<tool>` is accepted and an unknown server
   * fails the step when it runs. @default undefined
   */
  mcpServers?: ReadonlySet<string> | undefined;
}

function isCustomAgentLoc(doc: unknown, loc: Loc, custom: ReadonlySet<string>): boolean {
  if (loc.length !== 3 || loc[0] !== 'steps' || loc[2] !== 'agent') return false;
  const steps = isPlainObject(doc) && Array.isArray(doc.steps) ? doc.steps : [];
  const step: unknown = steps[loc[1] as number];
  return isPlainObject(step) && typeof step.agent === 'string' && custom.has(step.agent);
}

interface Reference {
  loc: Loc;
  refs: ExpressionReferences;
  /** Whether the step's own outputs may be read (loop_until sees the previous iteration). */
  selfAllowed: boolean;
}

function expressionError(loc: Loc, field: string, error: unknown): ErrorDetail {
  const detail = error instanceof ExpressionError ? error.message : 'cannot be compiled';
  return { loc, msg: `invalid expression in ${field}: ${detail}`, type: 'value_error.expression' };
}

/** Compiles each string leaf of a template separately so an error points at its own loc. */
function checkTemplate(
  value: unknown,
  loc: Loc,
  field: string,
  errors: ErrorDetail[],
  found: Reference[],
  selfAllowed: boolean,
): void {
  if (typeof value === 'string') {
    if (!value.includes('${')) return;
    try {
      found.push({ loc, refs: analyzeTemplate(value).references, selfAllowed });
    } catch (error) {
      errors.push(expressionError(loc, field, error));
    }
  } else if (Array.isArray(value)) {
    value.forEach((item: unknown, i) =>
      checkTemplate(item, [...loc, i], field, errors, found, selfAllowed),
    );
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value))
      checkTemplate(item, [...loc, key], field, errors, found, selfAllowed);
  }
}

function checkExpression(
  text: unknown,
  loc: Loc,
  field: string,
  errors: ErrorDetail[],
  found: Reference[],
  selfAllowed: boolean,
): void {
  if (typeof text !== 'string') return;
  try {
    found.push({ loc, refs: analyzeCondition(text).references, selfAllowed });
  } catch (error) {
    errors.push(expressionError(loc, field, error));
  }
}

/** A workflow's own rubric (`evaluation.criteria`) is checked at load, like a rubric file. */
function checkOwnRubric(doc: Record<string, unknown>, errors: ErrorDetail[]): void {
  if (!isPlainObject(doc.evaluation)) return;
  try {
    workflowRubric(typeof doc.name === 'string' ? doc.name : 'workflow', doc.evaluation);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    errors.push(...(error.details ?? []));
  }
}

function checkInputs(doc: Record<string, unknown>, errors: ErrorDetail[]): void {
  if (!isPlainObject(doc.inputs)) return;
  for (const [name, spec] of Object.entries(doc.inputs)) {
    if (!isPlainObject(spec) || !(INPUT_TYPES as readonly unknown[]).includes(spec.type)) continue;
    const type = spec.type as InputType;
    const options = Array.isArray(spec.enum) ? (spec.enum as unknown[]) : undefined;
    options?.forEach((option, i) => {
      if (!matchesInputType(option, type)) {
        errors.push({
          loc: ['inputs', name, 'enum', i],
          msg: `enum value ${showValue(option)} is ${describeValue(option)}, but the input type is ${typeLabel(type)}`,
          type: 'type_error',
        });
      }
    });
    if (!Object.hasOwn(spec, 'default') || spec.default === null) continue;
    const loc = ['inputs', name, 'default'];
    if (!matchesInputType(spec.default, type)) {
      errors.push({
        loc,
        msg: `default must be ${typeLabel(type)}, not ${describeValue(spec.default)}`,
        type: 'type_error',
      });
    } else if (
      options !== undefined &&
      !options.some((option) => valuesEqual(option, spec.default))
    ) {
      errors.push({
        loc,
        msg: `default ${showValue(spec.default)} is not one of ${options.map((o) => showValue(o)).join(', ')}`,
        type: 'value_error.enum',
      });
    }
  }
}

/** Context variable → indexes of the steps whose `outputs` mapping writes it. */
function contextWriters(steps: readonly unknown[]): Map<string, number[]> {
  const writers = new Map<string, number[]>();
  steps.forEach((step, index) => {
    if (!isPlainObject(step) || !isPlainObject(step.outputs)) return;
    for (const variable of Object.values(step.outputs)) {
      if (typeof variable !== 'string') continue;
      const list = writers.get(variable) ?? [];
      list.push(index);
      writers.set(variable, list);
    }
  });
  return writers;
}

function checkStepReferences(
  index: number,
  name: string,
  found: readonly Reference[],
  graph: StepGraph,
  writers: Map<string, number[]>,
  steps: readonly StepShape[],
  errors: ErrorDetail[],
): void {
  const ready = (target: number, selfAllowed: boolean): boolean =>
    (selfAllowed && target === index) || dependsOnTransitively(graph, index, target);
  for (const { loc, refs, selfAllowed } of found) {
    for (const ref of refs.steps) {
      const target = graph.byName.get(ref);
      if (target === undefined) {
        errors.push({
          loc,
          msg: `references unknown step '${ref}'`,
          type: 'value_error.unknown_step_reference',
        });
      } else if (target === index && !selfAllowed) {
        errors.push({
          loc,
          msg: `step '${name}' reads its own outputs; only loop_until may (it sees the previous iteration)`,
          type: 'value_error.step_reference',
        });
      } else if (!ready(target, selfAllowed)) {
        errors.push({
          loc,
          msg: `references step '${ref}', which is not a dependency of '${name}' (directly or indirectly), so its value would not be ready; add it to depends_on`,
          type: 'value_error.step_reference',
        });
      }
    }
    for (const variable of refs.context) {
      const sources = writers.get(variable);
      if (sources === undefined) {
        errors.push({
          loc,
          msg: `context.${variable} is not written by any step's outputs`,
          type: 'value_error.unknown_context_reference',
        });
      } else if (!sources.some((source) => ready(source, selfAllowed))) {
        const by = sources.map((source) => `'${steps[source]?.name ?? source}'`).join(', ');
        errors.push({
          loc,
          msg: `context.${variable} is written by ${by}, not a dependency of '${name}' (directly or indirectly), so its value would not be ready`,
          type: 'value_error.step_reference',
        });
      }
    }
  }
}

function locKey(loc: Loc): string {
  return JSON.stringify(loc);
}

function compareLoc(a: Loc, b: Loc): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Sorted by location, one entry per (loc, type). */
function tidy(errors: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  const unique = errors.filter((error) => {
    const key = `${locKey(error.loc)}|${error.type}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort((a, b) => compareLoc(a.loc, b.loc));
}

/**
 * Every problem of a workflow document as `{loc, msg, type}` entries (empty when valid), e.g.
 * `{loc: ['steps', 2, 'depends_on', 0], msg: 'dependency cycle: a → b → a', type: 'value_error.cycle'}`.
 */
export function validateWorkflow(
  doc: unknown,
  options: ValidateWorkflowOptions = {},
): ErrorDetail[] {
  const custom = options.customAgents;
  const errors =
    custom === undefined || custom.size === 0
      ? schemaErrors(doc)
      : schemaErrors(doc).filter((error) => !isCustomAgentLoc(doc, error.loc, custom));
  if (!isPlainObject(doc)) return tidy(errors);
  if (
    options.expectedName !== undefined &&
    typeof doc.name === 'string' &&
    doc.name !== options.expectedName
  ) {
    errors.push({
      loc: ['name'],
      msg: `name '${doc.name}' must equal the file name '${options.expectedName}'`,
      type: 'value_error.name_mismatch',
    });
  }
  checkInputs(doc, errors);
  checkOwnRubric(doc, errors);
  const rawSteps: readonly unknown[] = Array.isArray(doc.steps) ? doc.steps : [];
  const shapes: StepShape[] = rawSteps.map((step) => ({
    name: isPlainObject(step) && typeof step.name === 'string' ? step.name : undefined,
    dependsOn: isPlainObject(step) && Array.isArray(step.depends_on) ? step.depends_on : undefined,
  }));
  const graph = buildStepGraph(shapes, errors);
  findCycles(shapes, graph, errors);
  const writers = contextWriters(rawSteps);
  rawSteps.forEach((step, index) => {
    if (!isPlainObject(step)) return;
    const at = (...rest: Loc): Loc => ['steps', index, ...rest];
    const kindProblem = kindKeyProblem(step);
    if (kindProblem !== undefined) {
      const { key, msg, type } = kindProblem;
      errors.push({ loc: at(key), msg, type });
    }
    errors.push(...workflowStepProblems(step, at));
    if (
      typeof step.agent === 'string' &&
      custom?.has(step.agent) !== true &&
      parseAgentName(step.agent) !== undefined
    ) {
      const problem = agentNameProblem(step.agent);
      if (problem !== undefined)
        errors.push({ loc: at('agent'), msg: problem, type: 'value_error.unknown_agent' });
    }
    checkTools(step, at, errors, options.mcpServers);
    if (step.loop_max !== undefined && step.loop_until === undefined) {
      errors.push({
        loc: at('loop_max'),
        msg: 'loop_max needs loop_until (the condition that ends the loop)',
        type: 'value_error.loop',
      });
    }
    const found: Reference[] = [];
    checkExpression(step.when, at('when'), 'when', errors, found, false);
    checkExpression(step.loop_until, at('loop_until'), 'loop_until', errors, found, true);
    // Criteria see the step's own outputs, like loop_until.
    checkVerify(step.verify, at('verify'), errors, (text, loc) =>
      checkExpression(text, loc, 'verify.criteria', errors, found, true),
    );
    if (isPlainObject(step.inputs))
      checkTemplate(step.inputs, at('inputs'), 'inputs', errors, found, false);
    checkMapStep(step, at, errors);
    checkTemplate(step.for_each, at('for_each'), 'for_each', errors, found, false);
    checkItemReferences(step, found, errors);
    checkHumanStep(step, at, errors);
    if (isPlainObject(step.human) && typeof step.human.prompt === 'string')
      checkTemplate(step.human.prompt, at('human', 'prompt'), 'human.prompt', errors, found, false);
    const name = shapes[index]?.name;
    if (name !== undefined && graph.byName.get(name) === index) {
      checkStepReferences(index, name, found, graph, writers, shapes, errors);
    }
  });
  if (isPlainObject(doc.outputs)) {
    for (const [name, spec] of Object.entries(doc.outputs)) {
      if (!isPlainObject(spec)) continue;
      const found: Reference[] = [];
      checkTemplate(spec.from, ['outputs', name, 'from'], 'outputs', errors, found, false);
      checkItemReferences({}, found, errors);
      for (const { loc, refs } of found) {
        for (const ref of refs.steps) {
          if (!graph.byName.has(ref)) {
            errors.push({
              loc,
              msg: `references unknown step '${ref}'`,
              type: 'value_error.unknown_step_reference',
            });
          }
        }
        for (const variable of refs.context) {
          if (!writers.has(variable)) {
            errors.push({
              loc,
              msg: `context.${variable} is not written by any step's outputs`,
              type: 'value_error.unknown_context_reference',
            });
          }
        }
      }
    }
  }
  return tidy(errors);
}
