/**
 * Workflow document → {@link CompiledWorkflow}: validated, indexed (dependencies and
 * dependents as step indexes) and with every expression compiled once into a closure.
 */
import { ERROR_CODES, ValidationError } from '../errors.js';
import { parseAgentName } from './agent-names.js';
import {
  EvaluationLimitError,
  analyzeTemplate,
  analyzeCondition,
  compileCondition,
  compileTemplate,
} from './expressions.js';
import { DEFAULT_CONTENT_LIMITS, type ContentLimits } from './limits.js';
import { TRUNCATED_FLAG, boundRecord } from './size-bounds.js';
import type {
  CompiledStep,
  CompiledWorkflow,
  EvalScope,
  Evaluator,
  StepDocument,
  WorkflowDocument,
} from './types.js';
import { compileHuman } from './kinds/human.js';
import { stepKindOf, type StepKindSpec } from './step-kinds.js';
import { compileMapStep } from './kinds/map.js';
import { validateWorkflow, type ValidateWorkflowOptions } from './validate.js';
import { compileVerify } from './verify.js';
import { isPlainObject } from './values.js';

export interface CompileWorkflowOptions extends ValidateWorkflowOptions {
  /**
   * Bounds of rendered templates and of step inputs (docs/limits.md).
   * @default {@link DEFAULT_CONTENT_LIMITS}
   */
  limits?: Pick<ContentLimits, 'maxTemplateBytes' | 'maxStepIoBytes'> | undefined;
}

/** Constant templates ignore the scope; this one is only used to read their value. */
const EMPTY_SCOPE: EvalScope = Object.freeze({ inputs: {}, steps: {}, context: {} });

/**
 * A step's inputs: rendered within the template bound (over it, the evaluator throws and the
 * step fails), then each entry over the step I/O bound replaced by a truncation marker.
 */
function boundedInputs(
  template: { evaluate: Evaluator; constant: boolean },
  maxBytes: number,
): Evaluator {
  const render = template.evaluate;
  if (template.constant) {
    // The same value at every step start: bounded once here.
    const value = render(EMPTY_SCOPE);
    // Shared by every run, like the frozen constant it replaces.
    const bounded = isPlainObject(value) ? Object.freeze(boundRecord(value, maxBytes)) : value;
    return () => bounded;
  }
  return (scope) => {
    const value = render(scope);
    return isPlainObject(value) ? boundRecord(value, maxBytes) : value;
  };
}

/**
 * The workflow outputs: a rendering over the template bound (or too deep to evaluate) becomes a
 * marker carrying the reason, so the run still ends with its record.
 */
function guardedOutputs(render: Evaluator): Evaluator {
  return (scope) => {
    try {
      return render(scope);
    } catch (error) {
      if (!(error instanceof EvaluationLimitError)) throw error;
      return { [TRUNCATED_FLAG]: true, error: error.message };
    }
  };
}

/**
 * What each kind adds to a compiled step: one case per kind (step-kinds.ts). Applied last, so a
 * kind may also set what a field means for its steps (`render` compiles an input template).
 */
function compileKind(
  spec: StepKindSpec,
  step: StepDocument,
  render: (template: unknown) => Evaluator,
): Pick<CompiledStep, 'kind' | 'agent' | 'tier'> & Partial<CompiledStep> {
  switch (spec.kind) {
    // A map step compiles as its body's kind first (compileMapStep wraps it).
    case 'agent':
    case 'map': {
      const agent = spec.label(step);
      if (spec.kind === 'map' && step.workflow !== undefined) {
        return { kind: spec.kind, agent, tier: 0, workflowCall: { workflow: step.workflow } };
      }
      return { kind: spec.kind, agent, tier: parseAgentName(agent)?.tier ?? 0 };
    }
    case 'workflow':
      return {
        kind: spec.kind,
        agent: spec.label(step),
        tier: 0,
        workflowCall: { workflow: step.workflow ?? '' },
      };
    case 'human': {
      const human = step.human!;
      // Its input is its prompt, rendered when it starts (step_start's input, the run file's);
      // it asks once: a timeout is the step's end, not an attempt to retry.
      return {
        kind: spec.kind,
        agent: spec.label(step),
        tier: 0,
        human: compileHuman(human),
        inputs: render({ prompt: human.prompt }),
        maxAttempts: 1,
      };
    }
  }
}

