/**
 * A span per model call: wraps an {@link LlmClient} so that every provider call it makes is a
 * client span under the caller's context (a step's running attempt, a chat request's span),
 * with the provider, the model asked for and the one answering, tokens, and the outcome
 * (`success` or the error kind). The tier router reports each provider call (each candidate it
 * falls back to, and a call repeated after a Retry-After wait) through `onAttempt`, so each
 * gets its own span; a client that reports none (the no-LLM placeholder, an app's own client)
 * gets one span for the whole call. The prompt and the answer are attributes only when
 * sensitive data is allowed.
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
  type LlmAttemptOutcome,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
} from '../llm/index.js';
import { ATTR, defined, setSensitive } from './attributes.js';

export interface ModelSpanOptions {
  tracer: Tracer;
  sensitive: boolean;
  /** The parent of a call's spans (a step's running attempt, a chat request's span). */
  parentOf: (request: LlmRequest) => Context | undefined;
}

/** `client` with a span around each provider call (or around each call, see the module). */
export function traceModelCalls(client: LlmClient, options: ModelSpanOptions): LlmClient {
  return {
    complete(request: LlmRequest): Promise<LlmResponse> {
      const parent = options.parentOf(request) ?? ROOT_CONTEXT;
      const startedAt = performance.now();
      let attempts = 0;
      const onAttempt = (model: string): ((outcome: LlmAttemptOutcome) => void) => {
        attempts += 1;
        const span = startSpan(options, request, parent, model);
        const outer = request.onAttempt?.(model);
        return (outcome) => {
          outer?.(outcome);
          settle(span, options.sensitive, outcome);
        };
      };
      // No provider call was reported: the call itself is the span, started when it was.
      const whole = (outcome: LlmAttemptOutcome): void => {
        if (attempts > 0) return;
        settle(startSpan(options, request, parent, request.model, startedAt), options.sensitive, {
          ...outcome,
          endTime: performance.now(),
        });
      };
      let call: Promise<LlmResponse>;
      try {
        call = client.complete({ ...request, onAttempt });
      } catch (error) {
        whole({ error });
        throw error;
      }
      return call.then(
        (response) => {
          whole({ response });
          return response;
        },
        (error: unknown) => {
          whole({ error });
          throw error;
        },
      );
    },
  };
}

/** A span for a call to `model` (a candidate's `provider:model` id, or the pinned model). */
function startSpan(
  options: ModelSpanOptions,
  request: LlmRequest,
  parent: Context,
  model: string | undefined,
  startTime?: number,
): Span {
  const { sensitive } = options;
  const caller = request.caller;
  const span = options.tracer.startSpan(
    `chat ${model ?? `tier${request.tier}`}`,
    {
      kind: SpanKind.CLIENT,
      ...(startTime === undefined ? {} : { startTime }),
      attributes: defined({
        [ATTR.GEN_AI_OPERATION]: 'chat',
        [ATTR.GEN_AI_REQUEST_MODEL]: model,
        [ATTR.GEN_AI_PROVIDER]: model === undefined ? undefined : parseModelId(model)?.provider,
        [ATTR.TIER]: request.tier,
        [ATTR.RUN_ID]: caller?.runId,
        [ATTR.STEP]: caller?.step,
      }),
    },
    parent,
  );
  setSensitive(span, sensitive, ATTR.SYSTEM_PROMPT, request.system);
  setSensitive(
    span,
    sensitive,
    ATTR.PROMPT,
    request.messages === undefined ? request.prompt : request.messages,
  );
  return span;
}

/** Ends `span` with the call's answer or error (at `endTime`, on the clock of a given start). */
function settle(
  span: Span,
  sensitive: boolean,
  outcome: LlmAttemptOutcome & { endTime?: number },
): void {
  if ('response' in outcome) answered(span, sensitive, outcome.response);
  else failed(span, outcome.error);
  span.end(outcome.endTime);
}

function answered(span: Span, sensitive: boolean, response: LlmResponse): void {
  span.updateName(`chat ${response.model}`);
  span.setAttributes(
    defined({
      [ATTR.GEN_AI_PROVIDER]: parseModelId(response.model)?.provider ?? response.model,
      [ATTR.GEN_AI_RESPONSE_MODEL]: response.model,
      [ATTR.GEN_AI_INPUT_TOKENS]: response.tokensUsed.input,
      [ATTR.GEN_AI_OUTPUT_TOKENS]: response.tokensUsed.output,
      [ATTR.CACHED_INPUT_TOKENS]: response.tokensUsed.cached,
      // Absent when unknown (no price): an attribute cannot be null, and 0 would be a guess.
      [ATTR.COST_USD]: response.tokensUsed.costUsd ?? undefined,
      [ATTR.GEN_AI_FINISH_REASON]:
        response.finishReason === undefined ? undefined : [response.finishReason],
      [ATTR.STATUS]: 'success',
    }),
  );
  setSensitive(span, sensitive, ATTR.COMPLETION, response.text);
}

/** The error kind of an LLM failure (`rate_limited`, ...), else `error`; its message is scrubbed. */
function failed(span: Span, error: unknown): void {
  const kind = error instanceof LlmError ? error.kind : 'error';
  span.setAttributes(
    defined({
      [ATTR.STATUS]: kind,
      [ATTR.ERROR_TYPE]: kind,
      // A provider's own error names it; the router's summary of a whole call names none ('').
      [ATTR.GEN_AI_PROVIDER]:
        error instanceof LlmError && error.provider !== '' ? error.provider : undefined,
    }),
  );
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : 'failed',
  });
}
