/**
 * `GET /api/models/probe` and `POST /api/chat` (spec endpoints 4 and 5). The probe asks every
 * configured provider for its model list; chat streams one completion as SSE frames: `route`
 * (tier requests, each candidate tried), `token` per chunk, then `done` or one terminal `error`
 * (a provider failure is an HTTP 200 stream ending in an error frame). A client that goes away
 * aborts the upstream request at once. The handler returns when the stream has ended, so the
 * request's span and duration cover the whole stream.
 */
import type Router from '@koa/router';
import type { Tracer } from '@opentelemetry/api';
import { errorMessage, isAppError } from '../../errors.js';
import type { ChatStreamFrame } from '../../generated/api/chat-frame.js';
import type { ModelProbeResponse } from '../../generated/api/model-probe-response.js';
import { LlmError } from '../../llm/llm-error.js';
import type { ChatMessage, LlmClient, LlmResponse } from '../../llm/types.js';
import { usageCost, usageRecord } from '../../llm/usage-record.js';
import type { Logger } from '../../log.js';
import { traceModelCalls } from '../../tracing/model-spans.js';
import { traceContextOf } from '../middleware/tracing.js';
import { parseChatRequest } from '../request-validation.js';
import { SseWriter } from '../sse.js';

export interface ModelRouteDeps {
  /** Runs the provider probe (aborted when the client goes away). */
  probe: (signal: AbortSignal) => Promise<ModelProbeResponse>;
  /** The client chat goes through: the tier router, or the placeholder one in no-LLM mode. */
  client: LlmClient;
  logger: Logger;
  /**
   * Traces chat's model calls: each provider call (fallbacks included) is a span under the
   * request's span, prompts and answers in it only when `sensitive`. @default off
   */
  tracing?: { tracer: Tracer; sensitive: boolean };
}

export function registerModelRoutes(router: Router, deps: ModelRouteDeps): void {
  router.get('/api/models/probe', async (ctx) => {
    const controller = new AbortController();
    const onClose = (): void => {
      if (!ctx.res.writableFinished) controller.abort(new Error('client disconnected'));
    };
    ctx.res.once('close', onClose);
    try {
      ctx.body = await deps.probe(controller.signal);
    } finally {
      ctx.res.off('close', onClose);
    }
  });

  router.post('/api/chat', async (ctx) => {
    const body = parseChatRequest(ctx.request.body);
    const { res } = ctx;
    const controller = new AbortController();
    const writer = new SseWriter(res);
    const onClientGone = (): void => {
      if (!res.writableFinished) controller.abort(new Error('chat client disconnected'));
    };
    res.once('close', onClientGone);
    ctx.respond = false;
    writer.open();
    const send = (frame: ChatStreamFrame): void => {
      if (!writer.send(frame)) controller.abort(new Error('chat client not reading'));
    };
    const system = body.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const messages: ChatMessage[] = body.messages
      .filter((m) => m.role !== 'system')
      .map((m) => ({ role: m.role, content: m.content }));
    const parent = deps.tracing === undefined ? undefined : traceContextOf(ctx);
    const client =
      deps.tracing === undefined || parent === undefined
        ? deps.client
        : traceModelCalls(deps.client, { ...deps.tracing, parentOf: () => parent });
    let streamed = false;
    try {
      const response: LlmResponse = await client.complete({
        tier: body.tier ?? 0,
        ...(body.model === undefined ? {} : { model: body.model }),
        system,
        prompt: '',
        messages,
        ...(body.temperature === undefined ? {} : { temperature: body.temperature }),
        signal: controller.signal,
        onDelta: (delta) => {
          streamed = true;
          send({ type: 'token', delta });
        },
        onRoute: (model) => {
          if (body.tier !== undefined) send({ type: 'route', requested_tier: body.tier, model });
        },
      });
      // Clients that do not stream (the no-LLM placeholder) give the whole text at once.
      if (!streamed && response.text !== '') send({ type: 'token', delta: response.text });
      send({
        type: 'done',
        model: response.model,
        usage: usageRecord(response.tokensUsed),
        cost_usd: usageCost(response.tokensUsed),
        finish_reason: response.finishReason ?? 'stop',
      });
    } catch (error) {
      if (!controller.signal.aborted) {
        send({ type: 'error', error: errorMessage(error), kind: errorKind(error) });
        deps.logger.info({ err: errorMessage(error) }, 'chat failed');
      }
    } finally {
      res.off('close', onClientGone);
      writer.end();
    }
  });
}

function errorKind(error: unknown): string {
  if (error instanceof LlmError) return error.kind;
  if (isAppError(error) && error.code === 'llm_not_configured') return 'not_configured';
  return 'transient';
}