/** `loop_max` when a step sets `loop_until` only. */
export const DEFAULT_LOOP_MAX = 10;

function summary(count: number, first: string | undefined): string {
  const head = first === undefined ? '' : `: ${first}`;
  return count === 1 ? `invalid workflow${head}` : `invalid workflow (${count} problems)${head}`;
}

/**
 * Validates and compiles a workflow document. Throws {@link ValidationError} (code
 * `workflow_invalid`, status 422) listing every problem when the document is invalid.
 */
export function compileWorkflow(
  doc: unknown,
  options: CompileWorkflowOptions = {},
): CompiledWorkflow {
  const limits = options.limits ?? DEFAULT_CONTENT_LIMITS;
  const template = { maxBytes: limits.maxTemplateBytes };
  const errors = validateWorkflow(doc, options);
  if (errors.length > 0) {
    throw new ValidationError(
      summary(errors.length, errors[0]?.msg),
      errors,
      ERROR_CODES.WORKFLOW_INVALID,
    );
  }
  // validateWorkflow proved the document has this shape.
  const document = doc as WorkflowDocument;
  const stepIndex = new Map<string, number>();
  document.steps.forEach((step, index) => stepIndex.set(step.name, index));
  const dependents: number[][] = document.steps.map(() => []);
  const steps: CompiledStep[] = document.steps.map((step, index) => {
    const dependsOn = step.depends_on ?? [];
    const dependsOnIndex = dependsOn.map((dep) => stepIndex.get(dep) as number);
    for (const dep of dependsOnIndex) dependents[dep]?.push(index);
    const loopUntil = step.loop_until === undefined ? undefined : compileCondition(step.loop_until);
    const when = step.when === undefined ? undefined : analyzeCondition(step.when);
    const kind = stepKindOf(step);
    const compiled: CompiledStep = {
      name: step.name,
      index,
      description: step.description ?? '',
      dependsOn,
      dependsOnIndex,
      dependentsIndex: dependents[index] as number[],
      when: when?.evaluate,
      // Always set (undefined without a when:): every compiled step has one shape.
      whenReferences: when?.references,
      inputs: boundedInputs(analyzeTemplate(step.inputs ?? {}, template), limits.maxStepIoBytes),
      outputs: step.outputs ?? {},
      tools: step.tools ?? [],
      model: step.model,
      maxAttempts: step.max_attempts,
      resume: step.resume ?? 'retry',
      timeoutSeconds: step.timeout_seconds,
      loopUntil,
      loopMax: loopUntil === undefined ? undefined : (step.loop_max ?? DEFAULT_LOOP_MAX),
      verify: step.verify === undefined ? undefined : compileVerify(step.verify),
      ...compileKind(kind, step, (value) =>
        boundedInputs(analyzeTemplate(value, template), limits.maxStepIoBytes),
      ),
    };
    if (kind.kind !== 'map') return compiled;
    return compileMapStep(compiled, step, analyzeTemplate(step.for_each, template).evaluate);
  });
  const outputSpecs = Object.entries(document.outputs ?? {});
  return {
    name: document.name,
    description: document.description ?? '',
    version: document.version === undefined ? undefined : String(document.version),
    document,
    inputs: document.inputs ?? {},
    outputNames: outputSpecs.map(([name]) => name),
    optionalOutputs: outputSpecs.filter(([, spec]) => spec.optional === true).map(([name]) => name),
    outputs: guardedOutputs(
      compileTemplate(
        Object.fromEntries(outputSpecs.map(([name, spec]) => [name, spec.from])),
        template,
      ),
    ),
    steps,
    stepIndex,
  };
}
