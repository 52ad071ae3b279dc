/**
 * The `human` step kind: a question to a person (docs/workflow-format.md, "Human steps"). Its
 * input is its prompt, rendered over the run when the step starts; its answer, checked against
 * its JSON Schema, is its outputs. What the workflow schema cannot say is checked here at load:
 * the keys an agent step has and a human step has not, the schema (compiled once, at load), the
 * timeout policy. The executor is src/engine/kinds/human.ts.
 */
import type { ErrorDetail } from '../../errors.js';
import { isPlainObject } from '../values.js';
import { compileSchema } from '../verify.js';

/** `human:` as written in YAML (after schema validation). */
export interface HumanDocument {
  prompt: string;
  schema: Record<string, unknown>;
  timeout_seconds?: number;
  on_timeout?: HumanTimeoutPolicy;
  default?: Record<string, unknown>;
}

/** What a human step does when nobody answers in time: fail, or take its `default:` answer. */
export const HUMAN_TIMEOUT_POLICIES = ['fail', 'default'] as const;
export type HumanTimeoutPolicy = (typeof HUMAN_TIMEOUT_POLICIES)[number];

/** A human step's question, compiled. */
export interface CompiledHuman {
  /** The answer's JSON Schema, as written (listed and sent in `approval_required`). */
  readonly schema: Record<string, unknown>;
  /** What is wrong with an answer (`/approved must be boolean; …`), undefined when it matches. */
  check(answer: unknown): string | undefined;
  /** How long the step waits, in seconds; undefined: until answered or the run ends. */
  readonly timeoutSeconds: number | undefined;
  readonly onTimeout: HumanTimeoutPolicy;
  /** The answer taken at the timeout (`on_timeout: default`). */
  readonly defaultAnswer: Readonly<Record<string, unknown>> | undefined;
}

/**
 * Step keys that mean something for an agent call only. A human step's input is its prompt, its
 * wait is bounded by `human.timeout_seconds`, and it asks once (its answer is not retried).
 */
const AGENT_ONLY_KEYS = [
  'inputs',
  'tools',
  'model',
  'max_attempts',
  'timeout_seconds',
  'loop_until',
  'loop_max',
  'verify',
] as const;

const AGENT_ONLY_WHY: Record<(typeof AGENT_ONLY_KEYS)[number], string> = {
  inputs: 'its input is its human.prompt',
  tools: 'a person calls no tool',
  model: 'a person is not a model',
  max_attempts: 'it asks once',
  timeout_seconds: 'its wait is bounded by human.timeout_seconds',
  loop_until: 'it asks once',
  loop_max: 'it asks once',
  verify: 'its answer is checked by human.schema',
};

type Loc = (string | number)[];

/** Load-time checks of a human step (`human:` set) that its JSON Schema cannot make. */
export function checkHumanStep(
  step: Readonly<Record<string, unknown>>,
  at: (...rest: Loc) => Loc,
  errors: ErrorDetail[],
): void {
  const human = step.human;
  if (!isPlainObject(human)) return;
  for (const key of AGENT_ONLY_KEYS) {
    if (step[key] === undefined) continue;
    errors.push({
      loc: at(key),
      msg: `${key} is not for a human step (${AGENT_ONLY_WHY[key]})`,
      type: 'value_error.human',
    });
  }
  const schema = human.schema;
  if (!isPlainObject(schema)) return;
  if (schema.type !== 'object') {
    errors.push({
      loc: at('human', 'schema', 'type'),
      msg: "the answer becomes the step's outputs: the schema must say type: object",
      type: 'value_error.human',
    });
  }
  let check: ((answer: unknown) => string | undefined) | undefined;
  try {
    check = answerCheck(schema);
  } catch (error) {
    errors.push({
      loc: at('human', 'schema'),
      msg: `invalid JSON Schema: ${error instanceof Error ? error.message : 'cannot be compiled'}`,
      type: 'value_error.human',
    });
  }
  const onTimeout = human.on_timeout ?? 'fail';
  if (onTimeout === 'default' && human.default === undefined) {
    errors.push({
      loc: at('human', 'default'),
      msg: 'on_timeout: default needs default (the answer taken when nobody answers in time)',
      type: 'value_error.human',
    });
  }
  if (onTimeout === 'fail' && human.default !== undefined) {
    errors.push({
      loc: at('human', 'default'),
      msg: 'default is taken only with on_timeout: default',
      type: 'value_error.human',
    });
  }
  if (onTimeout === 'default' && human.timeout_seconds === undefined) {
    errors.push({
      loc: at('human', 'on_timeout'),
      msg: 'on_timeout: default needs timeout_seconds (without one the step never times out)',
      type: 'value_error.human',
    });
  }
  if (check !== undefined && isPlainObject(human.default)) {
    const problem = check(human.default);
    if (problem !== undefined) {
      errors.push({
        loc: at('human', 'default'),
        msg: `default does not match the schema: ${problem}`,
        type: 'value_error.human',
      });
    }
  }
}

/** Compiles a checked `human:` block (its schema compiled here, once per load). */
export function compileHuman(human: HumanDocument): CompiledHuman {
  return {
    schema: human.schema,
    check: answerCheck(human.schema),
    timeoutSeconds: human.timeout_seconds,
    onTimeout: human.on_timeout ?? 'fail',
    defaultAnswer: human.default,
  };
}

/** The answer's check against `schema`; throws when the schema cannot be compiled. */
function answerCheck(schema: Record<string, unknown>): (answer: unknown) => string | undefined {
  const validate = compileSchema(schema);
  return (answer) => {
    if (validate(answer)) return undefined;
    return (validate.errors ?? [])
      .map((error) => `${error.instancePath || '(answer)'} ${error.message ?? 'is invalid'}`)
      .join('; ');
  };
}
