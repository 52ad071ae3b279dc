/**
 * A span per model call: wraps the runtime's {@link LlmClient} so that every `complete` of a
 * step is a client span under the step's running attempt, with the provider, the models asked
 * for and answering, tokens, and the outcome (`success` or the error kind). The prompt and the
 * answer are attributes only when sensitive data is allowed.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  LlmError,
  parseModelId,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
} from '../llm/index.js';
import { ATTR, defined, setSensitive } from './attributes.js';

export interface ModelSpanOptions {
  tracer: Tracer;
  sensitive: boolean;
  /** The parent of a call made by a run's step (its attempt's span). */
  parentOf: (runId: string, step: string) => Context | undefined;
}

/** `client` with a span around each call. */
export function traceModelCalls(client: LlmClient, options: ModelSpanOptions): LlmClient {
  const { tracer, sensitive, parentOf } = options;
  return {
    complete(request: LlmRequest): Promise<LlmResponse> {
      const caller = request.caller;
      const parent = caller === undefined ? undefined : parentOf(caller.runId, caller.step);
      const asked = request.model ?? `tier${request.tier}`;
      const span = tracer.startSpan(
        `chat ${asked}`,
        {
          kind: SpanKind.CLIENT,
          attributes: defined({
            [ATTR.GEN_AI_OPERATION]: 'chat',
            [ATTR.GEN_AI_REQUEST_MODEL]: request.model,
            [ATTR.TIER]: request.tier,
            [ATTR.RUN_ID]: caller?.runId,
            [ATTR.STEP]: caller?.step,
          }),
        },
        parent ?? ROOT_CONTEXT,
      );
      setSensitive(span, sensitive, ATTR.SYSTEM_PROMPT, request.system);
      setSensitive(
        span,
        sensitive,
        ATTR.PROMPT,
        request.messages === undefined ? request.prompt : request.messages,
      );
      let call: Promise<LlmResponse>;
      try {
        call = client.complete(request);
      } catch (error) {
        failed(span, error);
        throw error;
      }
      return call.then(
        (response) => {
          answered(span, sensitive, response);
          return response;
        },
        (error: unknown) => {
          failed(span, error);
          throw error;
        },
      );
    },
  };
}

function answered(span: Span, sensitive: boolean, response: LlmResponse): void {
  span.updateName(`chat ${response.model}`);
  span.setAttributes(
    defined({
      [ATTR.GEN_AI_PROVIDER]: parseModelId(response.model)?.provider ?? response.model,
      [ATTR.GEN_AI_RESPONSE_MODEL]: response.model,
      [ATTR.GEN_AI_INPUT_TOKENS]: response.tokensUsed.input,
      [ATTR.GEN_AI_OUTPUT_TOKENS]: response.tokensUsed.output,
      [ATTR.GEN_AI_FINISH_REASON]:
        response.finishReason === undefined ? undefined : [response.finishReason],
      [ATTR.STATUS]: 'success',
    }),
  );
  setSensitive(span, sensitive, ATTR.COMPLETION, response.text);
  span.end();
}

/** The error kind of an LLM failure (`rate_limited`, ...), else `error`; its message is scrubbed. */
function failed(span: Span, error: unknown): void {
  const kind = error instanceof LlmError ? error.kind : 'error';
  const attributes = defined({
    [ATTR.STATUS]: kind,
    [ATTR.ERROR_TYPE]: kind,
    [ATTR.GEN_AI_PROVIDER]: error instanceof LlmError ? error.provider : undefined,
  });
  span.setAttributes(attributes);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : 'failed',
  });
  span.end();
}
