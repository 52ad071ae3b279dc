/**
 * `agentic run` under `AGENTIC_APPROVAL_PROVIDER=http`, or of a workflow with human steps. The
 * process serves no HTTP API, so `POST /api/approvals/{call_id}` cannot reach its calls: on a
 * terminal the person at it is the approver (each call or question is asked on stderr, answered
 * on stdin, one at a time: y/N for a call, a JSON object for a question); anywhere else nobody
 * could answer, so such a workflow is refused before it starts rather than left waiting.
 */
import { createInterface, type Interface } from 'node:readline';
import type { RuntimeApprovals } from '../engine/runtime-approvals.js';
import type { WorkflowEvent } from '../engine/types.js';
import { createToolKit, TOOL_RISKS } from '../tools/index.js';
import type { CompiledWorkflow } from '../workflow/index.js';
import { CliError } from './io.js';

/** The steps of `workflow` whose `tools:` list a tool that needs an approval. */
export async function stepsNeedingApproval(
  workflow: Pick<CompiledWorkflow, 'steps'>,
): Promise<{ step: string; tool: string }[]> {
  // The risk is the tool definition's own: asked of the built-in tools, not listed again here.
  const kit = await createToolKit();
  try {
    return workflow.steps.flatMap((step) =>
      step.tools
        .filter((tool) => kit.registry.get(tool)?.risk === TOOL_RISKS.HIGH)
        .map((tool) => ({ step: step.name, tool })),
    );
  } finally {
    await kit.close();
  }
}

/** The human steps of `workflow` (their questions need a person). */
export function humanSteps(workflow: Pick<CompiledWorkflow, 'steps'>): string[] {
  return workflow.steps.filter((step) => step.kind === 'human').map((step) => step.name);
}

/** The refusal of a workflow whose human steps nobody could answer (see the module comment). */
export function unanswerableQuestions(steps: readonly string[]): CliError {
  return new CliError(
    `not started: ${steps.map((step) => `step '${step}'`).join(', ')} asks a person (a human step), and nobody could answer here (agentic run serves no HTTP API, and stdin is not a terminal to ask on). Run it from a terminal to be asked, or start it on the service (agentic serve, then answer with agentic approvals answer)`,
  );
}

/** The refusal of a workflow whose approvals nobody could answer (see the module comment). */
export function unanswerableApprovals(needs: readonly { step: string; tool: string }[]): CliError {
  const calls = needs.map((need) => `step '${need.step}' may call ${need.tool}`).join(', ');
  return new CliError(
    `not started: ${calls}, which needs an approval, and AGENTIC_APPROVAL_PROVIDER=http; nobody could answer it here (agentic run serves no HTTP API, and stdin is not a terminal to ask on). Run it from a terminal to be asked, start it on the service (agentic serve, then answer with agentic approvals), or set AGENTIC_APPROVAL_PROVIDER to policy, auto or deny`,
  );
}

/** Longest arguments shown in a question, in characters. */
const ARGUMENTS_SHOWN = 500;

export interface TerminalApproverOptions {
  approvals: Pick<RuntimeApprovals, 'pending' | 'answer' | 'respond'>;
  /** Where answers are read (a terminal's stdin). */
  input: NodeJS.ReadableStream;
  /** Writes a line of the conversation (stderr). */
  write: (line: string) => void;
}

export interface TerminalApprover {
  /** Feeds the run's events: asks on `approval_required`, notes decisions made otherwise. */
  onEvent(event: WorkflowEvent): void;
  /** Stops reading the input. */
  close(): void;
}

interface Question {
  callId: string;
  step: string;
  tool: string;
  expiresAt: string | undefined;
  answered: boolean;
  /** A human step's question (answered with a JSON object), not a tool call. */
  prompt?: string;
  schema?: Record<string, unknown>;
}

/**
 * Asks each waiting call on the terminal in turn: `y` or `yes` approves, anything else denies.
 * A call decided meanwhile (the approval timeout, a cancelled run) is said so and skipped.
 */
export function createTerminalApprover(options: TerminalApproverOptions): TerminalApprover {
  const queue: Question[] = [];
  let lines: Interface | undefined;

  const ask = (question: Question): void => {
    if (question.prompt !== undefined) {
      options.write(`  ? ${question.step}: ${question.prompt} (question ${question.callId})`);
      options.write(`    answer with a JSON object matching: ${JSON.stringify(question.schema)}`);
      if (question.expiresAt !== undefined) options.write(`    times out at ${question.expiresAt}`);
      return;
    }
    const entry = options.approvals.pending().find((call) => call.callId === question.callId);
    options.write(
      `  ? ${question.step}: ${question.tool} needs your approval (call ${question.callId})`,
    );
    if (entry !== undefined) {
      const shown = JSON.stringify(entry.args);
      options.write(
        `    arguments: ${shown.length > ARGUMENTS_SHOWN ? `${shown.slice(0, ARGUMENTS_SHOWN)}…` : shown}`,
      );
    }
    const deadline =
      question.expiresAt ??
      (entry?.expiresAt === undefined ? undefined : new Date(entry.expiresAt).toISOString());
    if (deadline !== undefined) {
      options.write(
        `    denied at ${deadline} without an answer (AGENTIC_APPROVAL_TIMEOUT_SECONDS)`,
      );
    }
    options.write('  approve? [y/N]');
  };

  const onLine = (line: string): void => {
    // Only the call asked last is answered; a line typed before the next question is dropped.
    const question = queue[0];
    if (question === undefined || question.answered) return;
    if (question.prompt !== undefined) {
      let answer: unknown;
      try {
        answer = JSON.parse(line);
      } catch {
        options.write('    not JSON: answer with a JSON object, on one line');
        return;
      }
      question.answered = true;
      const outcome = options.approvals.respond(question.callId, answer);
      if (typeof outcome === 'object') {
        question.answered = false;
        options.write(`    ${outcome.invalid}: try again`);
      }
      return;
    }
    question.answered = true;
    const approve = /^\s*y(es)?\s*$/i.test(line);
    options.approvals.answer(
      question.callId,
      approve,
      approve ? 'approved at the terminal' : 'denied at the terminal',
    );
  };

  return {
    onEvent(event) {
      if (event.type === 'approval_required') {
        const question: Question = {
          callId: event.call_id,
          step: event.step,
          tool: event.tool_name,
          expiresAt: event.expires_at,
          answered: false,
          ...(event.kind === 'input'
            ? { prompt: event.prompt ?? '', schema: event.schema ?? {} }
            : {}),
        };
        queue.push(question);
        if (lines === undefined) {
          lines = createInterface({ input: options.input, terminal: false });
          lines.on('line', onLine);
        }
        if (queue.length === 1) ask(question);
        return;
      }
      if (event.type !== 'approval_decision') return;
      const index = queue.findIndex((entry) => entry.callId === event.call_id);
      if (index === -1) return;
      const [question] = queue.splice(index, 1);
      const outcome =
        question?.prompt !== undefined
          ? event.decision === 'approve'
            ? 'answered'
            : 'not answered'
          : event.decision === 'approve'
            ? 'approved'
            : 'denied';
      options.write(
        question?.answered === true
          ? `    ${outcome}`
          : `    ${question?.tool ?? event.tool_name} ${outcome} without your answer: ${event.reason}`,
      );
      const next = queue[0];
      if (index === 0 && next !== undefined) ask(next);
    },
    close() {
      lines?.close();
    },
  };
}
