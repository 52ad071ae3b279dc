/**
 * A span per tool call: wraps the runtime's {@link ToolKit} so that every call a step makes is
 * a span under the step's running attempt, with the tool name and the outcome (`success`,
 * `denied` by the approval gate, or `error`). Arguments and results are attributes only when
 * sensitive data is allowed.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import { ToolError, type ToolKit } from '../tools/index.js';
import { ATTR, setSensitive } from './attributes.js';

export interface ToolSpanOptions {
  tracer: Tracer;
  sensitive: boolean;
  /** The parent of a call made by a run's step (its attempt's span). */
  parentOf: (runId: string, step: string) => Context | undefined;
}

/** `kit` with a span around each call (the registry, memory and close are the kit's own). */
export function traceToolCalls(kit: ToolKit, options: ToolSpanOptions): ToolKit {
  const { tracer, sensitive, parentOf } = options;
  return {
    registry: kit.registry,
    mcp: kit.mcp,
    memory: kit.memory,
    close: () => kit.close(),
    call: async (name, args, caller, signal, onApproval) => {
      const span = tracer.startSpan(
        `execute_tool ${name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR.GEN_AI_OPERATION]: 'execute_tool',
            [ATTR.GEN_AI_TOOL_NAME]: name,
            [ATTR.RUN_ID]: caller.runId,
            [ATTR.WORKFLOW]: caller.workflow,
            [ATTR.STEP]: caller.step,
          },
        },
        parentOf(caller.runId, caller.step) ?? ROOT_CONTEXT,
      );
      setSensitive(span, sensitive, ATTR.TOOL_ARGUMENTS, args);
      try {
        const result = await kit.call(name, args, caller, signal, onApproval);
        span.setAttribute(ATTR.TOOL_OUTCOME, 'success');
        setSensitive(span, sensitive, ATTR.TOOL_RESULT, result);
        return result;
      } catch (error) {
        const outcome =
          error instanceof ToolError && error.operation === 'approval' ? 'denied' : 'error';
        span.setAttribute(ATTR.TOOL_OUTCOME, outcome);
        span.setAttribute(ATTR.ERROR_TYPE, outcome);
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : 'failed',
        });
        throw error;
      } finally {
        span.end();
      }
    },
  };
}
