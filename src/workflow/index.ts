/** The workflow model: YAML parsing, validation, expressions, compilation, inputs, registry. */
export * from './types.js';
export { ExpressionError } from './expression-error.js';
export {
  analyzeCondition,
  analyzeExpression,
  analyzeTemplate,
  compileCondition,
  compileExpression,
  compileTemplate,
  expressionReferences,
  type AnalyzedExpression,
  type ExpressionReferences,
} from './expressions.js';
export {
  compareValues,
  containsValue,
  interpolationText,
  isTruthy,
  valuesEqual,
} from './values.js';
export { parseWorkflowYaml, MAX_ALIAS_COUNT, type ParseYamlOptions } from './parse.js';
export { validateWorkflow, type ValidateWorkflowOptions } from './validate.js';
export { compileWorkflow, DEFAULT_LOOP_MAX } from './compile.js';
export { resolveRunInputs, runInputErrors } from './inputs.js';
export {
  createWorkflowRegistry,
  isWorkflowName,
  workflowNameOf,
  type LoadedWorkflow,
  type WorkflowRegistry,
  type WorkflowRegistryOptions,
} from './registry.js';
